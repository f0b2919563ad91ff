"""Cluster metrics as kube-state-metrics and the kubelet's cAdvisor would expose them.

Object state (pod phase, readiness, restarts, waiting and last-terminated reasons, Deployment,
StatefulSet, DaemonSet and HPA replicas, Endpoints addresses) comes from the stored objects; container
CPU and memory come from the workload machinery's usage model, so ``kubectl top`` and PromQL agree.
"""

from __future__ import annotations

from typing import Any

from ..resources import DAEMONSETS, DEPLOYMENTS, ENDPOINTS, HORIZONTALPODAUTOSCALERS, PODS, STATEFULSETS
from ..workloads.metrics import container_usage
from ..workloads.units import parse_cpu_millis, parse_memory_bytes
from .tsdb import Labels

PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
KSM = "kube-state-metrics"
Samples = dict[str, list[tuple[Labels, float]]]


def _lb(name: str, **labels: str) -> Labels:
    labels["__name__"] = name
    return tuple(sorted((k, v) for k, v in labels.items() if v != ""))


class KubeMetrics:
    def __init__(self) -> None:
        self.cpu_seconds: dict[tuple[str, str], float] = {}
        # Stored objects are never changed in place, so rows derived from one stay valid while it is stored.
        self._rows: dict[int, tuple[dict, list[tuple[Labels, float]]]] = {}
        self._container_labels: dict[tuple[str, str], tuple[Labels, Labels, Labels | None]] = {}

    def _cached(self, obj: dict, build: Any) -> list[tuple[Labels, float]]:
        hit = self._rows.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        rows: list[tuple[Labels, float]] = []
        build(obj, rows)
        self._rows[id(obj)] = (obj, rows)
        return rows

    def collect(self, cluster: Any, now: float, dt: float, out: Samples) -> None:
        seen: set[tuple[str, str]] = set()
        live: set[int] = set()
        for kind, build in ((PODS, self._pod_state), (DEPLOYMENTS, self._deployment), (STATEFULSETS, self._statefulset),
                            (DAEMONSETS, self._daemonset), (HORIZONTALPODAUTOSCALERS, self._hpa),
                            (ENDPOINTS, self._endpoints)):
            for obj in cluster.store.list(kind):
                live.add(id(obj))
                out.setdefault(obj["metadata"].get("namespace", ""), []).extend(self._cached(obj, build))
                if kind is PODS:
                    self._usage(cluster, obj, now, dt, out, seen)
        for key in [k for k in self._rows if k not in live]:
            del self._rows[key]
        for key in [k for k in self.cpu_seconds if k not in seen]:
            del self.cpu_seconds[key]
            self._container_labels.pop(key, None)

    @staticmethod
    def _endpoints(ep: dict, rows: list) -> None:
        m = ep["metadata"]
        ready = sum(len(s.get("addresses") or []) for s in ep.get("subsets") or [])
        unready = sum(len(s.get("notReadyAddresses") or []) for s in ep.get("subsets") or [])
        ns = m.get("namespace", "")
        rows.append((_lb("kube_endpoint_address_available", job=KSM, namespace=ns, endpoint=m["name"]),
                     float(ready)))
        rows.append((_lb("kube_endpoint_address_not_ready", job=KSM, namespace=ns, endpoint=m["name"]),
                     float(unready)))

    def _pod_state(self, pod: dict, rows: list) -> None:
        m = pod["metadata"]
        ns, name = m.get("namespace", ""), m["name"]
        status = pod.get("status") or {}
        phase = status.get("phase") or "Pending"
        for p in PHASES:
            rows.append((_lb("kube_pod_status_phase", job=KSM, namespace=ns, pod=name, phase=p),
                         1.0 if p == phase else 0.0))
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
        rows.append((_lb("kube_pod_status_ready", job=KSM, namespace=ns, pod=name, condition="true"),
                     1.0 if ready else 0.0))
        rows.append((_lb("kube_pod_status_ready", job=KSM, namespace=ns, pod=name, condition="false"),
                     0.0 if ready else 1.0))
        for ref in m.get("ownerReferences") or []:
            if isinstance(ref, dict) and ref.get("controller"):
                rows.append((_lb("kube_pod_owner", job=KSM, namespace=ns, pod=name, owner_kind=str(ref.get("kind")),
                                 owner_name=str(ref.get("name")), owner_is_controller="true"), 1.0))
        specs = {c.get("name"): c for c in (pod.get("spec") or {}).get("containers") or [] if isinstance(c, dict)}
        for cs in status.get("containerStatuses") or []:
            self._container_status(ns, name, cs, rows)
        for cname, spec in specs.items():
            limits = (spec.get("resources") or {}).get("limits") or {}
            if "memory" in limits:
                rows.append((_lb("kube_pod_container_resource_limits", job=KSM, namespace=ns, pod=name,
                                 container=str(cname), resource="memory", unit="byte"),
                             float(parse_memory_bytes(limits["memory"]))))
            if "cpu" in limits:
                rows.append((_lb("kube_pod_container_resource_limits", job=KSM, namespace=ns, pod=name,
                                 container=str(cname), resource="cpu", unit="core"),
                             parse_cpu_millis(limits["cpu"]) / 1000.0))

    def _usage(self, cluster: Any, pod: dict, now: float, dt: float, out: Samples,
               seen: set[tuple[str, str]]) -> None:
        """cAdvisor's container series: working set, cumulative CPU, memory limit."""
        m = pod["metadata"]
        uid = m.get("uid", "")
        pr = cluster.runtime.get(uid)
        if pr is None:
            return
        rows = out.setdefault(m.get("namespace", ""), [])
        for c in pr.containers:
            if c.run is None or c.phase != "running":
                continue
            cpu, mem = container_usage(cluster, c, uid, now)
            key = (uid, c.container_id or "")
            seen.add(key)
            total = self.cpu_seconds.get(key, 0.0) + cpu / 1000.0 * dt
            self.cpu_seconds[key] = total
            labels = self._container_labels.get(key)
            if labels is None:
                base = {"job": "kubelet", "namespace": m.get("namespace", ""), "pod": m["name"], "container": c.name,
                        "image": c.image}
                spec = next((x for x in (pod.get("spec") or {}).get("containers") or []
                             if isinstance(x, dict) and x.get("name") == c.name), {})
                limit = ((spec.get("resources") or {}).get("limits") or {}).get("memory")
                labels = self._container_labels[key] = (
                    _lb("container_memory_working_set_bytes", **base), _lb("container_cpu_usage_seconds_total", **base),
                    _lb("container_spec_memory_limit_bytes", **base) if limit else None)
            rows.append((labels[0], float(mem)))
            rows.append((labels[1], round(total, 6)))
            if labels[2] is not None and c.run.memory_limit:
                rows.append((labels[2], float(c.run.memory_limit)))

    @staticmethod
    def _container_status(ns: str, pod: str, cs: dict, rows: list) -> None:
        cname = str(cs.get("name"))
        state = cs.get("state") or {}
        common = {"job": KSM, "namespace": ns, "pod": pod, "container": cname}
        rows.append((_lb("kube_pod_container_status_restarts_total", **common), float(cs.get("restartCount", 0))))
        rows.append((_lb("kube_pod_container_status_ready", **common), 1.0 if cs.get("ready") else 0.0))
        rows.append((_lb("kube_pod_container_status_running", **common), 1.0 if "running" in state else 0.0))
        rows.append((_lb("kube_pod_container_status_waiting", **common), 1.0 if "waiting" in state else 0.0))
        rows.append((_lb("kube_pod_container_status_terminated", **common), 1.0 if "terminated" in state else 0.0))
        waiting = (state.get("waiting") or {}).get("reason")
        if waiting:
            rows.append((_lb("kube_pod_container_status_waiting_reason", reason=str(waiting), **common), 1.0))
        last = ((cs.get("lastState") or {}).get("terminated") or {}).get("reason")
        if last:
            rows.append((_lb("kube_pod_container_status_last_terminated_reason", reason=str(last), **common), 1.0))

    @staticmethod
    def _deployment(d: dict, rows: list) -> None:
        m = d["metadata"]
        ns = m.get("namespace", "")
        spec, status = d.get("spec") or {}, d.get("status") or {}
        common = {"job": KSM, "namespace": ns, "deployment": m["name"]}
        desired = spec.get("replicas", 1)
        rows.append((_lb("kube_deployment_spec_replicas", **common), float(desired if desired is not None else 1)))
        for key, metric in (("replicas", "kube_deployment_status_replicas"),
                            ("availableReplicas", "kube_deployment_status_replicas_available"),
                            ("unavailableReplicas", "kube_deployment_status_replicas_unavailable"),
                            ("updatedReplicas", "kube_deployment_status_replicas_updated"),
                            ("readyReplicas", "kube_deployment_status_replicas_ready")):
            rows.append((_lb(metric, **common), float(status.get(key) or 0)))
        rows.append((_lb("kube_deployment_status_observed_generation", **common),
                     float(status.get("observedGeneration") or 0)))
        rows.append((_lb("kube_deployment_metadata_generation", **common), float(m.get("generation") or 0)))

    @staticmethod
    def _statefulset(sts: dict, rows: list) -> None:
        m = sts["metadata"]
        spec, status = sts.get("spec") or {}, sts.get("status") or {}
        common = {"job": KSM, "namespace": m.get("namespace", ""), "statefulset": m["name"]}
        rows.append((_lb("kube_statefulset_replicas", **common), float(spec.get("replicas", 1))))
        for key, metric in (("replicas", "kube_statefulset_status_replicas"),
                            ("readyReplicas", "kube_statefulset_status_replicas_ready"),
                            ("availableReplicas", "kube_statefulset_status_replicas_available"),
                            ("currentReplicas", "kube_statefulset_status_replicas_current"),
                            ("updatedReplicas", "kube_statefulset_status_replicas_updated"),
                            ("observedGeneration", "kube_statefulset_status_observed_generation")):
            rows.append((_lb(metric, **common), float(status.get(key) or 0)))
        rows.append((_lb("kube_statefulset_metadata_generation", **common), float(m.get("generation") or 0)))
        for key, metric in (("currentRevision", "kube_statefulset_status_current_revision"),
                            ("updateRevision", "kube_statefulset_status_update_revision")):
            if status.get(key):
                rows.append((_lb(metric, revision=str(status[key]), **common), 1.0))

    @staticmethod
    def _daemonset(ds: dict, rows: list) -> None:
        m = ds["metadata"]
        status = ds.get("status") or {}
        common = {"job": KSM, "namespace": m.get("namespace", ""), "daemonset": m["name"]}
        for key, metric in (("desiredNumberScheduled", "kube_daemonset_status_desired_number_scheduled"),
                            ("currentNumberScheduled", "kube_daemonset_status_current_number_scheduled"),
                            ("numberMisscheduled", "kube_daemonset_status_number_misscheduled"),
                            ("numberReady", "kube_daemonset_status_number_ready"),
                            ("numberAvailable", "kube_daemonset_status_number_available"),
                            ("numberUnavailable", "kube_daemonset_status_number_unavailable"),
                            ("updatedNumberScheduled", "kube_daemonset_status_updated_number_scheduled"),
                            ("observedGeneration", "kube_daemonset_status_observed_generation")):
            rows.append((_lb(metric, **common), float(status.get(key) or 0)))
        rows.append((_lb("kube_daemonset_metadata_generation", **common), float(m.get("generation") or 0)))

    @staticmethod
    def _hpa(hpa: dict, rows: list) -> None:
        m = hpa["metadata"]
        spec, status = hpa.get("spec") or {}, hpa.get("status") or {}
        common = {"job": KSM, "namespace": m.get("namespace", ""), "horizontalpodautoscaler": m["name"]}
        for value, metric in ((spec.get("minReplicas", 1), "kube_horizontalpodautoscaler_spec_min_replicas"),
                              (spec.get("maxReplicas"), "kube_horizontalpodautoscaler_spec_max_replicas"),
                              (status.get("currentReplicas"), "kube_horizontalpodautoscaler_status_current_replicas"),
                              (status.get("desiredReplicas"), "kube_horizontalpodautoscaler_status_desired_replicas")):
            rows.append((_lb(metric, **common), float(value or 0)))
