"""Deployment strategies: RollingUpdate, Recreate and proportional scaling during a rollout.

Functions over one sync pass (``RolloutSync``, implemented by deployment._DeploymentSync), following
kube-controller-manager's rolling.go, recreate.go and sync.go: the new ReplicaSet grows within
maxSurge, old ones shrink while keeping ``replicas - maxUnavailable`` available (unavailable old
replicas first), and a resize mid-rollout is shared out in proportion to the ReplicaSets' sizes.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..resources import PODS
from ..store import Obj
from . import rollout as R
from .common import controller_of, spec_replicas


class RolloutSync(Protocol):
    """What a strategy needs from the sync pass of one Deployment."""

    d: Obj
    ns: str
    store: Any

    def fresh(self, rs: Obj | None) -> Obj | None: ...
    def ensure_new(self, new: Obj | None, old: list[Obj]) -> Obj | None: ...
    def create_new(self, old: list[Obj], new_revision: str) -> Obj | None: ...
    def scale_rs(self, rs: Obj, new_scale: int, op: str) -> tuple[bool, Obj]: ...
    def scale_and_record(self, rs: Obj, new_scale: int) -> tuple[bool, Obj]: ...
    def cleanup(self, old: list[Obj]) -> None: ...
    def sync_rollout_status(self, old: list[Obj], new: Obj | None) -> None: ...


def proportional_scale(sync: RolloutSync, new: Obj | None, old: list[Obj]) -> None:
    """dc.scale: resize the one active ReplicaSet, or share a resize across several mid-rollout."""
    d = sync.d
    desired = spec_replicas(d)
    target = R.find_active_or_latest(new, old)
    if target is not None:
        if R.spec_replicas(target, 0) != desired:
            sync.scale_and_record(target, desired)
        return
    if R.is_saturated(d, new):
        for rs in R.active(old):
            sync.scale_and_record(rs, 0)
        return
    if not R.is_rolling(d):
        return
    live = R.active(old + [new])
    allowed = desired + R.max_surge(d) if desired > 0 else 0
    to_add = allowed - R.total_spec(live)
    op = ""
    if to_add > 0:
        live.sort(key=lambda rs: (-R.spec_replicas(rs, 0), _neg_time(rs)))
        op = "up"
    elif to_add < 0:
        live.sort(key=lambda rs: (-R.spec_replicas(rs, 0), rs["metadata"].get("creationTimestamp", "")))
        op = "down"
    added = 0
    sizes: dict[str, int] = {}
    for rs in live:
        share = R.proportion(d, rs, to_add, added) if to_add else 0
        sizes[rs["metadata"]["name"]] = R.spec_replicas(rs, 0) + share
        added += share
    for i, rs in enumerate(live):
        name = rs["metadata"]["name"]
        if i == 0 and to_add:
            sizes[name] = max(sizes[name] + to_add - added, 0)
        sync.scale_rs(rs, sizes[name], op or ("up" if sizes[name] > R.spec_replicas(rs, 0) else "down"))


def rolling_update(sync: RolloutSync, new: Obj | None, old: list[Obj]) -> None:
    """rolloutRolling: grow the new ReplicaSet, else shrink old ones, then clean up and report."""
    new = sync.ensure_new(new, old)
    if new is None:
        sync.sync_rollout_status(old, None)
        return
    all_rss = old + [new]
    scaled, new = reconcile_new(sync, all_rss, new)
    if scaled:
        return sync.sync_rollout_status(old, new)
    if reconcile_old(sync, old + [new], R.active(old), new):
        return sync.sync_rollout_status(old, new)
    if R.deployment_complete(sync.d, sync.d.get("status") or {}):
        sync.cleanup(old)
    sync.sync_rollout_status(old, new)


def reconcile_new(sync: RolloutSync, all_rss: list[Obj], new: Obj) -> tuple[bool, Obj]:
    desired = spec_replicas(sync.d)
    current = R.spec_replicas(new, 0)
    if current == desired:
        return False, new
    if current > desired:
        return sync.scale_and_record(new, desired)
    return sync.scale_and_record(new, R.new_rs_new_replicas(sync.d, all_rss, new))


def reconcile_old(sync: RolloutSync, all_rss: list[Obj], old_active: list[Obj], new: Obj) -> bool:
    """reconcileOldReplicaSets: how far old ReplicaSets may shrink without dropping below minAvailable."""
    old_count = R.total_spec(old_active)
    if old_count == 0:
        return False
    desired = spec_replicas(sync.d)
    min_available = desired - R.max_unavailable(sync.d)
    new_unavailable = R.spec_replicas(new, 0) - int((new.get("status") or {}).get("availableReplicas") or 0)
    max_scaled_down = R.total_spec(all_rss) - min_available - new_unavailable
    if max_scaled_down <= 0:
        return False
    old_active, cleaned = cleanup_unhealthy(sync, old_active, max_scaled_down)
    scaled = scale_down_old(sync, old_active + [new], old_active)
    return cleaned + scaled > 0


def cleanup_unhealthy(sync: RolloutSync, old: list[Obj], max_cleanup: int) -> tuple[list[Obj], int]:
    """Scale away old replicas that are not available first (they serve nobody)."""
    result = R.by_creation(old)
    total = 0
    for i, rs in enumerate(result):
        if total >= max_cleanup:
            break
        replicas = R.spec_replicas(rs, 0)
        available = int((rs.get("status") or {}).get("availableReplicas") or 0)
        if replicas == 0 or replicas == available:
            continue
        count = min(max_cleanup - total, replicas - available)
        _, result[i] = sync.scale_and_record(rs, replicas - count)
        total += count
    return result, total


def scale_down_old(sync: RolloutSync, all_rss: list[Obj], old: list[Obj]) -> int:
    desired = spec_replicas(sync.d)
    min_available = desired - R.max_unavailable(sync.d)
    available = R.total_status(all_rss, "availableReplicas")
    if available <= min_available:
        return 0
    total, budget = 0, available - min_available
    for rs in R.by_creation(old):
        if total >= budget:
            break
        replicas = R.spec_replicas(rs, 0)
        if replicas == 0:
            continue
        count = min(replicas, budget - total)
        sync.scale_and_record(rs, replicas - count)
        total += count
    return total


def recreate(sync: RolloutSync, new: Obj | None, old: list[Obj]) -> None:
    """rolloutRecreate: all old pods gone first, then the new ReplicaSet at full size."""
    scaled_down = False
    for rs in R.active(old):
        scaled_down = sync.scale_and_record(rs, 0)[0] or scaled_down
    if scaled_down:
        return sync.sync_rollout_status(old, new)
    if old_pods_running(sync, new, [sync.fresh(rs) for rs in old]):
        return sync.sync_rollout_status(old, new)
    if new is None:
        old = [sync.fresh(rs) for rs in old]
        new = sync.create_new(old, str(R.max_revision(old) + 1))
        if new is None:
            return sync.sync_rollout_status(old, None)
    _, new = sync.scale_and_record(new, spec_replicas(sync.d))
    if R.deployment_complete(sync.d, sync.d.get("status") or {}):
        sync.cleanup(old)
    sync.sync_rollout_status(old, new)


def old_pods_running(sync: RolloutSync, new: Obj | None, old: list[Obj]) -> bool:
    if R.total_status(old, "replicas") > 0:
        return True
    old_uids = {rs["metadata"]["uid"] for rs in old}
    for pod in sync.store.list(PODS, sync.ns):
        ref = controller_of(pod)
        if ref is None or ref.get("uid") not in old_uids:
            continue
        if (pod.get("status") or {}).get("phase") not in ("Failed", "Succeeded"):
            return True
    return False


def _neg_time(rs: Obj) -> tuple:
    """Sort key putting newer ReplicaSets first among equals (ReplicaSetsBySizeNewer)."""
    ts = rs["metadata"].get("creationTimestamp", "")
    return tuple(-ord(ch) for ch in ts)
