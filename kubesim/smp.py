"""Strategic merge patch, ported from apimachinery's ``strategicpatch`` (server side).

Lists merge by a key that depends on where they sit (``containers`` by name, ``env`` by name, Service
``spec.ports`` by port, ...); all other lists are replaced. The same pod-spec rules apply under a Pod's
``spec``, a workload's ``spec.template.spec`` and a CronJob's ``spec.jobTemplate.spec.template.spec``.
Directives (``$patch``, ``$retainKeys``, ``$setElementOrder/x``, ``$deleteFromPrimitiveList/x``) are
honoured and never stored. Element ordering follows the real algorithm, so results match a real cluster.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Callable

from .tree import clone

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
SET_ORDER = "$setElementOrder/"
DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"
PRIMITIVE = ""  # merge key meaning "list of scalars merged as a set"

Path = tuple[str, ...]


class SmpError(ValueError):
    """A patch the API server cannot apply (answered as 400 BadRequest)."""


# -- where lists merge ---------------------------------------------------------------------------

_CONTAINER_KINDS = ("containers", "initContainers", "ephemeralContainers")
_POD_SPEC_LISTS: dict[Path, str] = {
    ("volumes",): "name",
    ("imagePullSecrets",): "name",
    ("hostAliases",): "ip",
    ("topologySpreadConstraints",): "topologyKey",
    ("schedulingGates",): "name",
    ("resourceClaims",): "name",
}
for _c in _CONTAINER_KINDS:
    _POD_SPEC_LISTS[(_c,)] = "name"
    _POD_SPEC_LISTS[(_c, "env")] = "name"
    _POD_SPEC_LISTS[(_c, "ports")] = "containerPort"
    _POD_SPEC_LISTS[(_c, "volumeMounts")] = "mountPath"
    _POD_SPEC_LISTS[(_c, "volumeDevices")] = "devicePath"

_TEMPLATE = ("spec", "template", "spec")
POD_SPEC_ROOTS: dict[str, Path] = {
    "Pod": ("spec",),
    "PodTemplate": ("template", "spec"),
    "Deployment": _TEMPLATE,
    "ReplicaSet": _TEMPLATE,
    "StatefulSet": _TEMPLATE,
    "DaemonSet": _TEMPLATE,
    "Job": _TEMPLATE,
    "ReplicationController": _TEMPLATE,
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}

_KIND_LISTS: dict[str, dict[Path, str]] = {
    "Service": {("spec", "ports"): "port"},
    "Node": {("status", "addresses"): "type", ("spec", "podCIDRs"): PRIMITIVE},
    "Pod": {("status", "podIPs"): "ip", ("status", "hostIPs"): "ip"},
    "ServiceAccount": {("secrets",): "name"},
}


@lru_cache(maxsize=None)
def _rules(kind: str) -> dict[Path, str]:
    rules: dict[Path, str] = {("status", "conditions"): "type"}
    root = POD_SPEC_ROOTS.get(kind)
    if root is not None:
        rules.update({root + rel: key for rel, key in _POD_SPEC_LISTS.items()})
    rules.update(_KIND_LISTS.get(kind, {}))
    return rules


def list_merge_key(kind: str, path: Path) -> str | None:
    """Merge key for the list at ``path`` (list indices omitted); "" = set of scalars; None = replace."""
    key = _rules(kind).get(path)
    if key is not None:
        return key
    if len(path) >= 2 and path[-2] == "metadata":
        if path[-1] == "ownerReferences":
            return "uid"
        if path[-1] == "finalizers":
            return PRIMITIVE
    return None


# -- helpers ---------------------------------------------------------------------------------------

def _hkey(value: Any) -> Any:
    """A hashable identity for merge-key values and scalars (Go compares them with ==)."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    return ("j", json.dumps(value, sort_keys=True, default=str))


def _go(value: Any) -> str:
    """Rough Go ``%v`` of a JSON value, for error messages."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go(v) for v in value) + "]"
    return str(value)


_DELETE = object()  # result of merging a map that carries "$patch: delete"


def _is_directive(key: str) -> bool:
    return key in (DIRECTIVE, RETAIN_KEYS) or key.startswith(SET_ORDER) or key.startswith(DELETE_PRIMITIVE)


def _normalize_order(items: list, order: list, keyfn: Callable[[Any], Any]) -> list:
    pos: dict[Any, int] = {}
    for i, x in enumerate(order):
        pos.setdefault(keyfn(x), i)
    end = len(order)
    return sorted(items, key=lambda x: pos.get(keyfn(x), end))


def _merge_sorted(left: list, right: list, server_order: list, keyfn: Callable[[Any], Any]) -> list:
    """apimachinery ``mergeSortedSlice``: interleave server-only items (left) with patch items (right)."""
    pos: dict[Any, int] = {}
    for i, x in enumerate(server_order):
        pos.setdefault(keyfn(x), i)
    out, i, j = [], 0, 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li, ri = pos.get(keyfn(left[i])), pos.get(keyfn(right[j]))
            if li is not None and ri is not None and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


def _order(merged: list, patch_order: list, server_order: list, keyfn: Callable[[Any], Any]) -> list:
    """Patch items in patch order, server-only items in server order, interleaved like the real server."""
    in_patch = {keyfn(x) for x in patch_order}
    patch_items = [x for x in merged if keyfn(x) in in_patch]
    server_only = [x for x in merged if keyfn(x) not in in_patch]
    return _merge_sorted(_normalize_order(server_only, server_order, keyfn),
                         _normalize_order(patch_items, patch_order, keyfn), server_order, keyfn)


def _keyfn(merge_key: str) -> Callable[[Any], Any]:
    if merge_key == PRIMITIVE:
        return _hkey
    return lambda x: _hkey(x.get(merge_key)) if isinstance(x, dict) else _hkey(x)


# -- merging ---------------------------------------------------------------------------------------

def strategic_merge(current: dict, patch: dict, kind: str) -> dict:
    """Apply a strategic merge patch; returns a new dict and leaves both inputs untouched."""
    if not isinstance(patch, dict):
        raise SmpError("invalid JSON document")
    result = _merge_map(clone(current) if isinstance(current, dict) else {}, patch, kind, ())
    if result is _DELETE:
        return {}
    return result


def _fresh(value: Any, kind: str, path: Path) -> Any:
    """A patch value that lands where nothing was: directives applied against emptiness."""
    if isinstance(value, dict):
        return _merge_map({}, value, kind, path)
    if isinstance(value, list):
        merge_key = list_merge_key(kind, path)
        if merge_key is not None:
            return _merge_list([], value, merge_key, kind, path)
        out = []
        for item in value:
            item = _fresh(item, kind, path)
            if item is not _DELETE:
                out.append(item)
        return out
    return value


def _merge_map(orig: dict, patch: dict, kind: str, path: Path) -> Any:
    directive = patch.get(DIRECTIVE)
    if directive is not None:
        if directive == "replace":
            return _merge_map({}, {k: v for k, v in patch.items() if k != DIRECTIVE}, kind, path)
        if directive == "delete":
            return _DELETE
        if directive != "merge":
            raise SmpError(f"unknown patch type: {directive} in map: {_go(patch)}")

    if RETAIN_KEYS in patch:
        retain = patch[RETAIN_KEYS]
        if not isinstance(retain, list):
            raise SmpError("invalid patch format of retainKeys")
        keep = {k for k in retain if isinstance(k, str)}
        for k, v in patch.items():
            if v is not None and not _is_directive(k) and k not in keep:
                raise SmpError("invalid patch format of retainKeys")
        for k in [k for k in orig if k not in keep]:
            del orig[k]

    handled: set[str] = set()
    for key, order in patch.items():
        if key.startswith(SET_ORDER):
            field = key[len(SET_ORDER):]
            if not field:
                raise SmpError("invalid patch format of setElementOrder list")
            if not isinstance(order, list):
                raise SmpError("invalid patch format of setElementOrder list")
            if _apply_set_order(orig, patch, field, order, kind, path + (field,)):
                handled.add(field)

    deletions: list[tuple[str, Any]] = []
    for k, v in patch.items():
        if k.startswith(DELETE_PRIMITIVE):
            field = k[len(DELETE_PRIMITIVE):]
            if not field:
                raise SmpError("invalid patch format of primitive list")
            deletions.append((field, v))
            continue
        if k in handled or _is_directive(k):
            continue
        if v is None:
            orig.pop(k, None)
            continue
        sub = path + (k,)
        have = orig.get(k)
        if isinstance(have, dict) and isinstance(v, dict):
            merged = _merge_map(have, v, kind, sub)
        elif isinstance(have, list) and isinstance(v, list):
            merge_key = list_merge_key(kind, sub)
            merged = _fresh(v, kind, sub) if merge_key is None else _merge_list(have, v, merge_key, kind, sub)
        else:
            merged = _fresh(v, kind, sub)
        if merged is _DELETE:
            orig.pop(k, None)
        else:
            orig[k] = merged

    for field, values in deletions:
        if not isinstance(values, list):
            raise SmpError("invalid patch format of primitive list")
        have = orig.get(field)
        if isinstance(have, list):
            gone = {_hkey(x) for x in values}
            orig[field] = [x for x in have if _hkey(x) not in gone]
    return orig


def _apply_set_order(orig: dict, patch: dict, field: str, order: list, kind: str, path: Path) -> bool:
    """Merge ``patch[field]`` into ``orig[field]`` and impose ``$setElementOrder``; False if not a merge list."""
    merge_key = list_merge_key(kind, path)
    have, want = orig.get(field), patch.get(field)
    if merge_key is None or (field in patch and not isinstance(want, list)):
        return False
    found_orig, found_patch = isinstance(have, list), isinstance(want, list)
    if found_orig and found_patch:
        merged = _merge_list(have, want, merge_key, kind, path)
    elif found_patch:
        merged = _merge_list([], want, merge_key, kind, path)
    elif found_orig:
        merged = have
    else:
        return True
    if merge_key != PRIMITIVE:
        for item in order:
            if not isinstance(item, dict) or merge_key not in item:
                raise SmpError(f"map: {_go(item)} does not contain declared merge key: {merge_key}")
    keyfn = _keyfn(merge_key)
    orig[field] = _order(merged, order, have if found_orig else [], keyfn)
    return True


def _merge_list(orig: list, patch: list, merge_key: str, kind: str, path: Path) -> list:
    if merge_key == PRIMITIVE:
        merged, seen = [], set()
        for x in list(orig) + [clone(p) for p in patch]:
            if isinstance(x, (dict, list)):
                raise SmpError(f"list element types are not identical: {_go(orig)} {_go(patch)}")
            h = _hkey(x)
            if h not in seen:
                seen.add(h)
                merged.append(x)
        return _order(merged, patch, orig, _hkey)

    keyfn = _keyfn(merge_key)
    items = list(orig)
    plain: list[dict] = []
    replace = False
    for el in patch:
        if not isinstance(el, dict):
            raise SmpError(f"expected a map, but received a {type(el).__name__}")
        directive = el.get(DIRECTIVE)
        if directive is None:
            plain.append(el)
        elif directive == "delete":
            if merge_key not in el:
                raise SmpError(f"map: {_go(el)} does not contain declared merge key: {merge_key}")
            gone = _hkey(el[merge_key])
            items = [x for x in items if keyfn(x) != gone]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            plain.append({k: v for k, v in el.items() if k != DIRECTIVE})
        else:
            raise SmpError(f"unknown patch type: {directive} in map: {_go(el)}")
    if replace:
        return [x for x in (_fresh(el, kind, path) for el in plain) if x is not _DELETE]

    for el in plain:
        if merge_key not in el:
            raise SmpError(f"map: {_go(el)} does not contain declared merge key: {merge_key}")
        want = _hkey(el[merge_key])
        for i, x in enumerate(items):
            if isinstance(x, dict) and keyfn(x) == want:
                merged = _merge_map(x, el, kind, path)
                items[i] = {} if merged is _DELETE else merged
                break
        else:
            fresh = _fresh(el, kind, path)
            if fresh is not _DELETE:
                items.append(fresh)
    return _order(items, plain, [x for x in orig if keyfn(x) in {keyfn(i) for i in items}], keyfn)
