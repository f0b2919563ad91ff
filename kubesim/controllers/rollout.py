"""Deployment rollout arithmetic, as in kube-controller-manager's deployment/util package.

Pure functions over Deployment and ReplicaSet dicts: surge/unavailable fenceposts, how far a new
ReplicaSet may grow, proportional scaling shares, status calculation and condition bookkeeping.
The controller (deployment.py) does the writes.
"""

from __future__ import annotations

import math
from typing import Any

from ..store import Obj
from .common import spec_replicas

REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
SKIP_COPY_ANNOTATIONS = frozenset({
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    REVISION_HISTORY,
    DESIRED_REPLICAS,
    MAX_REPLICAS,
    "deprecated.deployment.rollback.to",
    "deployment.kubernetes.io/error-selector-overlapping-with",
    "deployment.kubernetes.io/selector-updated-at",
})
MAX_REVISION_HISTORY_CHARS = 2000

# Condition reasons (k8s.io/kubernetes/pkg/controller/deployment/util).
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
MIN_AVAILABLE = "MinimumReplicasAvailable"
MIN_UNAVAILABLE = "MinimumReplicasUnavailable"


# -- strategy fenceposts -----------------------------------------------------------------------
def scaled_value(value: Any, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: ints as-is, "N%" of total rounded up or down."""
    if value is None:
        value = "25%"
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return int(value)
    text = str(value).strip()
    if text.endswith("%"):
        try:
            pct = float(text[:-1])
        except ValueError:
            return 0
        raw = pct * total / 100
        return int(math.ceil(raw)) if round_up else int(math.floor(raw))
    try:
        return int(text)
    except ValueError:
        return 0


def is_rolling(d: Obj) -> bool:
    return ((d.get("spec") or {}).get("strategy") or {}).get("type", "RollingUpdate") != "Recreate"


def fenceposts(d: Obj) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) resolved against spec.replicas; both 0 → unavailable 1."""
    ru = ((d.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    desired = spec_replicas(d)
    surge = scaled_value(ru.get("maxSurge", "25%"), desired, True)
    unavailable = scaled_value(ru.get("maxUnavailable", "25%"), desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(d: Obj) -> int:
    return fenceposts(d)[0] if is_rolling(d) else 0


def max_unavailable(d: Obj) -> int:
    desired = spec_replicas(d)
    if not is_rolling(d) or desired == 0:
        return 0
    return min(fenceposts(d)[1], desired)


# -- replica set sums --------------------------------------------------------------------------
def _status(rs: Obj | None, key: str) -> int:
    return int(((rs or {}).get("status") or {}).get(key) or 0)


def total_spec(rss: list[Obj]) -> int:
    return sum(spec_replicas(rs, 0) for rs in rss if rs)


def total_status(rss: list[Obj], key: str = "replicas") -> int:
    return sum(_status(rs, key) for rs in rss if rs)


def active(rss: list[Obj | None]) -> list[Obj]:
    return [rs for rs in rss if rs and spec_replicas(rs, 0) > 0]


def annotation_int(obj: Obj, key: str) -> int | None:
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(key)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def revision_of(rs: Obj) -> int:
    return annotation_int(rs, REVISION) or 0


def max_revision(rss: list[Obj]) -> int:
    return max((revision_of(rs) for rs in rss), default=0)


def by_creation(rss: list[Obj]) -> list[Obj]:
    return sorted(rss, key=lambda rs: (rs["metadata"].get("creationTimestamp", ""), rs["metadata"]["name"]))


# -- how many replicas where -------------------------------------------------------------------
def new_rs_new_replicas(d: Obj, all_rss: list[Obj], new_rs: Obj) -> int:
    """NewRSNewReplicas: how far the new ReplicaSet may grow this step."""
    desired = spec_replicas(d)
    if not is_rolling(d):
        return desired
    current = total_spec(all_rss)
    max_total = desired + max_surge(d)
    if current >= max_total:
        return spec_replicas(new_rs, 0)
    up = min(max_total - current, desired - spec_replicas(new_rs, 0))
    return spec_replicas(new_rs, 0) + up


def find_active_or_latest(new_rs: Obj | None, old_rss: list[Obj]) -> Obj | None:
    if new_rs is None and not old_rss:
        return None
    newest_first = list(reversed(by_creation(old_rss)))
    live = active(newest_first + [new_rs])
    if not live:
        return new_rs if new_rs is not None else newest_first[0]
    if len(live) == 1:
        return live[0]
    return None


def is_saturated(d: Obj, rs: Obj | None) -> bool:
    if rs is None:
        return False
    desired = spec_replicas(d)
    return (spec_replicas(rs, 0) == desired and annotation_int(rs, DESIRED_REPLICAS) == desired
            and _status(rs, "availableReplicas") == desired)


def proportion(d: Obj, rs: Obj, to_add: int, added: int) -> int:
    """GetProportion: this ReplicaSet's share of a scaling step during a rollout."""
    if spec_replicas(rs, 0) == 0 or to_add == 0 or to_add == added:
        return 0
    desired = spec_replicas(d)
    if desired == 0:
        fraction = -spec_replicas(rs, 0)
    else:
        deployment_replicas = desired + max_surge(d)
        annotated = annotation_int(rs, MAX_REPLICAS)
        if annotated is None:
            annotated = _status(d, "replicas")
        if annotated <= 0:
            fraction = 0
        else:
            size = spec_replicas(rs, 0) * deployment_replicas / annotated
            fraction = int(math.floor(size + 0.5)) - spec_replicas(rs, 0)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def set_replicas_annotations(rs: Obj, desired: int, max_replicas: int) -> bool:
    ann = rs["metadata"].setdefault("annotations", {})
    changed = False
    for key, value in ((DESIRED_REPLICAS, str(desired)), (MAX_REPLICAS, str(max_replicas))):
        if ann.get(key) != value:
            ann[key] = value
            changed = True
    return changed


def set_new_rs_annotations(d: Obj, rs: Obj, new_revision: str, exists: bool) -> bool:
    """SetNewReplicaSetAnnotations: copy annotations, bump revision, keep revision history."""
    ann = rs["metadata"].setdefault("annotations", {})
    changed = False
    for key, value in ((d.get("metadata") or {}).get("annotations") or {}).items():
        if key in SKIP_COPY_ANNOTATIONS or ann.get(key) == value:
            continue
        ann[key] = value
        changed = True
    old_text = ann.get(REVISION)
    try:
        old = int(old_text) if old_text is not None else 0
    except ValueError:
        return changed
    new = int(new_revision)
    if old < new:
        ann[REVISION] = new_revision
        changed = True
        if old_text is not None:
            history = [h for h in ann.get(REVISION_HISTORY, "").split(",") if h]
            history.append(old_text)
            while history and len(",".join(history)) > MAX_REVISION_HISTORY_CHARS:
                history.pop(0)
            ann[REVISION_HISTORY] = ",".join(history)
    if not exists:
        desired = spec_replicas(d)
        changed = set_replicas_annotations(rs, desired, desired + max_surge(d)) or changed
    return changed


# -- conditions --------------------------------------------------------------------------------
def get_condition(status: dict, type_: str) -> dict | None:
    for cond in status.get("conditions") or []:
        if cond.get("type") == type_:
            return cond
    return None


def new_condition(type_: str, status: str, reason: str, message: str, now: str) -> dict:
    return {"type": type_, "status": status, "lastUpdateTime": now, "lastTransitionTime": now,
            "reason": reason, "message": message}


def set_condition(status: dict, cond: dict) -> None:
    """SetDeploymentCondition: same status+reason → untouched; same status keeps lastTransitionTime."""
    current = get_condition(status, cond["type"])
    if current and current.get("status") == cond["status"] and current.get("reason") == cond["reason"]:
        return
    if current and current.get("status") == cond["status"]:
        cond = dict(cond, lastTransitionTime=current.get("lastTransitionTime"))
    remove_condition(status, cond["type"])
    status["conditions"] = (status.get("conditions") or []) + [cond]


def remove_condition(status: dict, type_: str) -> None:
    kept = [c for c in status.get("conditions") or [] if c.get("type") != type_]
    if kept:
        status["conditions"] = kept
    else:
        status.pop("conditions", None)


# -- status ------------------------------------------------------------------------------------
def calculate_status(d: Obj, all_rss: list[Obj], new_rs: Obj | None, now: str) -> dict:
    """calculateStatus: counts summed over the ReplicaSets plus the Available condition."""
    rss = [rs for rs in all_rss if rs]
    available = total_status(rss, "availableReplicas")
    unavailable = max(total_spec(rss) - available, 0)
    old_status = d.get("status") or {}
    counts = {
        "observedGeneration": d["metadata"].get("generation", 1),
        "replicas": total_status(rss, "replicas"),
        "updatedReplicas": _status(new_rs, "replicas"),
        "readyReplicas": total_status(rss, "readyReplicas"),
        "availableReplicas": available,
        "unavailableReplicas": unavailable,
    }
    status: dict[str, Any] = {k: v for k, v in counts.items() if v or k == "observedGeneration"}
    if old_status.get("conditions"):
        status["conditions"] = [dict(c) for c in old_status["conditions"]]
    if available >= spec_replicas(d) - max_unavailable(d):
        cond = new_condition("Available", "True", MIN_AVAILABLE, "Deployment has minimum availability.", now)
    else:
        cond = new_condition("Available", "False", MIN_UNAVAILABLE,
                             "Deployment does not have minimum availability.", now)
    set_condition(status, cond)
    if "collisionCount" in old_status:
        status["collisionCount"] = old_status["collisionCount"]
    return status


def _count(status: dict, key: str) -> int:
    return int(status.get(key) or 0)


def deployment_complete(d: Obj, status: dict) -> bool:
    desired = spec_replicas(d)
    return (_count(status, "updatedReplicas") == desired and _count(status, "replicas") == desired
            and _count(status, "availableReplicas") == desired
            and _count(status, "observedGeneration") >= d["metadata"].get("generation", 1))


def deployment_progressing(d: Obj, status: dict) -> bool:
    old = d.get("status") or {}
    old_old = _count(old, "replicas") - _count(old, "updatedReplicas")
    new_old = _count(status, "replicas") - _count(status, "updatedReplicas")
    return (_count(status, "updatedReplicas") > _count(old, "updatedReplicas") or new_old < old_old
            or _count(status, "readyReplicas") > _count(old, "readyReplicas")
            or _count(status, "availableReplicas") > _count(old, "availableReplicas"))


def progress_deadline(d: Obj) -> int | None:
    value = (d.get("spec") or {}).get("progressDeadlineSeconds", 600)
    if value is None or int(value) >= 2**31 - 1:
        return None
    return int(value)
