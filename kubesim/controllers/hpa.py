"""HorizontalPodAutoscaler controller (autoscaling/v1: CPU utilization of requests).

Every 15 simulated seconds, per HPA, as the real controller does it: read the target's scale (a
Deployment, StatefulSet or ReplicaSet), average the CPU use of its ready pods (the same usage model
``kubectl top`` shows) as a percentage of their requests, and recommend
``ceil(ready pods × utilization / target)`` unless the ratio is within the 10 % tolerance. Scaling up
is limited to max(double, +4 pods) per period; scaling down takes the highest recommendation of the
last five minutes (the default stabilization window); the result is clamped to min/max replicas.
Replicas outside min..max are brought into range first, a target scaled to zero is left alone, and
missing CPU requests or metrics leave the scale as it is and say so in an event, like the real one.
"""

from __future__ import annotations

import math
from collections import deque

from .. import objects
from ..resources import HORIZONTALPODAUTOSCALERS as HPAS
from ..resources import PODS
from ..store import Obj
from ..workloads.metrics import container_usage
from ..workloads.units import parse_cpu_millis
from .common import (being_deleted, is_pod_ready, now_ts, pod_phase, resolve_kind, selector_matches,
                     spec_replicas, write_status)

COMPONENT = "horizontal-pod-autoscaler"
SYNC_SECONDS = 15.0
TOLERANCE = 0.1
DEFAULT_TARGET = 80
DOWNSCALE_WINDOW = 300.0


class HorizontalPodAutoscalerController:
    name = COMPONENT

    def __init__(self) -> None:
        self._next: dict[str, dict[str, float]] = {}  # namespace -> hpa uid -> sim time of its next sync
        self._recommendations: dict[str, deque[tuple[float, int]]] = {}  # hpa uid -> (time, replicas)

    def reconcile(self, cluster, namespace: str) -> None:
        if not namespace:
            return
        now = cluster.now_s()
        hpas = cluster.store.list(HPAS, namespace)
        schedule = self._next.setdefault(namespace, {})
        for gone in set(schedule) - {h["metadata"]["uid"] for h in hpas}:
            del schedule[gone]
            self._recommendations.pop(gone, None)
        for hpa in hpas:
            uid = hpa["metadata"]["uid"]
            due = schedule.get(uid, now)
            if now + 1e-6 >= due:
                self._sync(cluster, hpa, now)
                due = schedule[uid] = now + SYNC_SECONDS
            cluster.wake_at(namespace, due)
        if not schedule:
            del self._next[namespace]

    def _sync(self, cluster, hpa: Obj, now: float) -> None:
        spec = hpa.get("spec") or {}
        ref = spec.get("scaleTargetRef") or {}
        rt = resolve_kind(str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""))
        status = dict(hpa.get("status") or {}, observedGeneration=hpa["metadata"].get("generation", 1))
        if rt is None or "scale" not in rt.subresources:
            group = str(ref.get("apiVersion") or "").rpartition("/")[0]
            self._warn(cluster, hpa, "FailedGetScale", f'no matches for kind "{ref.get("kind")}" in group "{group}"')
            return write_status(cluster, HPAS, hpa, status)
        target = cluster.store.find(rt, hpa["metadata"]["namespace"], str(ref.get("name") or ""))
        if target is None or being_deleted(target):
            scale = f"{rt.plural}/scale" + (f".{rt.group}" if rt.group else "")
            self._warn(cluster, hpa, "FailedGetScale", f'{scale} "{ref.get("name")}" not found')
            return write_status(cluster, HPAS, hpa, status)
        current = spec_replicas(target)
        status["currentReplicas"] = current
        if current == 0:  # scaled to zero by hand: autoscaling is off until someone scales it up
            status["desiredReplicas"] = 0
            return write_status(cluster, HPAS, hpa, status)
        desired = _clamp(spec, current)
        if desired == current:  # within min..max: the metrics decide
            desired, utilization, problem = self._recommend(cluster, hpa, target, current, now)
            if problem:
                self._warn(cluster, hpa, "FailedGetResourceMetric", problem)
                status.pop("currentCPUUtilizationPercentage", None)
                status["desiredReplicas"] = current
                return write_status(cluster, HPAS, hpa, status)
            status["currentCPUUtilizationPercentage"] = utilization
        status["desiredReplicas"] = desired
        if desired != current:
            scaled = dict(target, spec=dict(target["spec"], replicas=desired))
            cluster.store.update(rt, objects.prepare(rt, scaled, target), check_rv=False)
            cluster.events.record(hpa, "Normal", "SuccessfulRescale",
                                  f"New size: {desired}; reason: {_rescale_reason(spec, current, desired)}", COMPONENT)
            status["lastScaleTime"] = now_ts(cluster)
        write_status(cluster, HPAS, hpa, status)

    def _recommend(self, cluster, hpa: Obj, target: Obj, current: int, now: float) -> tuple[int, int, str]:
        """(desired replicas, utilization %, problem) for one sync."""
        spec = hpa.get("spec") or {}
        selector = ((target.get("spec") or {}).get("selector")) or {}
        pods = [p for p in cluster.store.list(PODS, hpa["metadata"]["namespace"])
                if selector_matches(selector, p["metadata"].get("labels")) and not being_deleted(p)
                and pod_phase(p) not in ("Failed", "Succeeded")]
        usage = requested = 0.0
        ready = 0
        for pod in pods:
            request = _cpu_request(pod)
            if request is None:
                return current, 0, (f"failed to get cpu utilization: missing request for cpu in pod "
                                    f"{pod['metadata']['namespace']}/{pod['metadata']['name']}")
            if not is_pod_ready(pod):
                continue
            pr = cluster.runtime.get(pod["metadata"]["uid"])
            if pr is None:
                continue
            usage += sum(container_usage(cluster, c, pr.uid, now)[0] for c in pr.containers)
            requested += request
            ready += 1
        if not ready or not requested:
            return current, 0, "failed to get cpu utilization: did not receive metrics for targeted pods"
        utilization = int(round(100 * usage / requested))
        ratio = utilization / int(spec.get("targetCPUUtilizationPercentage") or DEFAULT_TARGET)
        wanted = current if abs(ratio - 1.0) <= TOLERANCE else int(math.ceil(ratio * ready))
        wanted = min(wanted, max(2 * current, current + 4)) if wanted > current else wanted
        history = self._recommendations.setdefault(hpa["metadata"]["uid"], deque())
        history.append((now, wanted))
        while history and history[0][0] < now - DOWNSCALE_WINDOW:
            history.popleft()
        if wanted < current:
            wanted = min(current, max(r for _, r in history))  # stabilized: the highest recent recommendation
        return _clamp(spec, wanted), utilization, ""

    @staticmethod
    def _warn(cluster, hpa: Obj, reason: str, message: str) -> None:
        cluster.events.record(hpa, "Warning", reason, message, COMPONENT)


def _rescale_reason(spec: dict, current: int, desired: int) -> str:
    if current < int(spec.get("minReplicas") or 1):
        return "Current number of replicas below Spec.MinReplicas"
    if current > int(spec.get("maxReplicas") or current):
        return "Current number of replicas above Spec.MaxReplicas"
    if desired > current:
        return "cpu resource utilization (percentage of request) above target"
    return "All metrics below target"


def _clamp(spec: dict, replicas: int) -> int:
    low = int(spec.get("minReplicas") or 1)
    high = int(spec.get("maxReplicas") or low)
    return max(low, min(high, replicas))


def _cpu_request(pod: Obj) -> float | None:
    """Sum of the containers' CPU requests in millicores; None if any container has none."""
    total = 0.0
    for container in (pod.get("spec") or {}).get("containers") or []:
        cpu = (((container or {}).get("resources") or {}).get("requests") or {}).get("cpu")
        if cpu is None:
            return None
        total += parse_cpu_millis(cpu)
    return total
