"""ResourceQuota accounting: what a namespace uses, per quota resource name, and the status
controller that keeps ``status.hard``/``status.used`` current (``kubectl describe quota``)."""

from __future__ import annotations

from typing import Any

from ..resources import RESOURCEQUOTAS, RESOURCES, PODS, ResourceType
from ..tree import clone
from .units import format_resource, parse_cpu_millis, parse_memory_bytes, parse_resource

COMPUTE = {"cpu": ("requests", "cpu"), "requests.cpu": ("requests", "cpu"), "memory": ("requests", "memory"),
           "requests.memory": ("requests", "memory"), "limits.cpu": ("limits", "cpu"),
           "limits.memory": ("limits", "memory"),
           "requests.ephemeral-storage": ("requests", "ephemeral-storage"),
           "limits.ephemeral-storage": ("limits", "ephemeral-storage")}
LEGACY_COUNTS = {"services": ("", "services"), "configmaps": ("", "configmaps"), "secrets": ("", "secrets"),
                 "persistentvolumeclaims": ("", "persistentvolumeclaims"),
                 "replicationcontrollers": ("", "replicationcontrollers"), "resourcequotas": ("", "resourcequotas")}


def _amount(name: str, value: Any) -> int:
    return parse_cpu_millis(value) if name == "cpu" else parse_memory_bytes(value)


def container_amount(c: dict[str, Any], section: str, name: str) -> int | None:
    """A container's request (falling back to its limit, as API defaulting does) or limit."""
    res = c.get("resources") or {}
    value = (res.get(section) or {}).get(name)
    if value is None and section == "requests":
        value = (res.get("limits") or {}).get(name)
    return None if value is None else _amount(name, value)


def pod_amount(pod: dict[str, Any], section: str, name: str) -> int:
    spec = pod.get("spec") or {}
    apps = sum(container_amount(c, section, name) or 0 for c in spec.get("containers") or [] if isinstance(c, dict))
    inits = [container_amount(c, section, name) or 0 for c in spec.get("initContainers") or [] if isinstance(c, dict)]
    return max([apps] + inits)


def is_terminal(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _best_effort(pod: dict[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        res = (c or {}).get("resources") or {}
        if res.get("requests") or res.get("limits"):
            return False
    return True


def pod_in_scope(quota: dict[str, Any], pod: dict[str, Any]) -> bool:
    spec = quota.get("spec") or {}
    terminating = (pod.get("spec") or {}).get("activeDeadlineSeconds") is not None
    for scope in spec.get("scopes") or []:
        if scope == "BestEffort" and not _best_effort(pod) or scope == "NotBestEffort" and _best_effort(pod):
            return False
        if scope == "Terminating" and not terminating or scope == "NotTerminating" and terminating:
            return False
    return True


def pod_usage(pod: dict[str, Any], names: list[str]) -> dict[str, int]:
    """What one pod adds to each quota resource name."""
    out: dict[str, int] = {}
    for name in names:
        if name in ("pods", "count/pods"):
            out[name] = 1
        elif name in COMPUTE:
            out[name] = pod_amount(pod, *COMPUTE[name])
    return out


def _count_type(name: str) -> ResourceType | None:
    if name in LEGACY_COUNTS:
        group, plural = LEGACY_COUNTS[name]
    elif name.startswith("count/"):
        plural, _, group = name[len("count/"):].partition(".")
    else:
        return None
    return next((rt for rt in RESOURCES if rt.key == (group, plural) and rt.stored), None)


def namespace_usage(cluster: Any, namespace: str, quota: dict[str, Any]) -> dict[str, int]:
    """Current usage of every resource named in the quota's spec.hard."""
    hard = (quota.get("spec") or {}).get("hard") or {}
    names = sorted(hard)
    used = {n: 0 for n in names}
    pods = [p for p in cluster.store.list(PODS, namespace) if not is_terminal(p) and pod_in_scope(quota, p)]
    for pod in pods:
        for k, v in pod_usage(pod, names).items():
            used[k] += v
    for name in names:
        if name in ("pods", "count/pods") or name in COMPUTE:
            continue
        rt = _count_type(name)
        if rt is not None:
            used[name] = len(cluster.store.list(rt, namespace))
        elif name in ("services.loadbalancers", "services.nodeports"):
            from ..resources import SERVICES

            want = ("LoadBalancer",) if name == "services.loadbalancers" else ("NodePort", "LoadBalancer")
            used[name] = sum(1 for s in cluster.store.list(SERVICES, namespace)
                             if (s.get("spec") or {}).get("type") in want)
        elif name == "requests.storage":
            from ..resources import by_key

            used[name] = sum(parse_memory_bytes(((p.get("spec") or {}).get("resources") or {})
                                                .get("requests", {}).get("storage", "0"))
                             for p in cluster.store.list(by_key("", "persistentvolumeclaims"), namespace))
    return used


def quota_status(cluster: Any, namespace: str, quota: dict[str, Any]) -> dict[str, Any]:
    hard = dict((quota.get("spec") or {}).get("hard") or {})
    used = namespace_usage(cluster, namespace, quota)
    return {"hard": hard, "used": {k: format_resource(k, v) for k, v in used.items()}}


def hard_amount(name: str, value: Any) -> int:
    return parse_resource(name, value)


class QuotaController:
    """resourcequota-controller: keeps every quota's status in step with its namespace."""

    name = "resourcequota"

    def reconcile(self, cluster: Any, namespace: str) -> None:
        if namespace == "":
            return
        for quota in cluster.store.list(RESOURCEQUOTAS, namespace):
            status = quota_status(cluster, namespace, quota)
            if quota.get("status") != status:
                new = clone(quota)
                new["status"] = status
                cluster.store.update(RESOURCEQUOTAS, new, check_rv=False)
