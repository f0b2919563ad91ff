"""Request/response values and content negotiation shared by every HTTP handler.

Bodies are JSON unless the client says otherwise (the Python client sends no Content-Type at
all); YAML is accepted because the real server accepts it; protobuf is decoded for the kinds
kubectl's typed commands create (see protobuf.py) and refused with 415 otherwise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import yaml

from . import protobuf
from .errors import ApiError

JSON = b"application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"
TEXT = b"text/plain"
OCTETS = b"application/octet-stream"
MAX_BODY_BYTES = 3 * 1024 * 1024  # the real server's request size limit

_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode
_YamlLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)


@dataclass(slots=True)
class Request:
    """One parsed HTTP request, as the handlers see it."""

    method: str
    path: str
    query: dict[str, str]
    accept: str = ""
    content_type: str = ""  # media type only, lower-case, parameters stripped
    body: bytes = b""
    user: Any = None  # auth.UserInfo once authenticated
    raw_query: bytes = b""  # for handlers that need repeated parameters (the Prometheus API)

    def flag(self, name: str) -> bool:
        return self.query.get(name, "").lower() in ("true", "1")

    def int_param(self, name: str, minimum: int | None = None) -> int | None:
        raw = self.query.get(name)
        if raw is None or raw == "":
            return None
        try:
            value = int(raw)
        except ValueError:
            raise ApiError(400, f'invalid value for query parameter "{name}": {raw!r} is not an integer') from None
        if minimum is not None and value < minimum:
            raise ApiError(400, f'invalid value for query parameter "{name}": must be >= {minimum}')
        return value

    @property
    def dry_run(self) -> bool:
        value = self.query.get("dryRun")
        if value is None:
            return False
        if value != "All":
            raise ApiError(400, f'Invalid dryRun value "{value}": only "All" is supported', "BadRequest")
        return True


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: bytes
    content_type: bytes = JSON


def dumps(obj: Any) -> bytes:
    return _encode(obj).encode("utf-8")


def json_response(obj: Any, status: int = 200) -> Response:
    return Response(status, dumps(obj))


def error_response(err: ApiError) -> Response:
    return Response(err.code, dumps(err.status()))


def success_status(code: int = 200, details: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    if details:
        body["details"] = details
    if code != 200:
        body["code"] = code
    return body


def media_type(header: str) -> str:
    return header.split(";", 1)[0].strip().lower()


def _decode_json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ApiError(400, f"couldn't get version/kind; json parse error: {e}", "BadRequest") from None


def _decode_yaml(body: bytes) -> Any:
    try:
        return yaml.load(body, Loader=_YamlLoader)  # noqa: S506 - a safe loader
    except (yaml.YAMLError, ValueError, RecursionError) as e:
        raise ApiError(400, f"error converting YAML to JSON: {str(e).splitlines()[0] if str(e) else e}",
                       "BadRequest") from None


def unsupported_media(content_type: str, accepted: str) -> ApiError:
    return ApiError(415, f'the body of the request was in an unknown format - accepted media types include: '
                         f'{accepted}', "UnsupportedMediaType")


def decode_body(req: Request, *, required: bool = True) -> Any:
    """The request body as a JSON value (JSON or YAML on the wire)."""
    body = req.body
    if not body.strip():
        if not required:
            return None
        raise ApiError(400, "the request body is empty; expected a JSON object", "BadRequest")
    ct = req.content_type
    if ct in ("", "application/json", "*/*", "text/plain"):
        return _decode_json(body)
    if ct in ("application/yaml", "application/x-yaml", "text/yaml", "application/apply-patch+yaml"):
        return _decode_yaml(body)
    if ct == PROTOBUF:
        return protobuf.decode(body)
    raise unsupported_media(ct, "application/json, application/yaml, application/vnd.kubernetes.protobuf")


def decode_object(req: Request) -> dict[str, Any]:
    value = decode_body(req)
    if not isinstance(value, dict):
        got = type(value).__name__ if value is not None else "null"
        raise ApiError(400, f"the request body must be a JSON object, not {got}", "BadRequest")
    return value


def decode_apply_body(body: bytes) -> dict[str, Any]:
    """A server-side apply body: JSON (what kubectl sends) or YAML."""
    stripped = body.lstrip()
    value = _decode_json(body) if stripped[:1] in (b"{", b"[") else _decode_yaml(body)
    if not isinstance(value, dict):
        raise ApiError(400, "the apply patch must be a YAML or JSON object", "BadRequest")
    return value


def wants_as(accept: str) -> str | None:
    """The meta.k8s.io transformation the client asked for: "Table", "PartialObjectMetadata[List]" or None."""
    if "as=" not in accept:
        return None
    for part in accept.split(","):
        for param in part.split(";")[1:]:
            key, _, value = param.strip().partition("=")
            if key == "as" and value in ("Table", "PartialObjectMetadata", "PartialObjectMetadataList"):
                return value
    return None
