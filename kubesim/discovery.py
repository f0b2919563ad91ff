"""Legacy (non-aggregated) discovery documents, built once from ``resources.RESOURCES``.

kubectl 1.32 and kubernetes-mcp-server ask for aggregated discovery first but fall back to
per-group-version documents when ``/api`` and ``/apis`` answer plain ``APIVersions`` /
``APIGroupList`` JSON, so that is all kubesim serves.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .resources import SUBRESOURCE_KINDS, GroupVersion, ResourceType, group_versions
from .wire import dumps

# kubectl 1.32 warns when the server is more than one minor version away; kubectl 1.20 never
# checks skew. v1.32 therefore keeps both quiet.
VERSION_INFO = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.4",
    "gitCommit": "59526cd4867447956156ae3a602fcbac10a2c335",
    "gitTreeState": "clean",
    "buildDate": "2025-04-22T16:02:27Z",
    "goVersion": "go1.23.6",
    "compiler": "gc",
    "platform": "linux/amd64",
}

# Paths every authenticated user may read (the system:discovery / system:public-info-viewer roles).
PUBLIC_PATH_PREFIXES = ("/api", "/apis", "/version", "/openapi", "/healthz", "/livez", "/readyz")
HEALTH_PATHS = ("/healthz", "/livez", "/readyz")


def _storage_hash(rt: ResourceType) -> str:
    return hashlib.sha256(f"{rt.group}/{rt.version}/{rt.kind}".encode()).hexdigest()[:11]


def api_resource(rt: ResourceType) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": sorted(rt.verbs),
    }
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    if rt.stored:
        entry["storageVersionHash"] = _storage_hash(rt)
    return entry


def subresource_entry(rt: ResourceType, sub: str) -> dict[str, Any]:
    group, version, kind, verbs = SUBRESOURCE_KINDS[sub]
    entry: dict[str, Any] = {
        "name": f"{rt.plural}/{sub}",
        "singularName": "",
        "namespaced": rt.namespaced,
        "kind": kind or rt.kind,
        "verbs": list(verbs),
    }
    if group or (version and version != rt.version):
        entry["group"] = group
        entry["version"] = version
    return entry


def resource_list(gv: GroupVersion) -> dict[str, Any]:
    resources: list[dict[str, Any]] = []
    for rt in gv.resources:
        resources.append(api_resource(rt))
        resources.extend(subresource_entry(rt, sub) for sub in rt.subresources)
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{gv.group}/{gv.version}" if gv.group else gv.version,
        "resources": resources,
    }


def _api_group(group: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": entries, "preferredVersion": entries[0]}


def build_documents(server_address: str = "127.0.0.1:6443") -> dict[str, bytes]:
    """Every discovery path mapped to its encoded JSON body."""
    docs: dict[str, bytes] = {}
    gvs = group_versions()
    groups: dict[str, list[str]] = {}
    for gv in gvs:
        if gv.group:
            groups.setdefault(gv.group, []).append(gv.version)
            docs[f"/apis/{gv.group}/{gv.version}"] = dumps(resource_list(gv))
        else:
            docs[f"/api/{gv.version}"] = dumps(resource_list(gv))
    docs["/api"] = dumps({
        "kind": "APIVersions",
        "versions": [gv.version for gv in gvs if not gv.group],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
    docs["/apis"] = dumps({
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_api_group(g, vs) for g, vs in groups.items()],
    })
    for g, vs in groups.items():
        docs[f"/apis/{g}"] = dumps(dict(_api_group(g, vs), kind="APIGroup", apiVersion="v1"))
    docs["/version"] = dumps(VERSION_INFO)
    return docs


def is_public_path(path: str) -> bool:
    """Non-resource paths that need authentication but no RBAC grant."""
    return path.startswith(PUBLIC_PATH_PREFIXES)
