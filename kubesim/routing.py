"""Turn a URL into Kubernetes request attributes, the way apiserver's RequestInfoFactory does.

The same ``RequestInfo`` drives RBAC, handler dispatch and error wording, so routing and
authorization can never disagree about what a request is.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ApiError
from .resources import RESOURCES, ResourceType

_NAMESPACE_SUBRESOURCES = frozenset(("status", "finalize"))
_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}

# (group, version) -> {plural: ResourceType}; a missing key means the group-version is not served.
SERVED: dict[tuple[str, str], dict[str, ResourceType]] = {}
for _rt in RESOURCES:
    SERVED.setdefault((_rt.group, _rt.version), {})[_rt.plural] = _rt


@dataclass(slots=True)
class RequestInfo:
    resource_request: bool
    verb: str
    path: str
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    name: str = ""
    subresource: str = ""
    rt: ResourceType | None = None


def not_found_path() -> ApiError:
    return ApiError(404, "the server could not find the requested resource", "NotFound", {})


def method_not_allowed() -> ApiError:
    return ApiError(405, "the server does not allow this method on the requested resource", "MethodNotAllowed", {})


def parse(method: str, path: str, watch_param: bool) -> RequestInfo:
    """Classify a request; raises 404 for resource paths kubesim does not serve."""
    parts = path.strip("/").split("/")
    head = parts[0]
    if head == "api" and len(parts) >= 3:
        group, version, rest = "", parts[1], parts[2:]
    elif head == "apis" and len(parts) >= 4:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return RequestInfo(False, method.lower() if method != "GET" else "get", path)
    watch = False
    if rest[0] == "watch":
        watch, rest = True, rest[1:]
        if not rest:
            raise not_found_path()
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    if len(rest) > 3 or "" in rest:
        raise not_found_path()
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    rt = SERVED.get((group, version), {}).get(resource)
    if rt is None:
        raise not_found_path()
    if rt.namespaced:
        if name and not namespace:
            raise not_found_path()
    elif namespace and resource != "namespaces":
        raise not_found_path()
    if sub and sub not in rt.subresources:
        raise not_found_path()
    if method == "GET":
        verb = "watch" if (watch or watch_param) else ("get" if name else "list")
        if verb == "watch" and sub:
            raise not_found_path()
    elif watch:
        raise method_not_allowed()
    elif method == "DELETE":
        verb = "delete" if name else "deletecollection"
    else:
        verb = _VERBS.get(method, "")
        if not verb:
            raise method_not_allowed()
    return RequestInfo(True, verb, path, group, version, namespace, resource, name, sub, rt)
