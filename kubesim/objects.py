"""Every write goes through ``prepare``: decode checks, normalisation, defaults, validation.

The real API server decodes bodies into Go structs (dropping nulls and empty optional collections),
applies defaults and validates. Doing the same here keeps stored objects shaped like a real cluster's,
and makes equal intent compare equal: a pod template sent by ``rollout undo`` with
``"creationTimestamp": null`` matches the ReplicaSet template it came from (see ``template_equal``).
"""

from __future__ import annotations

import math
from typing import Any

from .defaults import apply_defaults, default_pod_template
from .resources import ResourceType
from .typecheck import check_types, decode_error
from .validation import validate

POD_TEMPLATE_HASH = "pod-template-hash"

# map[string]string / ResourceList fields that Go omits when empty.
_OMIT_EMPTY_MAPS = frozenset({"labels", "annotations", "nodeSelector", "matchLabels", "data", "binaryData",
                              "stringData", "limits", "requests"})


def normalize(value: Any) -> Any:
    """A copy without nulls, empty lists or empty string maps, as a Go decode/encode round trip gives."""
    if type(value) is dict:
        out = {}
        for k, v in value.items():
            if v is None:
                continue
            v = normalize(v)
            if type(v) is list and not v:
                continue
            if type(v) is dict and not v and k in _OMIT_EMPTY_MAPS:
                continue
            out[k] = v
        return out
    if type(value) is list:
        return [normalize(v) for v in value if v is not None]
    if type(value) is float and not math.isfinite(value):
        raise _NonFinite(f"json: unsupported value: {value}")
    return value


class _NonFinite(ValueError):
    """NaN or an infinity (Python's json reads them; JSON and the API server do not)."""


def prepare(rt: ResourceType, obj: dict, old: dict | None = None) -> dict:
    """The object as the API server would store it (a new dict), or ApiError 400/422.

    ``old`` is the stored object on update (None on create): allocated fields such as a Service's
    clusterIP are carried over and immutable fields are enforced. Idempotent: prepare(prepare(x)) == prepare(x).
    """
    if not isinstance(obj, dict):
        raise decode_error(rt, "the request body must be a JSON object")
    try:
        out = normalize(obj)
        check_types(rt, out)
        if not rt.stored:
            return out
        if "metadata" not in out:
            out["metadata"] = {}
        apply_defaults(rt.kind, out, old)
        validate(rt, out, old)
    except RecursionError:
        raise decode_error(rt, "the object is nested too deeply") from None
    except _NonFinite as exc:
        raise decode_error(rt, str(exc)) from None
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
        # A shape the type checks do not describe: answer like a failed decode, never with a 500.
        raise decode_error(rt, f"unexpected value in the object: {exc}") from None
    return out


def normalize_template(template: dict | None) -> dict:
    """A pod template reduced to what makes it distinct: no nulls, defaults applied, no hash label."""
    t = normalize(template or {})
    meta = t.get("metadata")
    if isinstance(meta, dict):
        meta.pop("creationTimestamp", None)
        labels = meta.get("labels")
        if isinstance(labels, dict):
            labels.pop(POD_TEMPLATE_HASH, None)
            if not labels:
                del meta["labels"]
        if not meta:
            del t["metadata"]
    try:
        default_pod_template(t)
    except (TypeError, AttributeError, ValueError):
        pass  # never stored this way (prepare rejects it); compare it as it is
    return t


def template_equal(a: dict | None, b: dict | None) -> bool:
    """Pod templates equal up to normalisation and the pod-template-hash label (EqualIgnoreHash)."""
    return normalize_template(a) == normalize_template(b)
