"""How kubesim's HTTP server hands requests to telemetry: which paths are telemetry's, and who may
use them. The whole-cluster Prometheus view and the admin endpoints need the admin token; a
namespace's own Prometheus view (``/prometheus/namespaces/<ns>/...``) is open to anyone the
server's ``can_read(namespace)`` admits, so an agent can be confined to its trial namespace."""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from . import admin, prom_api

_SCOPED = re.compile(r"^/prometheus/namespaces/(?P<ns>[a-z0-9-]+)(?:/|$)")


def matches(path: str) -> bool:
    return path == "/prometheus" or path.startswith("/prometheus/") or admin.handles(path)


def _forbidden(path: str) -> tuple[int, bytes, bytes]:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f'forbidden: cannot get path "{path}"', "reason": "Forbidden", "code": 403}
    return 403, b"application/json", json.dumps(body).encode()


def serve(cluster: Any, method: str, path: str, query: Any, body: bytes | None, is_admin: bool,
          can_read: Callable[[str], bool] = lambda ns: False) -> tuple[int, bytes, bytes]:
    """(status, content type, body) for a telemetry path (``matches(path)`` must be true)."""
    if not is_admin:
        m = _SCOPED.match(path)
        if m is None or not can_read(m.group("ns")):
            return _forbidden(path)
    if path.startswith("/prometheus"):
        status, headers, payload = prom_api.handle(cluster, method, path, query, body)
    else:
        status, headers, payload = admin.handle(cluster, method, path, query, body)
    ctype = next((v for k, v in headers if k.lower() == "content-type"), "application/json")
    return status, ctype.encode(), payload
