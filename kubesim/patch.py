"""PATCH bodies: JSON patch, JSON merge patch, strategic merge patch and server-side apply.

``apply_patch`` returns a new object (the stored one is never touched); the caller then runs
``objects.prepare`` on it like on any other write. Errors are the API server's: 415 for an unknown
content type, 400 for bodies that do not decode, 422 for JSON patch operations that do not apply.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import jsonpatch
import jsonpointer
import yaml

from .errors import ApiError
from .resources import ResourceType
from .smp import SmpError, strategic_merge
from .tree import clone

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, APPLY_PATCH, STRATEGIC_MERGE_PATCH)


def _bad(message: str) -> ApiError:
    return ApiError(400, message, "BadRequest")


def _text(body: bytes | str) -> str:
    if isinstance(body, str):
        return body
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _bad(f"invalid character in request body: {exc}") from None


def _no_constants(name: str) -> Any:
    raise ValueError(f"invalid character '{name[0]}' looking for beginning of value")


def _json(body: bytes | str) -> Any:
    text = _text(body)
    try:
        return json.loads(text, parse_constant=_no_constants)  # NaN/Infinity are not JSON
    except json.JSONDecodeError as exc:
        raise _bad(f"error decoding patch: invalid JSON: {exc}") from None
    except ValueError as exc:
        raise _bad(f"error decoding patch: {exc}") from None
    except RecursionError:
        raise _bad("error decoding patch: JSON nested too deeply") from None


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def apply_patch(current: dict | None, body: bytes | str, content_type: str, rt: ResourceType) -> dict:
    """The patched object (a new dict). For server-side apply on an absent object: the parsed body."""
    try:
        return _apply(current, body, content_type, rt)
    except RecursionError:
        raise _bad("the patch is nested too deeply") from None


def _apply(current: dict | None, body: bytes | str, content_type: str, rt: ResourceType) -> dict:
    ct = media_type(content_type)
    if ct == JSON_PATCH:
        result = _json_patch(current or {}, _json(body))
    elif ct == MERGE_PATCH:
        result = merge_patch(current or {}, _json(body))
    elif ct == STRATEGIC_MERGE_PATCH:
        patch = _json(body)
        if not isinstance(patch, dict):
            raise _bad("invalid JSON document")
        result = _smp(current or {}, patch, rt)
    elif ct == APPLY_PATCH:
        config = parse_apply_body(body)
        if current is None:
            return config
        result = _smp(current, config, rt)
    else:
        raise ApiError(415, "the body of the request was in an unknown format - accepted media types include: "
                            + ", ".join(PATCH_TYPES), "UnsupportedMediaType")
    if not isinstance(result, dict):
        raise _bad(f"json: cannot unmarshal {_json_kind(result)} into Go value of type map[string]interface {{}}")
    if current is not None:
        _check_identity(current, result)
    return result


def _smp(current: dict, patch: dict, rt: ResourceType) -> dict:
    try:
        return strategic_merge(current, patch, rt.kind)
    except SmpError as exc:
        raise _bad(str(exc)) from None
    except RecursionError:
        raise _bad("patch nested too deeply") from None
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
        raise _bad(f"unable to apply patch: {exc}") from None


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return "null" if value is None else "object"


def _check_identity(current: dict, result: dict) -> None:
    old_meta = current.get("metadata") or {}
    new_meta = result.get("metadata")
    if not isinstance(new_meta, dict):
        return  # validation reports the malformed metadata
    old_name, new_name = old_meta.get("name"), new_meta.get("name")
    if old_name and new_name != old_name:
        raise _bad(f"the name of the object ({new_name}) does not match the name on the URL ({old_name})")
    old_ns, new_ns = old_meta.get("namespace"), new_meta.get("namespace")
    if old_ns and new_ns and new_ns != old_ns:
        raise _bad("the namespace of the provided object does not match the namespace sent on the request")


# -- RFC 7386 --------------------------------------------------------------------------------------

def merge_patch(target: Any, patch: Any) -> Any:
    """JSON merge patch: null deletes, objects merge recursively, everything else (lists too) replaces."""
    if not isinstance(patch, dict):
        return clone(patch)
    out = clone(target) if isinstance(target, dict) else {}
    _merge_into(out, patch)
    return out


def _merge_into(out: dict, patch: dict) -> None:
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            have = out.get(k)
            if not isinstance(have, dict):
                have = {}
                out[k] = have
            _merge_into(have, v)
        else:
            out[k] = clone(v)


# -- RFC 6902 --------------------------------------------------------------------------------------

def _json_patch(current: dict, ops: Any) -> Any:
    if not isinstance(ops, list):
        raise _bad(f"json: cannot unmarshal {_json_kind(ops)} into Go value of type jsonpatch.Patch")
    doc: Any = clone(current)
    for op in ops:
        if not isinstance(op, dict):
            raise _bad(f"json: cannot unmarshal {_json_kind(op)} into Go value of type jsonpatch.Operation")
        name, path = op.get("op"), op.get("path")
        try:
            doc = jsonpatch.JsonPatch([op]).apply(doc, in_place=True)
        except jsonpatch.JsonPatchTestFailed:
            raise _unprocessable(f"testing value {path} failed: test failed") from None
        except jsonpatch.InvalidJsonPatch as exc:
            if name not in ("add", "remove", "replace", "move", "copy", "test"):
                raise _unprocessable(f"Unexpected kind: {name}") from None
            raise _unprocessable(f"{name} operation is invalid: {exc}") from None
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, KeyError, IndexError,
                TypeError, ValueError) as exc:
            raise _unprocessable(f"{name} operation does not apply: doc is missing path: \"{path}\": {exc}") from None
    return doc


def _unprocessable(detail: str) -> ApiError:
    return ApiError(422, detail, "Invalid", {"causes": [{"type": "FieldValueInvalid", "message": detail,
                                                         "field": "patch"}]})


# -- server-side apply -----------------------------------------------------------------------------

class _Loader(yaml.SafeLoader):
    """YAML like sigs.k8s.io/yaml reads it: timestamps stay strings, keys become strings."""


_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _string_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {_key(k): _string_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_string_keys(v) for v in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"json: unsupported value: {value}")
    return value


def _key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, bool):
        return "true" if k else "false"
    return "null" if k is None else str(k)


def load_yaml(text: str) -> Any:
    """One YAML document as JSON-compatible data (raises ``yaml.YAMLError``)."""
    return _string_keys(yaml.load(text, Loader=_Loader))


def parse_apply_body(body: bytes | str) -> dict:
    """An apply configuration: JSON or a single YAML document, with apiVersion and kind."""
    text = _text(body)
    try:
        config = json.loads(text, parse_constant=_no_constants)
    except (ValueError, RecursionError):
        try:
            config = load_yaml(text)
        except (yaml.YAMLError, ValueError) as exc:
            raise _bad(f"error decoding YAML: {exc}") from None
        except RecursionError:
            raise _bad("error decoding YAML: document nested too deeply") from None
    if not isinstance(config, dict):
        raise _bad(f"error decoding YAML: json: cannot unmarshal {_json_kind(config)} into Go value of type "
                   "map[string]interface {}")
    for field in ("kind", "apiVersion"):
        if not config.get(field):
            raise _bad(f"Object '{'Kind' if field == 'kind' else field}' is missing in "
                       f"'{json.dumps(config, separators=(',', ':'), default=str)}'")
    return config
