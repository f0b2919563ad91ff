"""Mutating tools, sending the same requests kubectl does (see the kubectl traces): so kubesim
and a real API server see an agent's fix exactly as they would see an SRE's."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from typing import Any

import yaml

from ..sandbox.objects import BUILTIN_GROUPS
from ..sandbox.rest import JSON_PATCH, MERGE, PATCH_TYPES, STRATEGIC, KubeError
from .context import ToolContext, ToolError, qualified
from .reads import label_selector, owned_by

REVISION = "deployment.kubernetes.io/revision"
HASH_LABEL = "pod-template-hash"
ROLLBACK_SKIP = frozenset({"kubectl.kubernetes.io/last-applied-configuration", REVISION,
                           "deployment.kubernetes.io/revision-history", "deployment.kubernetes.io/desired-replicas",
                           "deployment.kubernetes.io/max-replicas", "deprecated.deployment.rollback.to"})


def parse_structured(value: Any, what: str) -> Any:
    """A dict/list as given, or a JSON/YAML string parsed."""
    if isinstance(value, (dict, list)):
        return copy.deepcopy(value)
    if isinstance(value, str):
        try:
            return yaml.safe_load(value)
        except yaml.YAMLError as e:
            raise ToolError(f"{what} is not valid JSON/YAML: {e}") from e
    raise ToolError(f"{what} must be an object or a JSON/YAML string")


async def _deployment(ctx: ToolContext, name: str) -> tuple[Any, dict[str, Any]]:
    info = await ctx.kind("Deployment")
    return info, await ctx.rest.get(info, ctx.namespace, name)


def _containers(dep: dict[str, Any]) -> list[dict[str, Any]]:
    return ((dep.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers") or []


def _targets(dep: dict[str, Any], container: str | None) -> list[dict[str, Any]]:
    containers = _containers(dep)
    if not container or container == "*":
        return containers
    found = [c for c in containers if c.get("name") == container]
    if not found:
        raise ToolError(f'error: unable to find container named "{container}"')
    return found


def _template_patch(dep: dict[str, Any], containers: list[dict[str, Any]]) -> dict[str, Any]:
    order = [{"name": c.get("name")} for c in _containers(dep)]
    return {"spec": {"template": {"spec": {"$setElementOrder/containers": order, "containers": containers}}}}


async def scale(ctx: ToolContext, args: dict[str, Any]) -> str:
    info = await ctx.kind(args.get("kind") or "Deployment")
    replicas = int(args["replicas"])
    if replicas < 0:
        raise ToolError("replicas must be >= 0")
    await ctx.rest.get(info, ctx.namespace, args["name"])
    await ctx.rest.patch(info, ctx.namespace, args["name"], {"spec": {"replicas": replicas}}, MERGE,
                         subresource="scale")
    return f"{qualified(info)}/{args['name']} scaled"


def _strip_hash(template: dict[str, Any]) -> dict[str, Any]:
    template = copy.deepcopy(template)
    labels = (template.get("metadata") or {}).get("labels")
    if labels:
        labels.pop(HASH_LABEL, None)
    return template


def _revision(obj: dict[str, Any]) -> int | None:
    try:
        return int(((obj.get("metadata") or {}).get("annotations") or {}).get(REVISION, ""))
    except ValueError:
        return None


def pick_revision(rsets: list[dict[str, Any]], to_revision: int, name: str) -> dict[str, Any]:
    """kubectl's deploymentRevision: ``to_revision`` 0 = the second-newest revision."""
    latest: tuple[int, dict[str, Any] | None] = (-1, None)
    previous: tuple[int, dict[str, Any] | None] = (-1, None)
    for rs in rsets:
        rev = _revision(rs)
        if rev is None:
            continue
        if to_revision == 0:
            if latest[0] < rev:
                previous, latest = latest, (rev, rs)
            elif previous[0] < rev:
                previous = (rev, rs)
        elif rev == to_revision:
            return rs
    if to_revision > 0:
        raise ToolError(f"error: unable to find specified revision {to_revision} in history")
    if previous[1] is None:
        raise ToolError(f'error: no rollout history found for deployment "{name}"')
    return previous[1]


async def rollout_undo(ctx: ToolContext, args: dict[str, Any]) -> str:
    name = args["deployment"]
    info, dep = await _deployment(ctx, name)
    if (dep.get("spec") or {}).get("paused"):
        raise ToolError("error: you cannot rollback a paused deployment; resume it first with "
                        "'kubectl rollout resume' and try again")
    rs_info = await ctx.kind("ReplicaSet")
    rsets = await ctx.rest.list(rs_info, ctx.namespace,
                                label_selector=label_selector((dep.get("spec") or {}).get("selector")))
    rsets = [rs for rs in rsets if owned_by(rs, dep["metadata"].get("uid", ""))]
    target = pick_revision(rsets, int(args.get("to_revision") or 0), name)
    template = _strip_hash((target.get("spec") or {}).get("template") or {})
    if template == _strip_hash((dep.get("spec") or {}).get("template") or {}):
        return (f"{qualified(info)}/{name} skipped rollback (current template already matches revision "
                f"{_revision(target)})")
    template.setdefault("metadata", {})["creationTimestamp"] = None  # as kubectl serialises it
    dep_ann = (dep["metadata"].get("annotations") or {})
    annotations = {k: v for k, v in dep_ann.items() if k in ROLLBACK_SKIP}
    annotations.update({k: v for k, v in ((target["metadata"].get("annotations") or {}).items())
                        if k not in ROLLBACK_SKIP})
    patch = [{"op": "replace", "path": "/spec/template", "value": template},
             {"op": "replace", "path": "/metadata/annotations", "value": annotations}]
    await ctx.rest.patch(info, ctx.namespace, name, patch, JSON_PATCH)
    return f"{qualified(info)}/{name} rolled back (to revision {_revision(target)})"


async def rollout_restart(ctx: ToolContext, args: dict[str, Any]) -> str:
    name = args["deployment"]
    info, dep = await _deployment(ctx, name)
    if (dep.get("spec") or {}).get("paused"):
        raise ToolError(f"error: deployments/{name} can't restart paused deployment (run rollout resume first)")
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    patch = {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": now}}}}}
    await ctx.rest.patch(info, ctx.namespace, name, patch, STRATEGIC, field_manager="kubectl-rollout")
    return f"{qualified(info)}/{name} restarted"


async def set_image(ctx: ToolContext, args: dict[str, Any]) -> str:
    name, image = args["deployment"], str(args["image"])
    info, dep = await _deployment(ctx, name)
    targets = [c for c in _targets(dep, args.get("container")) if c.get("image") != image]
    if not targets:
        return f"{qualified(info)}/{name} image unchanged"
    patch = _template_patch(dep, [{"image": image, "name": c.get("name")} for c in targets])
    await ctx.rest.patch(info, ctx.namespace, name, patch, STRATEGIC, field_manager="kubectl-set")
    return f"{qualified(info)}/{name} image updated"


def env_patch(container: dict[str, Any], env: dict[str, Any]) -> dict[str, Any] | None:
    """kubectl set env's strategic-merge entry for one container, or None when nothing changes."""
    current = {e.get("name"): e for e in container.get("env") or []}
    entries: list[dict[str, Any]] = []
    removed = set()
    for key, value in env.items():
        old = current.get(key)
        if value is None:
            if old is not None:
                entries.append({"$patch": "delete", "name": key})
                removed.add(key)
            continue
        value = json.dumps(value) if isinstance(value, (dict, list, bool)) else str(value)
        if old is not None and old.get("value") == value and "valueFrom" not in old:
            continue
        entry: dict[str, Any] = {"name": key, "value": value}
        if old is not None and "valueFrom" in old:
            entry["valueFrom"] = None
        entries.append(entry)
    if not entries:
        return None
    order = [n for n in current if n not in removed] + [k for k, v in env.items() if v is not None and k not in current]
    return {"$setElementOrder/env": [{"name": n} for n in order], "env": entries, "name": container.get("name")}


async def set_env(ctx: ToolContext, args: dict[str, Any]) -> str:
    name, env = args["deployment"], args["env"]
    if not isinstance(env, dict) or not env:
        raise ToolError("env must be a non-empty object of NAME: value (null removes NAME)")
    info, dep = await _deployment(ctx, name)
    changes = [p for p in (env_patch(c, env) for c in _targets(dep, args.get("container"))) if p]
    if not changes:
        return f"{qualified(info)}/{name} env unchanged"
    await ctx.rest.patch(info, ctx.namespace, name, _template_patch(dep, changes), STRATEGIC,
                         field_manager="kubectl-set")
    return f"{qualified(info)}/{name} env updated"


async def patch(ctx: ToolContext, args: dict[str, Any]) -> str:
    info = await ctx.kind(args["kind"])
    ptype = str(args.get("patch_type") or "strategic")
    ctype = PATCH_TYPES.get(ptype)
    if ctype is None or ptype == "apply":
        raise ToolError(f"patch_type must be one of strategic, merge, json (got {ptype!r})")
    body = parse_structured(args["patch"], "patch")
    if ptype == "json" and not isinstance(body, list):
        raise ToolError("a json patch must be a list of operations")
    if ptype != "json" and not isinstance(body, dict):
        raise ToolError(f"a {ptype} patch must be an object")
    before = await ctx.rest.get(info, ctx.namespace, args["name"])
    after = await ctx.rest.patch(info, ctx.namespace, args["name"], body, ctype, field_manager="kubectl-patch")
    same = (before.get("metadata") or {}).get("resourceVersion") == ((after or {}).get("metadata") or {}).get(
        "resourceVersion")
    return f"{qualified(info)}/{args['name']} patched" + (" (no change)" if same else "")


async def delete(ctx: ToolContext, args: dict[str, Any]) -> str:
    info = await ctx.kind(args["kind"])
    await ctx.rest.delete(info, ctx.namespace, args["name"])
    return f'{qualified(info)} "{args["name"]}" deleted'


def manifest_of(args: dict[str, Any]) -> dict[str, Any]:
    doc = parse_structured(args.get("manifest"), "manifest")
    if not isinstance(doc, dict) or not doc.get("kind") or not (doc.get("metadata") or {}).get("name"):
        raise ToolError("manifest must be one object with kind and metadata.name")
    return doc


async def apply(ctx: ToolContext, args: dict[str, Any]) -> str:
    doc = manifest_of(args)
    try:
        info = await ctx.rest.resolve(doc["kind"], doc.get("apiVersion"))
    except KubeError as e:
        if e.status == 404:
            raise ToolError(f'no matches for kind "{doc["kind"]}" in version "{doc.get("apiVersion")}"') from e
        raise
    meta = doc.setdefault("metadata", {})
    if info.namespaced:
        meta["namespace"] = meta.get("namespace") or ctx.namespace
    name, ns = meta["name"], meta.get("namespace")
    current = await ctx.rest.get_or_none(info, ns, name)
    if current is None:
        await ctx.rest.request("POST", info.collection_path(ns), body=doc,
                               query={"fieldManager": "kubectl-client-side-apply"})
        return f"{qualified(info)}/{name} created"
    ctype = STRATEGIC if info.group in BUILTIN_GROUPS else MERGE
    after = await ctx.rest.patch(info, ns, name, doc, ctype, field_manager="kubectl-client-side-apply")
    same = (current.get("metadata") or {}).get("resourceVersion") == ((after or {}).get("metadata") or {}).get(
        "resourceVersion")
    return f"{qualified(info)}/{name} {'unchanged' if same else 'configured'}"
