"""What a raw Kubernetes API request does, in the gateway's terms (verb × resource × namespace × name).

The audit proxy sees HTTP, the invariants and the audit log speak ``Action``: this module maps one
onto the other the way the API server's request-info resolver does (RBAC verbs, "pods/log"-style
subresources, the namespace object itself being cluster-scoped), and sorts out what is not a
resource request at all: discovery (free), the Prometheus HTTP API kubesim serves next to the
Kubernetes API, and anything else (refused).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qs

from .invariants import Action

RequestKind = Literal["resource", "discovery", "prometheus", "other"]
DISCOVERY_ROOTS = ("/version", "/openapi", "/healthz", "/livez", "/readyz", "/.well-known")
PROMETHEUS_ENDPOINTS = frozenset({"query", "query_range", "query_exemplars", "series", "labels", "label", "rules",
                                  "alerts", "metadata", "targets", "status", "format_query"})
CONNECT_SUBRESOURCES = frozenset({"exec", "attach", "portforward", "proxy"})
BODY_NAME_LIMIT = 256 * 1024


@dataclass(frozen=True)
class ApiRequest:
    kind: RequestKind
    action: Action | None = None
    watch: bool = False
    stream: bool = False  # a long-lived response: a watch or a followed log

    @property
    def connect(self) -> bool:
        """exec/attach/port-forward/proxy: interactive channels the proxy does not carry."""
        return self.action is not None and self.action.resource.split("/")[-1] in CONNECT_SUBRESOURCES


def _flag(query: dict[str, list[str]], name: str) -> bool:
    return (query.get(name) or [""])[-1].lower() in ("true", "1")


def _body_name(body: bytes | None) -> str | None:
    if not body or len(body) > BODY_NAME_LIMIT:
        return None
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) and name else None


def _verb(method: str, name: str | None, watch: bool) -> str:
    method = method.upper()
    if method in ("GET", "HEAD", "OPTIONS"):
        return "watch" if watch else ("get" if name else "list")
    if method == "POST":
        return "create"
    if method == "PUT":
        return "update"
    if method == "PATCH":
        return "patch"
    if method == "DELETE":
        return "delete" if name else "deletecollection"
    return method.lower()


def _prometheus(parts: list[str]) -> ApiRequest:
    """kubesim's Prometheus API prefixes: /prometheus[/namespaces/<ns>]/api/v1/<endpoint> and
    /kubesim/v1/namespaces/<ns>/prometheus/api/v1/<endpoint>; anything else is not served."""
    namespace, rest = None, None
    if parts[0] == "prometheus":
        if len(parts) > 2 and parts[1] == "namespaces":
            namespace, rest = parts[2], parts[3:]
        else:
            rest = parts[1:]
    elif parts[:3] == ["kubesim", "v1", "namespaces"] and len(parts) > 4 and parts[4] == "prometheus":
        namespace, rest = parts[3], parts[5:]
    if rest is None or rest[:2] != ["api", "v1"] or len(rest) < 3 or rest[2] not in PROMETHEUS_ENDPOINTS:
        return ApiRequest("other")
    return ApiRequest("prometheus", Action("get", f"prometheus/{rest[2]}", namespace))


def classify(method: str, path: str, query_string: str = "", body: bytes | None = None) -> ApiRequest:
    """Classify one request by method, path (without query) and raw query string."""
    query = parse_qs(query_string, keep_blank_values=True)
    parts = [p for p in path.split("/") if p]
    if not parts or any(path == root or path.startswith(root + "/") for root in DISCOVERY_ROOTS):
        return ApiRequest("discovery")
    if parts[0] == "api":
        if len(parts) <= 2:
            return ApiRequest("discovery")
        rest = parts[2:]
    elif parts[0] == "apis":
        if len(parts) <= 3:
            return ApiRequest("discovery")
        rest = parts[3:]
    else:
        return _prometheus(parts)
    if parts[0] == "api" and rest[0] in PROMETHEUS_ENDPOINTS:
        return ApiRequest("prometheus", Action("get", f"prometheus/{rest[0]}", None))

    watch = _flag(query, "watch")
    if rest[0] == "watch":  # the deprecated /api/v1/watch/... form
        watch, rest = True, rest[1:]
        if not rest:
            return ApiRequest("other")
    namespace: str | None = None  # stays None for the namespace object itself: it is cluster-scoped
    if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in ("status", "finalize"):
        namespace, rest = rest[1], rest[2:]
    resource, name = rest[0], (rest[1] if len(rest) > 1 else None)
    if len(rest) > 2:
        resource = f"{resource}/{'/'.join(rest[2:3])}"
    verb = _verb(method, name, watch)
    if verb == "create" and name is None:
        name = _body_name(body)
    follow = resource.endswith("/log") and _flag(query, "follow")
    return ApiRequest("resource", Action(verb, resource, namespace, name), watch=watch, stream=watch or follow)
