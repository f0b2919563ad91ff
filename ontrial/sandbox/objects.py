"""Object-level work inside a sandbox namespace: apply manifests, apply fault steps, snapshot. Errors name the object, so a bad task manifest reads as one clear line."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from typing import Any

from ..errors import InfraError
from .kinds import KindInfo, lookup_kind
from .rest import MERGE, PATCH_TYPES, STRATEGIC, KubeError, KubeRest

SNAPSHOT_KINDS = ("Deployment", "ReplicaSet", "Pod", "Service", "Endpoints", "ConfigMap", "ServiceAccount",
                  "ResourceQuota", "LimitRange", "StatefulSet", "DaemonSet", "Job", "Event")
BUILTIN_GROUPS = {"", "apps", "batch", "autoscaling", "networking.k8s.io", "policy", "rbac.authorization.k8s.io"}


def plain(value: Any) -> Any:
    """Pydantic models (task steps) and plain dicts alike, as plain JSON-able data."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True, by_alias=True)
    return copy.deepcopy(value)


def describe_obj(obj: dict[str, Any]) -> str:
    return f"{obj.get('kind', '?')}/{(obj.get('metadata') or {}).get('name', '?')}"


def _fail(what: str, err: KubeError) -> InfraError:
    return err.infra(what)


async def apply_object(rest: KubeRest, namespace: str, manifest: dict[str, Any],
                       field_manager: str = "ontrial") -> tuple[str, dict[str, Any]]:
    """Create the object in ``namespace``, or patch it when it exists. Returns ("created"|"configured", obj)."""
    obj = plain(manifest)
    if not isinstance(obj, dict) or not obj.get("kind") or not (obj.get("metadata") or {}).get("name"):
        raise InfraError(f"manifest needs kind and metadata.name: {json.dumps(obj)[:200]}", transient=False)
    what = describe_obj(obj)
    try:
        info = await rest.resolve(obj["kind"], obj.get("apiVersion"))
    except KubeError as e:
        raise _fail(f"apply {what}", e) from e
    obj.setdefault("apiVersion", info.api_version)
    meta = obj.setdefault("metadata", {})
    if info.namespaced:
        meta["namespace"] = namespace
    for key in ("resourceVersion", "uid", "creationTimestamp", "managedFields"):
        meta.pop(key, None)
    obj.pop("status", None)
    try:
        return "created", await rest.create(info, namespace, obj)
    except KubeError as e:
        if e.status != 409:
            raise _fail(f"create {what}", e) from e
    ctype = STRATEGIC if info.group in BUILTIN_GROUPS else MERGE
    try:
        return "configured", await rest.patch(info, namespace, meta["name"], obj, ctype, field_manager=field_manager)
    except KubeError as e:
        raise _fail(f"patch {what}", e) from e


async def _kind(rest: KubeRest, kind: str, what: str) -> KindInfo:
    try:
        return await rest.resolve(kind)
    except KubeError as e:
        raise _fail(what, e) from e


async def apply_fault_step(rest: KubeRest, namespace: str, step: Any) -> str:
    """One fault step ({patch|delete|apply|scale: ...}) → one description line."""
    step = plain(step)
    if not isinstance(step, dict):
        raise InfraError(f"fault step must be a mapping, got {type(step).__name__}", transient=False)
    action = [k for k in ("patch", "delete", "apply", "scale") if step.get(k) is not None]
    if len(action) != 1:
        raise InfraError(f"fault step needs exactly one of patch/delete/apply/scale: {step}", transient=False)
    verb, body = action[0], step[action[0]]
    if verb == "apply":
        result, obj = await apply_object(rest, namespace, body.get("manifest") or body, "ontrial-fault")
        return f"apply {describe_obj(obj)} ({result})"
    kind, name = body.get("kind", ""), body.get("name")
    info = await _kind(rest, kind, f"fault {verb} {kind}")
    what = f"{info.kind}/{name}"
    try:
        if verb == "patch":
            ptype = body.get("type") or "strategic"
            ctype = PATCH_TYPES.get(ptype)
            if ctype is None:
                raise InfraError(f"fault patch {what}: unknown patch type {ptype!r}", transient=False)
            patch = body.get("patch")
            if isinstance(patch, str):
                patch = json.loads(patch)
            await rest.patch(info, namespace, name, patch, ctype, field_manager="ontrial-fault")
            return f"patch {what} ({ptype})"
        if verb == "scale":
            await rest.patch(info, namespace, name, {"spec": {"replicas": int(body["replicas"])}}, MERGE,
                             subresource="scale")
            return f"scale {what} to {int(body['replicas'])}"
        # delete
        if name:
            await rest.delete(info, namespace, name)
            return f"delete {what}"
        selector = body.get("selector")
        if not selector:
            raise InfraError(f"fault delete {info.kind}: needs name or selector", transient=False)
        if isinstance(selector, dict):
            selector = ",".join(f"{k}={v}" for k, v in selector.items())
        victims = await rest.list(info, namespace, label_selector=selector)
        for obj in victims:
            try:
                await rest.delete(info, namespace, obj["metadata"]["name"])
            except KubeError as e:
                if e.status != 404:
                    raise
        names = ", ".join(o["metadata"]["name"] for o in victims)
        return f"delete {info.kind} -l {selector} ({len(victims)} deleted{': ' + names if names else ''})"
    except KubeError as e:
        raise _fail(f"fault {verb} {what}", e) from e
    except (KeyError, TypeError, ValueError) as e:
        raise InfraError(f"fault {verb} {what}: malformed step: {e}", transient=False) from e


def _strip(obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    (obj.get("metadata") or {}).pop("managedFields", None)
    return obj


async def namespace_objects(rest: KubeRest, namespace: str,
                            kinds: tuple[str, ...] = SNAPSHOT_KINDS) -> dict[str, list[dict[str, Any]]]:
    """Every object of ``kinds`` in the namespace (kinds the server lacks are skipped)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for kind in kinds:
        info = lookup_kind(kind)
        assert info is not None
        try:
            items = await rest.list(info, namespace)
        except KubeError as e:
            if e.status in (404, 405):
                continue
            raise
        out[kind] = [_strip(o) for o in items]
    return out


async def snapshot_json(rest: KubeRest, namespace: str) -> str:
    objects = await namespace_objects(rest, namespace)
    doc = {"namespace": namespace, "taken_at": datetime.now(timezone.utc).isoformat(), "objects": objects}
    return json.dumps(doc, indent=1, sort_keys=True, default=str)
