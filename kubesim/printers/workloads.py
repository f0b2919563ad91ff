"""Tables for the workload controllers (apps/v1, batch/v1, autoscaling) as the apiserver prints them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .common import (AGE, CONTAINERS, IMAGES, NAME, Obj, Printer, age, as_dict, as_int, as_list, bool_cell,
                     col, container_cells, dig, format_labels, format_selector, name, parse_time,
                     human_duration, selector_string, since, template_containers, wide)

SELECTOR_DOC = "A label query over pods that should match the replica count."


def _replicas(obj: Obj) -> int:
    """spec.replicas as the defaulted internal object sees it (1 when unset)."""
    value = dig(obj, "spec", "replicas")
    return 1 if value is None else as_int(value)


def _status(obj: Obj, field: str) -> int:
    return as_int(dig(obj, "status", field))


# -- deployments -----------------------------------------------------------------------------
def _deployment(obj: Obj, now: datetime) -> list[Any]:
    names, images = container_cells(template_containers(obj))
    return [name(obj), f"{_status(obj, 'readyReplicas')}/{_replicas(obj)}", _status(obj, "updatedReplicas"),
            _status(obj, "availableReplicas"), age(obj, now), names, images,
            selector_string(dig(obj, "spec", "selector"))]


DEPLOYMENT = Printer((
    NAME,
    col("Ready", "Number of the pod with ready state"),
    col("Up-to-date", "Total number of non-terminated pods targeted by this deployment that have the desired "
                      "template spec."),
    col("Available", "Total number of available pods (ready for at least minReadySeconds) targeted by this "
                     "deployment."),
    AGE, CONTAINERS, IMAGES,
    wide("Selector", "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the "
                     "ones affected by this deployment."),
), _deployment)


# -- replicasets and replication controllers -------------------------------------------------
def _replicaset(obj: Obj, now: datetime) -> list[Any]:
    names, images = container_cells(template_containers(obj))
    return [name(obj), _replicas(obj), _status(obj, "replicas"), _status(obj, "readyReplicas"), age(obj, now),
            names, images, format_selector(dig(obj, "spec", "selector"))]


def _replication_controller(obj: Obj, now: datetime) -> list[Any]:
    names, images = container_cells(template_containers(obj))
    return [name(obj), _replicas(obj), _status(obj, "replicas"), _status(obj, "readyReplicas"), age(obj, now),
            names, images, format_labels(dig(obj, "spec", "selector"))]


_RS_COLUMNS = (
    NAME,
    col("Desired", "Replicas is the number of desired replicas.", "integer"),
    col("Current", "Replicas is the most recently observed number of replicas.", "integer"),
    col("Ready", "The number of ready replicas for this replica set.", "integer"),
    AGE, CONTAINERS, IMAGES,
    wide("Selector", SELECTOR_DOC),
)
REPLICASET = Printer(_RS_COLUMNS, _replicaset)
REPLICATION_CONTROLLER = Printer(_RS_COLUMNS, _replication_controller)


# -- statefulsets and daemonsets -------------------------------------------------------------
def _statefulset(obj: Obj, now: datetime) -> list[Any]:
    names, images = container_cells(template_containers(obj))
    return [name(obj), f"{_status(obj, 'readyReplicas')}/{_replicas(obj)}", age(obj, now), names, images]


STATEFULSET = Printer((NAME, col("Ready", "Number of the pod with ready state"), AGE, CONTAINERS, IMAGES),
                      _statefulset)


def _daemonset(obj: Obj, now: datetime) -> list[Any]:
    names, images = container_cells(template_containers(obj))
    return [name(obj), _status(obj, "desiredNumberScheduled"), _status(obj, "currentNumberScheduled"),
            _status(obj, "numberReady"), _status(obj, "updatedNumberScheduled"), _status(obj, "numberAvailable"),
            format_labels(dig(obj, "spec", "template", "spec", "nodeSelector")), age(obj, now),
            names, images, format_selector(dig(obj, "spec", "selector"))]


DAEMONSET = Printer((
    NAME,
    col("Desired", "The total number of nodes that should be running the daemon pod.", "integer"),
    col("Current", "The number of nodes that are running at least 1 daemon pod.", "integer"),
    col("Ready", "The number of nodes that should be running the daemon pod and have one or more of the "
                 "daemon pod running and ready.", "integer"),
    col("Up-to-date", "The total number of nodes that are running updated daemon pod", "integer"),
    col("Available", "The number of nodes that should be running the daemon pod and have one or more of the "
                     "daemon pod running and available.", "integer"),
    col("Node Selector", "NodeSelector is a selector which must be true for the pod to fit on a node."),
    AGE, CONTAINERS, IMAGES,
    wide("Selector", "A label query over pods that are managed by the daemon set."),
), _daemonset)


# -- jobs and cronjobs -----------------------------------------------------------------------
def _job_completions(obj: Obj) -> str:
    succeeded = _status(obj, "succeeded")
    completions = dig(obj, "spec", "completions")
    if completions is not None:
        return f"{succeeded}/{as_int(completions)}"
    parallelism = as_int(dig(obj, "spec", "parallelism"))
    if parallelism > 1:
        return f"{succeeded}/1 of {parallelism}"
    return f"{succeeded}/1"


def _job_duration(obj: Obj, now: datetime) -> str:
    start = parse_time(dig(obj, "status", "startTime"))
    if start is None:
        return ""
    end = parse_time(dig(obj, "status", "completionTime"))
    return human_duration(((end or now) - start).total_seconds())


def _job(obj: Obj, now: datetime) -> list[Any]:
    names, images = container_cells(template_containers(obj))
    return [name(obj), _job_completions(obj), _job_duration(obj, now), age(obj, now), names, images,
            format_selector(dig(obj, "spec", "selector"))]


JOB = Printer((
    NAME,
    col("Completions", "The number of pods which reached phase Succeeded."),
    col("Duration", "Time required to complete the job."),
    AGE, CONTAINERS, IMAGES,
    wide("Selector", "A label query over pods that should match the pod count."),
), _job)


def _cronjob(obj: Obj, now: datetime) -> list[Any]:
    job_template = as_dict(dig(obj, "spec", "jobTemplate"))
    names, images = container_cells(template_containers(job_template))
    last = dig(obj, "status", "lastScheduleTime")
    suspend = dig(obj, "spec", "suspend")
    return [name(obj), str(dig(obj, "spec", "schedule", default="")),
            bool_cell(False if suspend is None else suspend),
            len(as_list(dig(obj, "status", "active"))), since(last, now) if last else "<none>", age(obj, now),
            names, images, format_selector(dig(job_template, "spec", "selector"))]


CRONJOB = Printer((
    NAME,
    col("Schedule", "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
    col("Suspend", "This flag tells the controller to suspend subsequent executions, it does not apply to "
                   "already started executions.  Defaults to false.", "boolean"),
    col("Active", "A list of pointers to currently running jobs.", "integer"),
    col("Last Schedule", "Information when was the last time the job was successfully scheduled."),
    AGE, CONTAINERS, IMAGES,
    wide("Selector", "A label query over pods that should match the pod count."),
), _cronjob)


# -- horizontal pod autoscalers --------------------------------------------------------------
def _hpa_targets(obj: Obj) -> str:
    spec = as_dict(obj.get("spec"))
    status = as_dict(obj.get("status"))
    if "targetCPUUtilizationPercentage" in spec:  # autoscaling/v1
        target = f"{as_int(spec['targetCPUUtilizationPercentage'])}%"
        current = status.get("currentCPUUtilizationPercentage")
        return f"cpu: {'<unknown>' if current is None else f'{as_int(current)}%'}/{target}"
    metrics = [m for m in as_list(spec.get("metrics")) if isinstance(m, dict)]
    if not metrics:
        return "<none>"
    current_metrics = as_list(status.get("currentMetrics"))
    parts = []
    for i, m in enumerate(metrics):
        res = as_dict(m.get("resource"))
        if m.get("type") != "Resource" or not res:
            parts.append("<unknown type>" if m.get("type") not in ("Pods", "Object", "External",
                                                                    "ContainerResource") else "<unknown>")
            continue
        target = as_dict(res.get("target"))
        cur = as_dict(dig(current_metrics[i] if i < len(current_metrics) else {}, "resource", "current"))
        if "averageValue" in target:
            parts.append(f"{res.get('name')}: {cur.get('averageValue', '<unknown>')}/{target['averageValue']}")
        else:
            current = f"{as_int(cur['averageUtilization'])}%" if "averageUtilization" in cur else "<unknown>"
            goal = f"{as_int(target['averageUtilization'])}%" if "averageUtilization" in target else "<auto>"
            parts.append(f"{res.get('name')}: {current}/{goal}")
    if len(parts) > 2:
        return ", ".join(parts[:2]) + f" + {len(parts) - 2} more..."
    return ", ".join(parts)


def _hpa(obj: Obj, now: datetime) -> list[Any]:
    ref = as_dict(dig(obj, "spec", "scaleTargetRef"))
    min_replicas = dig(obj, "spec", "minReplicas")
    return [name(obj), f"{ref.get('kind', '')}/{ref.get('name', '')}", _hpa_targets(obj),
            "<unset>" if min_replicas is None else str(as_int(min_replicas)),
            as_int(dig(obj, "spec", "maxReplicas")), _status(obj, "currentReplicas"), age(obj, now)]


HPA = Printer((
    NAME,
    col("Reference", "reference to scaled resource; horizontal pod autoscaler will learn the current resource "
                     "consumption and will set the desired number of pods by using its Scale subresource."),
    col("Targets", "the specifications for which to use to calculate the desired replica count."),
    col("MinPods", "the lower limit for the number of replicas to which the autoscaler can scale down."),
    col("MaxPods", "the upper limit for the number of replicas to which the autoscaler can scale up."),
    col("Replicas", "current number of replicas of pods managed by this autoscaler."),
    AGE,
), _hpa)
