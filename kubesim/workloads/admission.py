"""Pod admission: LimitRanger (defaults, min/max, ratio) then ResourceQuota, with the real messages.

``admit_pod`` is called by the API on pod create and by the ReplicaSet/Job controllers (which
turn the ApiError into a FailedCreate event). ``admit_object`` enforces object-count quotas for
any other kind.
"""

from __future__ import annotations

from typing import Any

from ..errors import ApiError
from ..resources import LIMITRANGES, RESOURCEQUOTAS, ResourceType
from ..store import random_suffix
from . import quota as q
from ..tree import clone
from .units import format_resource, parse_cpu_millis, parse_memory_bytes

LIMIT_RANGER_ANNOTATION = "kubernetes.io/limit-ranger"
VALIDATION_SET = ("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory")


def _name(cluster: Any, obj: dict[str, Any]) -> str:
    """The object's name; a generateName object gets one generated, as the apiserver does before admission."""
    meta = obj.get("metadata") or {}
    if meta.get("name"):
        return str(meta["name"])
    prefix = str(meta.get("generateName") or "")
    return prefix + random_suffix(rng=cluster.store.rng) if prefix else ""


def _forbidden(plural: str, name: str, message: str) -> ApiError:
    return ApiError(403, f'{plural} "{name}" is forbidden: {message}', "Forbidden",
                    {"name": name, "kind": plural})


def _aggregate(errors: list[str]) -> str:
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def _value(name: str, quantity: Any) -> int:
    return parse_cpu_millis(quantity) if name == "cpu" else parse_memory_bytes(quantity)


def _defaulted_item(item: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """LimitRangeItem API defaulting: default ← max, defaultRequest ← default ← min."""
    default = dict(item.get("default") or {})
    default_request = dict(item.get("defaultRequest") or {})
    if item.get("type") == "Container":
        for k, v in (item.get("max") or {}).items():
            default.setdefault(k, v)
        for k, v in default.items():
            default_request.setdefault(k, v)
        for k, v in (item.get("min") or {}).items():
            default_request.setdefault(k, v)
    return {"default": default, "defaultRequest": default_request, "max": dict(item.get("max") or {}),
            "min": dict(item.get("min") or {}), "maxLimitRequestRatio": dict(item.get("maxLimitRequestRatio") or {})}


def _containers(pod: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    spec = pod.setdefault("spec", {})
    return ([("container", c) for c in spec.get("containers") or [] if isinstance(c, dict)]
            + [("init container", c) for c in spec.get("initContainers") or [] if isinstance(c, dict)])


def _apply_defaults(pod: dict[str, Any], items: list[dict[str, dict[str, Any]]]) -> None:
    notes = []
    for kind, c in _containers(pod):
        res = c.setdefault("resources", {})
        limits = res.get("limits") or {}
        requests = res.get("requests") or {}
        for k, v in limits.items():  # API defaulting: a limit without a request requests the limit
            requests.setdefault(k, v)
        set_requests, set_limits = [], []
        for item in items:
            for k, v in item["default"].items():
                if k not in limits:
                    limits[k] = v
                    set_limits.append(k)
            for k, v in item["defaultRequest"].items():
                if k not in requests:
                    requests[k] = v
                    set_requests.append(k)
        if limits:
            res["limits"] = limits
        if requests:
            res["requests"] = requests
        parts = []
        if set_requests:
            parts.append(f"{', '.join(set_requests)} request for {kind} {c.get('name')}")
        if set_limits:
            parts.append(f"{', '.join(set_limits)} limit for {kind} {c.get('name')}")
        notes.extend(parts)
    if notes:
        ann = pod.setdefault("metadata", {}).setdefault("annotations", {})
        ann[LIMIT_RANGER_ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)


def _check(limit_type: str, item: dict[str, dict[str, Any]], requests: dict[str, Any],
           limits: dict[str, Any]) -> list[str]:
    errs = []
    for k, enforced in item["min"].items():
        req, lim = requests.get(k), limits.get(k)
        if req is None:
            errs.append(f"minimum {k} usage per {limit_type} is {enforced}.  No request is specified")
        elif _value(k, req) < _value(k, enforced):
            errs.append(f"minimum {k} usage per {limit_type} is {enforced}, but request is {req}")
        elif lim is not None and _value(k, lim) < _value(k, enforced):
            errs.append(f"minimum {k} usage per {limit_type} is {enforced}, but limit is {lim}")
    for k, enforced in item["max"].items():
        req, lim = requests.get(k), limits.get(k)
        if lim is None:
            errs.append(f"maximum {k} usage per {limit_type} is {enforced}.  No limit is specified")
        elif _value(k, lim) > _value(k, enforced):
            errs.append(f"maximum {k} usage per {limit_type} is {enforced}, but limit is {lim}")
        elif req is not None and _value(k, req) > _value(k, enforced):
            errs.append(f"maximum {k} usage per {limit_type} is {enforced}, but request is {req}")
    for k, enforced in item["maxLimitRequestRatio"].items():
        req, lim = requests.get(k), limits.get(k)
        if req is None or _value(k, req) == 0:
            errs.append(f"{k} max limit to request ratio per {limit_type} is {enforced}, "
                        f"but no request is specified or request is 0")
        elif lim is None or _value(k, lim) == 0:
            errs.append(f"{k} max limit to request ratio per {limit_type} is {enforced}, "
                        f"but no limit is specified or limit is 0")
        else:
            ratio = _value(k, lim) / _value(k, req)
            try:
                max_ratio = float(enforced)
            except (TypeError, ValueError):
                max_ratio = float("inf")
            if ratio > max_ratio:
                errs.append(f"{k} max limit to request ratio per {limit_type} is {enforced}, "
                            f"but provided ratio is {ratio:f}")
    return errs


def apply_limit_ranges(cluster: Any, pod: dict[str, Any]) -> dict[str, Any]:
    ns = pod.get("metadata", {}).get("namespace") or "default"
    ranges = cluster.store.list(LIMITRANGES, ns)
    if not ranges:
        return pod
    container_items, pod_items = [], []
    for lr in ranges:
        for item in (lr.get("spec") or {}).get("limits") or []:
            if isinstance(item, dict) and item.get("type") == "Container":
                container_items.append(_defaulted_item(item))
            elif isinstance(item, dict) and item.get("type") == "Pod":
                pod_items.append(_defaulted_item(item))
    _apply_defaults(pod, container_items)
    errs: list[str] = []
    for _, c in _containers(pod):
        res = c.get("resources") or {}
        for item in container_items:
            errs.extend(_check("Container", item, res.get("requests") or {}, res.get("limits") or {}))
    if pod_items:
        totals: dict[str, dict[str, Any]] = {"requests": {}, "limits": {}}
        for section in totals:
            for k in ("cpu", "memory"):
                vals = [((c.get("resources") or {}).get(section) or {}).get(k) for _, c in _containers(pod)]
                if vals and all(v is not None for v in vals):
                    total = sum(_value(k, v) for v in vals)
                    totals[section][k] = format_resource(k if k == "cpu" else "memory", total)
        for item in pod_items:
            errs.extend(_check("Pod", item, totals["requests"], totals["limits"]))
    if errs:
        raise _forbidden("pods", _name(cluster, pod), _aggregate(errs))
    return pod


def _pretty(values: dict[str, int]) -> str:
    return ",".join(f"{k}={format_resource(k, v)}" for k, v in sorted(values.items()))


def check_pod_quota(cluster: Any, pod: dict[str, Any]) -> None:
    ns = pod.get("metadata", {}).get("namespace") or "default"
    for quota in cluster.store.list(RESOURCEQUOTAS, ns):
        if not q.pod_in_scope(quota, pod):
            continue
        qname = quota["metadata"]["name"]
        hard = (quota.get("spec") or {}).get("hard") or {}
        required = sorted(k for k in hard if k in VALIDATION_SET)
        missing: dict[str, list[str]] = {}
        for _, c in _containers(pod):
            res = c.get("resources") or {}
            requests, limits = res.get("requests") or {}, res.get("limits") or {}
            have = set()
            for rname in ("cpu", "memory"):
                if rname in requests or rname in limits:  # a request defaults to the limit
                    have |= {rname, f"requests.{rname}"}
                if rname in limits:
                    have.add(f"limits.{rname}")
            for r in required:
                if r not in have:
                    missing.setdefault(r, []).append(str(c.get("name")))
        if missing:
            detail = "; ".join(f"{r} for: {','.join(sorted(set(names)))}" for r, names in sorted(missing.items()))
            raise _forbidden("pods", _name(cluster, pod), f"failed quota: {qname}: must specify {detail}")
        if q.is_terminal(pod):
            continue
        names = sorted(hard)
        requested = {k: v for k, v in q.pod_usage(pod, names).items()}
        used = q.namespace_usage(cluster, ns, quota)
        exceeded = sorted(k for k, v in requested.items()
                          if used.get(k, 0) + v > q.hard_amount(k, hard[k]))
        if exceeded:
            raise _forbidden("pods", _name(cluster, pod), (
                f"exceeded quota: {qname}, requested: {_pretty({k: requested[k] for k in exceeded})}, "
                f"used: {_pretty({k: used.get(k, 0) for k in exceeded})}, "
                f"limited: {','.join(f'{k}={hard[k]}' for k in exceeded)}"))


def admit_pod(cluster: Any, pod: dict[str, Any]) -> dict[str, Any]:
    """The pod as admission would store it (LimitRange defaults applied), or ApiError 403."""
    out = clone(pod)
    out = apply_limit_ranges(cluster, out)
    check_pod_quota(cluster, out)
    return out


def admit_object(cluster: Any, rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    """Admission for any create: pods get admit_pod; other kinds get object-count quotas."""
    if rt.key == ("", "pods"):
        return admit_pod(cluster, obj)
    ns = obj.get("metadata", {}).get("namespace") or "default"
    if not rt.namespaced:
        return obj
    keys = {f"count/{rt.plural}" + (f".{rt.group}" if rt.group else "")}
    keys |= {k for k, (g, p) in q.LEGACY_COUNTS.items() if (g, p) == rt.key}
    for quota in cluster.store.list(RESOURCEQUOTAS, ns):
        hard = (quota.get("spec") or {}).get("hard") or {}
        relevant = sorted(k for k in keys if k in hard)
        if not relevant:
            continue
        used = q.namespace_usage(cluster, ns, quota)
        exceeded = [k for k in relevant if used.get(k, 0) + 1 > q.hard_amount(k, hard[k])]
        if exceeded:
            raise _forbidden(rt.plural, _name(cluster, obj), (
                f"exceeded quota: {quota['metadata']['name']}, requested: {_pretty({k: 1 for k in exceeded})}, "
                f"used: {_pretty({k: used.get(k, 0) for k in exceeded})}, "
                f"limited: {','.join(f'{k}={hard[k]}' for k in exceeded)}"))
    return obj
