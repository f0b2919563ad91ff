"""Helpers every controller shares: owner references, label selectors, pod readiness, sim-time maths.

Objects a controller creates go through the API server's own preparation (objects.prepare) and,
for pods, admission (LimitRange defaults, ResourceQuota), so they are stored exactly as a client's
create would be.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from .. import objects
from ..clock import parse_rfc3339, rfc3339
from ..errors import ApiError
from ..resources import NAMESPACES, PODS, RESOURCES, ResourceType
from ..store import Obj
from ..tree import clone
from ..workloads import admission

POD_TEMPLATE_HASH = "pod-template-hash"


# -- time --------------------------------------------------------------------------------------
def now_ts(cluster) -> str:
    return rfc3339(cluster.clock.now())


def sim_seconds(cluster, timestamp: str | datetime) -> float:
    """The simulated instant (seconds since the clock started) of an RFC 3339 timestamp."""
    dt = parse_rfc3339(timestamp) if isinstance(timestamp, str) else timestamp
    return (dt - cluster.clock.at(0)).total_seconds()


# -- metadata ----------------------------------------------------------------------------------
def uid_of(obj: Obj) -> str:
    return obj["metadata"].get("uid", "")


def controller_ref(owner: Obj) -> dict[str, Any]:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_of(obj: Obj) -> dict[str, Any] | None:
    for ref in obj.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def is_controlled_by(obj: Obj, owner: Obj) -> bool:
    ref = controller_of(obj)
    return ref is not None and ref.get("uid") == uid_of(owner)


def being_deleted(obj: Obj) -> bool:
    return bool(obj.get("metadata", {}).get("deletionTimestamp"))


def resolve_kind(api_version: str, kind: str) -> ResourceType | None:
    """The resource type of an owner reference (any version of the right group and kind)."""
    group = api_version.split("/")[0] if "/" in api_version else ""
    for rt in RESOURCES:
        if rt.kind == kind and rt.group == group and rt.stored:
            return rt
    return None


def spec_replicas(obj: Obj, default: int = 1) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return default if value is None else int(value)


# -- selectors ---------------------------------------------------------------------------------
def selector_is_empty(selector: dict | None) -> bool:
    return not selector or (not selector.get("matchLabels") and not selector.get("matchExpressions"))


def selector_matches(selector: dict | None, labels: dict | None) -> bool:
    """metav1.LabelSelector semantics: None matches nothing, {} matches everything."""
    if selector is None:
        return False
    labels = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True


def labels_match(wanted: dict | None, labels: dict | None) -> bool:
    """A plain label-set selector (Service.spec.selector, template labels)."""
    labels = labels or {}
    return all(labels.get(k) == v for k, v in (wanted or {}).items())


# -- pods --------------------------------------------------------------------------------------
def pod_phase(pod: Obj) -> str:
    return (pod.get("status") or {}).get("phase") or "Pending"


def is_pod_active(pod: Obj) -> bool:
    """Counts towards a controller's replicas: not finished and not being deleted."""
    return pod_phase(pod) not in ("Succeeded", "Failed") and not being_deleted(pod)


def pod_condition(pod: Obj, type_: str) -> dict | None:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == type_:
            return cond
    return None


def is_pod_ready(pod: Obj) -> bool:
    cond = pod_condition(pod, "Ready")
    return cond is not None and cond.get("status") == "True"


def pod_ready_since(cluster, pod: Obj) -> float | None:
    """Sim-seconds at which the pod last became Ready (None if not ready or unknown)."""
    cond = pod_condition(pod, "Ready")
    if not cond or cond.get("status") != "True" or not cond.get("lastTransitionTime"):
        return None
    return sim_seconds(cluster, cond["lastTransitionTime"])


def pod_available_at(cluster, pod: Obj, min_ready_seconds: int) -> float | None:
    """When the pod counts as available (ready for more than minReadySeconds); None if not ready."""
    if not is_pod_ready(pod):
        return None
    if not min_ready_seconds:
        return float("-inf")
    since = pod_ready_since(cluster, pod)
    if since is None:
        return float("-inf")
    return since + min_ready_seconds


def max_restarts(pod: Obj) -> int:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return max((int(s.get("restartCount") or 0) for s in statuses), default=0)


def pod_from_template(template: dict, owner: Obj, generate_name: str) -> Obj:
    """A pod as the workload controllers build it from a pod template (GetPodFromTemplate)."""
    tmeta = template.get("metadata") or {}
    meta: dict[str, Any] = {"generateName": generate_name, "namespace": owner["metadata"]["namespace"]}
    if tmeta.get("labels"):
        meta["labels"] = dict(tmeta["labels"])
    if tmeta.get("annotations"):
        meta["annotations"] = dict(tmeta["annotations"])
    if tmeta.get("finalizers"):
        meta["finalizers"] = list(tmeta["finalizers"])
    meta["ownerReferences"] = [controller_ref(owner)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": clone(template.get("spec") or {}),
        "status": {"phase": "Pending"},
    }


# -- namespaces --------------------------------------------------------------------------------
def namespace_terminating(cluster, namespace: str) -> bool:
    ns = cluster.store.find(NAMESPACES, "", namespace)
    if ns is None:
        return False
    return being_deleted(ns) or (ns.get("status") or {}).get("phase") == "Terminating"


# -- writes ------------------------------------------------------------------------------------
def write(cluster, rt: ResourceType, obj: Obj) -> Obj:
    """Store a controller's change (no-op when equal). Returns the stored object (do not mutate)."""
    return cluster.store.update(rt, obj, check_rv=False)


def write_status(cluster, rt: ResourceType, obj: Obj, status: dict[str, Any],
                 omit_if_zero: tuple[str, ...] = ()) -> None:
    """Store ``status`` on ``obj`` if it changed, leaving out the zero counters the real API omits."""
    status = {k: v for k, v in status.items() if v or k not in omit_if_zero}
    if status != obj.get("status"):
        updated = working_copy(obj)
        updated["status"] = status
        write(cluster, rt, updated)


def api_delete(cluster, rt: ResourceType, obj: Obj) -> Obj:
    """Delete as the API would: objects with finalizers are only marked, the rest removed now."""
    m = obj["metadata"]
    if m.get("finalizers"):
        if m.get("deletionTimestamp"):
            return obj
        marked = clone(obj)
        marked["metadata"]["deletionTimestamp"] = now_ts(cluster)
        marked["metadata"]["deletionGracePeriodSeconds"] = 0
        return write(cluster, rt, marked)
    try:
        return cluster.store.delete(rt, m.get("namespace", ""), m["name"])
    except ApiError:
        return obj


def create_pod(cluster, pod: Obj) -> Obj:
    """Create a controller-built pod through the same preparation and admission as an API create."""
    pod = admission.admit_pod(cluster, objects.prepare(PODS, pod, None))
    return cluster.store.create(PODS, pod)


# -- templates ---------------------------------------------------------------------------------
def template_equal(a: dict | None, b: dict | None) -> bool:
    """Semantic template equality ignoring pod-template-hash (EqualIgnoreHash)."""
    return objects.template_equal(a, b)


_NORMALISED: dict[int, tuple[Any, Any]] = {}
_NORMALISED_MAX = 4096


def normalised_template(obj: Obj) -> Any:
    """The normalised spec.template of a Deployment/ReplicaSet; two compare equal iff template_equal.

    Cached by the identity of the template dict (stored objects are never edited in place), which
    spares re-normalising every old ReplicaSet on every pass.
    """
    template = (obj.get("spec") or {}).get("template")
    if template is None:
        return objects.normalize_template(template)
    hit = _NORMALISED.get(id(template))
    if hit is not None and hit[0] is template:
        return hit[1]
    if len(_NORMALISED) >= _NORMALISED_MAX:
        _NORMALISED.clear()
    value = objects.normalize_template(template)
    _NORMALISED[id(template)] = (template, value)
    return value


def working_copy(obj: Obj) -> Obj:
    """A copy safe for changing metadata (labels, annotations, ownerReferences) and status.

    Spec is shared with the stored object and must only be replaced, never edited in place.
    """
    out = dict(obj)
    meta = dict(obj.get("metadata") or {})
    for key in ("labels", "annotations"):
        if key in meta:
            meta[key] = dict(meta[key])
    if "ownerReferences" in meta:
        meta["ownerReferences"] = [dict(r) for r in meta["ownerReferences"]]
    out["metadata"] = meta
    if "status" in out:
        out["status"] = clone(out["status"])
    return out


_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def safe_encode(text: str) -> str:
    """apimachinery rand.SafeEncodeString: map each byte onto a vowel-free alphabet."""
    return "".join(_SAFE_ALPHABET[b % len(_SAFE_ALPHABET)] for b in text.encode())


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def template_hash(template: dict, collision_count: int | None = None) -> str:
    """The pod-template-hash: FNV-32a of the normalised template, safe-encoded like the real one."""
    text = json.dumps(objects.normalize_template(template), sort_keys=True, separators=(",", ":"), default=str)
    data = text.encode()
    if collision_count is not None:
        data += str(int(collision_count)).encode()
    return safe_encode(str(fnv32a(data)))
