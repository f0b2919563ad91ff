"""ReplicaSet controller: keeps ``spec.replicas`` pods alive from the template and reports status.

Pods are created through the same preparation and admission (LimitRange, ResourceQuota) as an API
create; a rejection becomes a FailedCreate event plus a ReplicaFailure condition and is retried
with exponential back-off (sooner when the namespace's quotas or limit ranges change).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..errors import ApiError
from ..resources import LIMITRANGES, PODS, REPLICASETS, RESOURCEQUOTAS
from ..store import Obj
from ..tree import clone
from .common import (api_delete, being_deleted, controller_of, controller_ref, create_pod, is_pod_active,
                     is_pod_ready, labels_match, max_restarts, namespace_terminating, now_ts, pod_available_at,
                     pod_from_template, pod_phase, pod_ready_since, selector_is_empty, selector_matches,
                     spec_replicas, write)

COMPONENT = "replicaset-controller"
BURST_REPLICAS = 500
BACKOFF_START_S = 1.0
BACKOFF_MAX_S = 300.0
_PHASE_ORDER = {"Pending": 0, "Unknown": 1, "Running": 2}


@dataclass
class _Failure:
    message: str
    retry_at: float
    attempts: int
    fingerprint: tuple


class ReplicaSetController:
    name = COMPONENT

    def __init__(self) -> None:
        self._failures: dict[str, _Failure] = {}  # RS uid -> last create failure

    def reconcile(self, cluster, namespace: str) -> None:
        if not namespace:
            return
        replica_sets = cluster.store.list(REPLICASETS, namespace)
        if not replica_sets:
            return
        index = PodIndex(cluster.store.list(PODS, namespace))
        for rs in replica_sets:
            self._sync(cluster, rs, index)

    # -- one replica set -------------------------------------------------------------------
    def _sync(self, cluster, rs: Obj, index: "PodIndex") -> None:
        ns = rs["metadata"]["namespace"]
        selector = (rs.get("spec") or {}).get("selector")
        if selector_is_empty(selector):
            return
        pods = claim_pods(cluster, rs, selector, index)
        error: str | None = None
        diff = len(pods) - spec_replicas(rs)
        if not being_deleted(rs) and not namespace_terminating(cluster, ns):
            error, pods = self._manage(cluster, rs, pods)
        else:
            self._failures.pop(rs["metadata"]["uid"], None)
        self._write_status(cluster, rs, pods, error, diff)

    def _manage(self, cluster, rs: Obj, pods: list[Obj]) -> tuple[str | None, list[Obj]]:
        uid = rs["metadata"]["uid"]
        diff = len(pods) - spec_replicas(rs)
        if diff >= 0:
            self._failures.pop(uid, None)
        if diff < 0:
            failure = self._failures.get(uid)
            now = cluster.now_s()
            fingerprint = _admission_fingerprint(cluster, rs)
            if failure is not None and now < failure.retry_at and failure.fingerprint == fingerprint:
                cluster.wake_at(rs["metadata"]["namespace"], failure.retry_at)
                return failure.message, pods
            template = (rs.get("spec") or {}).get("template") or {}
            for _ in range(min(-diff, BURST_REPLICAS)):
                pod = pod_from_template(template, rs, f"{rs['metadata']['name']}-")
                try:
                    created = create_pod(cluster, pod)
                except ApiError as err:
                    cluster.events.record(rs, "Warning", "FailedCreate", f"Error creating: {err.message}", COMPONENT)
                    attempts = failure.attempts + 1 if failure else 1
                    delay = min(BACKOFF_START_S * 2 ** (attempts - 1), BACKOFF_MAX_S)
                    self._failures[uid] = _Failure(err.message, now + delay, attempts, fingerprint)
                    cluster.wake_at(rs["metadata"]["namespace"], now + delay)
                    return err.message, pods
                cluster.events.record(rs, "Normal", "SuccessfulCreate", f"Created pod: {created['metadata']['name']}",
                                      COMPONENT)
                pods.append(created)
            self._failures.pop(uid, None)
        elif diff > 0:
            doomed = pods_to_delete(cluster, pods, min(diff, BURST_REPLICAS))
            for pod in doomed:
                api_delete(cluster, PODS, pod)
                cluster.events.record(rs, "Normal", "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}",
                                      COMPONENT)
            gone = {p["metadata"]["uid"] for p in doomed}
            pods = [p for p in pods if p["metadata"]["uid"] not in gone]
        return None, pods

    def _write_status(self, cluster, rs: Obj, pods: list[Obj], error: str | None, diff: int) -> None:
        spec = rs.get("spec") or {}
        mrs = int(spec.get("minReadySeconds") or 0)
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        now = cluster.now_s()
        labeled = ready = available = 0
        next_available: float | None = None
        for pod in pods:
            if labels_match(template_labels, pod["metadata"].get("labels")):
                labeled += 1
            at = pod_available_at(cluster, pod, mrs)
            if at is None:
                continue
            ready += 1
            if at < now:
                available += 1
            else:
                next_available = at if next_available is None else min(next_available, at)
        if next_available is not None:
            cluster.wake_at(rs["metadata"]["namespace"], next_available + 0.01)
        old = rs.get("status") or {}
        conditions = [dict(c) for c in old.get("conditions") or []]
        has_failure = any(c.get("type") == "ReplicaFailure" for c in conditions)
        if error is not None and not has_failure:
            reason = "FailedCreate" if diff < 0 else "FailedDelete"
            conditions.append({"type": "ReplicaFailure", "status": "True", "lastTransitionTime": now_ts(cluster),
                               "reason": reason, "message": error})
        elif error is None and has_failure:
            conditions = [c for c in conditions if c.get("type") != "ReplicaFailure"]
        status: dict = {"replicas": len(pods)}
        for key, value in (("fullyLabeledReplicas", labeled), ("readyReplicas", ready),
                           ("availableReplicas", available)):
            if value:
                status[key] = value
        status["observedGeneration"] = rs["metadata"].get("generation", 1)
        if conditions:
            status["conditions"] = conditions
        if status != old:
            updated = clone(rs)
            updated["status"] = status
            write(cluster, REPLICASETS, updated)


class PodIndex:
    """A namespace's active pods grouped by controller uid, plus the orphans (one listing per pass)."""

    def __init__(self, pods: list[Obj]):
        self.owned: dict[str, list[Obj]] = {}
        self.orphans: list[Obj] = []
        for pod in pods:
            if not is_pod_active(pod):
                continue
            ref = controller_of(pod)
            if ref is None:
                self.orphans.append(pod)
            else:
                self.owned.setdefault(ref.get("uid", ""), []).append(pod)


def claim_pods(cluster, owner: Obj, selector: dict, index: PodIndex) -> list[Obj]:
    """ClaimPods: active pods this owner controls and still selects, adopting matching orphans."""
    uid = owner["metadata"]["uid"]
    claimed: list[Obj] = []
    for pod in index.owned.get(uid, []):
        if selector_matches(selector, pod["metadata"].get("labels")):
            claimed.append(pod)
            continue
        released = clone(pod)
        released["metadata"]["ownerReferences"] = [
            r for r in pod["metadata"]["ownerReferences"] if r.get("uid") != uid]
        if not released["metadata"]["ownerReferences"]:
            released["metadata"].pop("ownerReferences")
        write(cluster, PODS, released)
    if being_deleted(owner):
        return claimed
    for pod in list(index.orphans):
        if selector_matches(selector, pod["metadata"].get("labels")):
            adopted = clone(pod)
            adopted["metadata"].setdefault("ownerReferences", []).append(controller_ref(owner))
            claimed.append(write(cluster, PODS, adopted))
            index.orphans.remove(pod)
    return claimed


def pods_to_delete(cluster, pods: list[Obj], count: int) -> list[Obj]:
    """Deletion preference (ActivePodsWithRanks): unscheduled, pending, not ready, newest first."""
    per_node = Counter(p.get("spec", {}).get("nodeName") or "" for p in pods)

    def key(pod: Obj) -> tuple:
        node = (pod.get("spec") or {}).get("nodeName") or ""
        ready = is_pod_ready(pod)
        ann = pod["metadata"].get("annotations") or {}
        try:
            cost = int(ann.get("controller.kubernetes.io/pod-deletion-cost", "0"))
        except ValueError:
            cost = 0
        since = pod_ready_since(cluster, pod) if ready else None
        created = pod["metadata"].get("creationTimestamp", "")
        return (
            1 if node else 0,
            _PHASE_ORDER.get(pod_phase(pod), 0),
            1 if ready else 0,
            cost,
            -per_node[node] if node else 0,
            -(since or 0.0) if ready else 0.0,
            -max_restarts(pod),
            tuple(-ord(ch) for ch in created),
            pod["metadata"]["name"],
        )

    return sorted(pods, key=key)[:count]


def _admission_fingerprint(cluster, rs: Obj) -> tuple:
    """What admission depends on besides the pod: a change here ends the back-off early."""
    ns = rs["metadata"]["namespace"]
    rvs = tuple(o["metadata"].get("resourceVersion") for rt in (RESOURCEQUOTAS, LIMITRANGES)
                for o in cluster.store.list(rt, ns))
    return (rs["metadata"].get("generation"), rvs)
