"""Is the app rolled out? Deployments, StatefulSets and DaemonSets read the way ``kubectl rollout
status`` reads them, so "healthy" and "converged" mean the same on kubesim and on a real cluster."""

from __future__ import annotations

from typing import Any, Callable

from .kinds import lookup_kind
from .rest import KubeRest

Obj = dict[str, Any]


def _observed(obj: Obj) -> bool:
    status = obj.get("status") or {}
    return (status.get("observedGeneration") or 0) >= (obj["metadata"].get("generation") or 0)


def deployment_pending(dep: Obj) -> str | None:
    """Why a Deployment is not rolled out yet, or None when it is."""
    name = dep["metadata"]["name"]
    spec, status = dep.get("spec") or {}, dep.get("status") or {}
    want = spec.get("replicas", 1)
    if not _observed(dep):
        return f"{name}: waiting for deployment spec update to be observed"
    for cond in status.get("conditions") or []:
        if cond.get("type") == "Progressing" and cond.get("reason") == "ProgressDeadlineExceeded":
            return f"{name}: exceeded its progress deadline"
    updated, total = status.get("updatedReplicas") or 0, status.get("replicas") or 0
    available = status.get("availableReplicas") or 0
    if updated < want:
        return f"{name}: {updated} out of {want} new replicas have been updated"
    if total > updated:
        return f"{name}: {total - updated} old replicas are pending termination"
    if available < updated:
        return f"{name}: {available} of {updated} updated replicas are available"
    return None


def statefulset_pending(sts: Obj) -> str | None:
    """Why a StatefulSet is not rolled out yet (ready pods, partitioned or full update), or None."""
    name = sts["metadata"]["name"]
    spec, status = sts.get("spec") or {}, sts.get("status") or {}
    want = spec.get("replicas", 1)
    if not _observed(sts) or not status.get("observedGeneration"):
        return f"statefulset {name}: waiting for spec update to be observed"
    if (status.get("readyReplicas") or 0) < want:
        return f"statefulset {name}: waiting for {want - (status.get('readyReplicas') or 0)} pods to be ready"
    strategy = spec.get("updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return None
    partition = (strategy.get("rollingUpdate") or {}).get("partition") or 0
    if partition:
        due = want - partition
        updated = status.get("updatedReplicas") or 0
        return None if updated >= due else f"statefulset {name}: {updated} out of {due} new pods have been updated"
    if status.get("updateRevision") != status.get("currentRevision"):
        updated = status.get("updatedReplicas") or 0
        return f"statefulset {name}: {updated} pods at revision {status.get('updateRevision')}"
    return None


def daemonset_pending(ds: Obj) -> str | None:
    """Why a DaemonSet is not rolled out yet, or None when it is."""
    name, status = ds["metadata"]["name"], ds.get("status") or {}
    if not _observed(ds):
        return f"daemonset {name}: waiting for spec update to be observed"
    desired = status.get("desiredNumberScheduled") or 0
    updated, available = status.get("updatedNumberScheduled") or 0, status.get("numberAvailable") or 0
    if updated < desired:
        return f"daemonset {name}: {updated} out of {desired} new pods have been updated"
    if available < desired:
        return f"daemonset {name}: {available} of {desired} updated pods are available"
    return None


PENDING: dict[str, Callable[[Obj], str | None]] = {
    "Deployment": deployment_pending, "StatefulSet": statefulset_pending, "DaemonSet": daemonset_pending}


async def pending_rollouts(rest: KubeRest, namespace: str) -> list[str]:
    """One line per workload in ``namespace`` that is not rolled out yet (empty: all are)."""
    pending = []
    for kind, why in PENDING.items():
        info = lookup_kind(kind)
        assert info is not None
        pending += [line for line in map(why, await rest.list(info, namespace)) if line]
    return pending
