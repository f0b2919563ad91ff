"""The generic REST verbs every stored resource type gets: get, list, create, update, patch,
delete and deletecollection, with the real server's status codes and error wording.

Handlers are synchronous (the store never awaits); a write marks its namespace dirty and the
server reconciles the cluster before the next read.
"""

from __future__ import annotations

from typing import Any

from . import objects, patch, tables
from .cluster import Cluster
from .controllers import delete_with_propagation
from .errors import ApiError, not_found
from .paging import Page, paginate
from .resources import NAMESPACES, NODES, ResourceType
from .selectors import FieldSelector, LabelSelector
from .store import Obj
from .tree import clone
from .wire import (PATCH_TYPES, Request, Response, decode_apply_body, decode_object, dumps, json_response,
                   success_status, unsupported_media, wants_as)
from .workloads import admission

# Registries whose DELETE answers with the deleted object instead of a Status.
RETURNS_DELETED = frozenset((("", "pods"), ("", "services"), ("", "namespaces"), ("", "persistentvolumeclaims")))
# Types whose status may be set on create (the node registry allows it).
STATUS_ON_CREATE = frozenset((NODES.key,))
_CLIENT_IGNORED_META = ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
                        "deletionGracePeriodSeconds", "generation", "managedFields", "selfLink")
PROPAGATION = ("Foreground", "Background", "Orphan")


def qualified(rt: ResourceType) -> str:
    return f"{rt.plural}.{rt.group}" if rt.group else rt.plural


def metadata_of(obj: Obj) -> dict[str, Any]:
    m = obj.get("metadata")
    if m is None:
        m = obj["metadata"] = {}
    if not isinstance(m, dict):
        raise ApiError(400, f"metadata must be an object, not {type(m).__name__}", "BadRequest")
    return m


def check_type(rt: ResourceType, obj: Obj) -> None:
    """The body's apiVersion/kind, when present, must name the endpoint's type."""
    av, kind = obj.get("apiVersion"), obj.get("kind")
    if av not in (None, "") and av != rt.api_version:
        raise ApiError(400, f"the API version in the data ({av}) does not match the expected API version "
                            f"({rt.api_version})", "BadRequest")
    if kind not in (None, "") and kind != rt.kind:
        raise ApiError(400, f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})",
                       "BadRequest")


def check_identity(rt: ResourceType, m: dict[str, Any], namespace: str, name: str | None) -> None:
    """Fill in or verify the namespace and name the URL gives."""
    if rt.namespaced:
        body_ns = m.get("namespace")
        if body_ns in (None, ""):
            m["namespace"] = namespace
        elif body_ns != namespace:
            raise ApiError(400, "the namespace of the provided object does not match the namespace sent on the "
                                "request", "BadRequest")
    else:
        m.pop("namespace", None)
    if name is not None:
        body_name = m.get("name")
        if body_name in (None, ""):
            m["name"] = name
        elif body_name != name:
            raise ApiError(400, f"the name of the object ({body_name}) does not match the name on the URL ({name})",
                           "BadRequest")


def field_selector(kind: str, req: Request) -> FieldSelector | None:
    text = req.query.get("fieldSelector")
    if not text:
        return None
    fsel = FieldSelector.parse(text)
    fsel.check_supported(kind)
    return fsel


def filtered(kind: str, objs: list[Obj], req: Request) -> list[Obj]:
    """Objects passing the request's labelSelector and fieldSelector (400 for unsupported fields)."""
    text = req.query.get("labelSelector")
    if text:
        sel = LabelSelector.parse(text)
        objs = [o for o in objs if sel.matches(o["metadata"].get("labels") or {})]
    fsel = field_selector(kind, req)
    if fsel is not None:
        objs = [o for o in objs if fsel.matches(o)]
    return objs


def partial(obj: Obj) -> Obj:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata", {})}


class Rest:
    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.store = cluster.store

    # -- rendering --------------------------------------------------------------------------
    def table(self, rt: ResourceType, objs: list[Obj], req: Request) -> Obj:
        include = req.query.get("includeObject") or "Metadata"
        if include not in ("None", "Metadata", "Object"):
            raise ApiError(400, f'invalid includeObject "{include}": must be None, Metadata or Object', "BadRequest")
        table = tables.render_table(rt, objs, self.cluster.clock.now(), include)
        table.setdefault("metadata", {}).setdefault("resourceVersion", str(self.store.resource_version))
        return table

    def render_one(self, rt: ResourceType, obj: Obj, req: Request, status: int = 200) -> Response:
        as_ = wants_as(req.accept) if req.accept else None
        if as_ == "Table":
            return json_response(self.table(rt, [obj], req), status)
        if as_ == "PartialObjectMetadata":
            return json_response(partial(obj), status)
        return Response(status, dumps(obj))

    def list_body(self, rt: ResourceType, items: list[Obj]) -> Obj:
        return {"kind": f"{rt.kind}List", "apiVersion": rt.api_version,
                "metadata": {"resourceVersion": str(self.store.resource_version)}, "items": items}

    def render_list(self, rt: ResourceType, page: Page, req: Request) -> Response:
        as_ = wants_as(req.accept) if req.accept else None
        if as_ == "Table":
            body = self.table(rt, page.items, req)
        elif as_ in ("PartialObjectMetadata", "PartialObjectMetadataList"):
            body = {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                    "metadata": {"resourceVersion": str(self.store.resource_version)},
                    "items": [partial(o) for o in page.items]}
        else:
            body = self.list_body(rt, page.items)
        body["metadata"].update(page.metadata())
        return json_response(body)

    # -- reads ------------------------------------------------------------------------------
    def get(self, rt: ResourceType, ns: str, name: str, req: Request) -> Response:
        return self.render_one(rt, self.store.get(rt, ns, name), req)

    def list(self, rt: ResourceType, ns: str, req: Request) -> Response:
        items = filtered(rt.kind, self.store.list(rt, ns or None), req)
        return self.render_list(rt, paginate(items, req.query, str(self.store.resource_version)), req)

    # -- writes -----------------------------------------------------------------------------
    def require_namespace(self, rt: ResourceType, ns: str, name: str) -> None:
        """Creating into a missing namespace is 404; into a terminating one, 403."""
        if not rt.namespaced:
            return
        ns_obj = self.store.find(NAMESPACES, "", ns)
        if ns_obj is None:
            raise not_found("", "namespaces", ns)
        if ns_obj["metadata"].get("deletionTimestamp") or (ns_obj.get("status") or {}).get("phase") == "Terminating":
            msg = f"unable to create new content in namespace {ns} because it is being terminated"
            raise ApiError(403, f'{qualified(rt)} "{name}" is forbidden: {msg}', "Forbidden", {
                "name": name, "group": rt.group, "kind": rt.plural,
                "causes": [{"reason": "NamespaceTerminating", "message": msg, "field": "metadata.namespace"}]})

    def create_object(self, rt: ResourceType, ns: str, obj: Obj, dry_run: bool) -> Obj:
        check_type(rt, obj)
        m = metadata_of(obj)
        check_identity(rt, m, ns, None)
        for f in _CLIENT_IGNORED_META:
            m.pop(f, None)
        if "status" in rt.subresources and rt.key not in STATUS_ON_CREATE:
            obj.pop("status", None)
        self.require_namespace(rt, ns, str(m.get("name") or m.get("generateName") or ""))
        obj = admission.admit_object(self.cluster, rt, objects.prepare(rt, obj, None))
        return self.store.create(rt, obj, dry_run=dry_run)

    def create(self, rt: ResourceType, ns: str, req: Request) -> Response:
        created = self.create_object(rt, ns, decode_object(req), req.dry_run)
        return self.render_one(rt, created, req, 201)

    def _write_update(self, rt: ResourceType, new: Obj, old: Obj, dry_run: bool) -> Obj:
        """Shared tail of PUT and PATCH: keep server-owned fields, default, validate, store."""
        m = new["metadata"]
        for f in ("managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"):
            m.pop(f, None)
        uid = m.get("uid")
        if uid and uid != old["metadata"].get("uid"):
            raise ApiError(409, f"Precondition failed: UID in precondition: {uid}, UID in object meta: "
                                f"{old['metadata'].get('uid')}", "Conflict")
        if "status" in rt.subresources:
            if "status" in old:
                new["status"] = clone(old["status"])
            else:
                new.pop("status", None)
        new = objects.prepare(rt, new, old)
        updated = self.store.update(rt, new, check_rv=True, dry_run=dry_run)
        if not dry_run:
            self.finish_if_released(rt, updated)
        return updated

    def update(self, rt: ResourceType, ns: str, name: str, req: Request) -> Response:
        obj = decode_object(req)
        check_type(rt, obj)
        check_identity(rt, metadata_of(obj), ns, name)
        old = self.store.get(rt, ns, name)
        return self.render_one(rt, self._write_update(rt, obj, old, req.dry_run), req)

    def patch(self, rt: ResourceType, ns: str, name: str, req: Request) -> Response:
        ct = req.content_type
        if ct not in PATCH_TYPES:
            raise unsupported_media(ct, ", ".join(PATCH_TYPES))
        apply = ct == "application/apply-patch+yaml"
        if apply and not req.query.get("fieldManager"):
            raise ApiError(400, "PATCH requests of type application/apply-patch+yaml need a fieldManager query "
                                "parameter (fieldManager is required for apply requests)", "BadRequest")
        current = self.store.find(rt, ns, name)
        if current is None:
            if not apply:
                raise not_found(rt.group, rt.plural, name)
            obj = decode_apply_body(req.body)
            check_identity(rt, metadata_of(obj), ns, name)
            return self.render_one(rt, self.create_object(rt, ns, obj, req.dry_run), req, 201)
        patched = patch.apply_patch(clone(current), req.body, ct, rt)
        if not isinstance(patched, dict):
            raise ApiError(422, f'{rt.kind} "{name}" is invalid: the patched object is not an object', "Invalid")
        check_type(rt, patched)
        check_identity(rt, metadata_of(patched), ns, name)
        return self.render_one(rt, self._write_update(rt, patched, current, req.dry_run), req)

    # -- deletion ---------------------------------------------------------------------------
    def delete_options(self, req: Request) -> dict[str, Any]:
        opts: dict[str, Any] = {}
        if req.body.strip():
            body = decode_object(req)
            opts.update(body)
        for key in ("propagationPolicy", "gracePeriodSeconds", "orphanDependents"):
            if key in req.query:
                opts[key] = req.query[key]
        policy = opts.get("propagationPolicy")
        if policy in (None, ""):
            orphan = opts.get("orphanDependents")
            policy = "Orphan" if orphan in (True, "true") else "Background"
        if policy not in PROPAGATION:
            raise ApiError(422, f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
                                f'"{policy}": supported values: "Foreground", "Background", "Orphan"', "Invalid")
        opts["propagationPolicy"] = policy
        pre = opts.get("preconditions")
        if pre is not None and not isinstance(pre, dict):
            raise ApiError(400, "DeleteOptions.preconditions must be an object", "BadRequest")
        return opts

    def delete_object(self, rt: ResourceType, ns: str, name: str, opts: dict[str, Any],
                      dry_run: bool) -> tuple[Obj, bool]:
        """Delete or start deleting (the collector finishes); returns (object, deleted_now)."""
        obj = self.store.get(rt, ns, name)
        m = obj["metadata"]
        pre = opts.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != m.get("uid"):
            raise ApiError(409, f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: "
                                f"{m.get('uid')}", "Conflict")
        if pre.get("resourceVersion") and pre["resourceVersion"] != m.get("resourceVersion"):
            raise ApiError(409, f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
                                f"ResourceVersion in object meta: {m.get('resourceVersion')}", "Conflict")
        out = delete_with_propagation(self.cluster, rt, ns, name, opts["propagationPolicy"], dry_run)
        deleted_now = not dry_run and self.store.find(rt, ns, name) is None
        return out, deleted_now

    def delete_response(self, rt: ResourceType, obj: Obj, deleted_now: bool, req: Request) -> Response:
        if deleted_now and rt.key not in RETURNS_DELETED:
            m = obj["metadata"]
            return json_response(success_status(200, {"name": m.get("name"), "group": rt.group, "kind": rt.plural,
                                                      "uid": m.get("uid")}))
        return self.render_one(rt, obj, req)

    @staticmethod
    def _dry_run(req: Request, opts: dict[str, Any]) -> bool:
        body_dry_run = opts.get("dryRun")
        if body_dry_run not in (None, [], ["All"]):
            raise ApiError(400, f'Invalid dryRun value {body_dry_run!r}: only ["All"] is supported', "BadRequest")
        return req.dry_run or body_dry_run == ["All"]

    def delete(self, rt: ResourceType, ns: str, name: str, req: Request) -> Response:
        opts = self.delete_options(req)
        obj, deleted_now = self.delete_object(rt, ns, name, opts, self._dry_run(req, opts))
        return self.delete_response(rt, obj, deleted_now, req)

    def delete_collection(self, rt: ResourceType, ns: str, req: Request) -> Response:
        opts = self.delete_options(req)
        dry_run = self._dry_run(req, opts)
        out = []
        for obj in filtered(rt.kind, self.store.list(rt, ns or None), req):
            m = obj["metadata"]
            gone, _ = self.delete_object(rt, m.get("namespace", ""), m["name"], opts, dry_run)
            out.append(gone)
        return json_response(self.list_body(rt, out))

    def finish_if_released(self, rt: ResourceType, obj: Obj) -> None:
        """An object being deleted goes away once a client write removes its last finalizer
        (namespaces are finished by the namespace controller once empty)."""
        m = obj["metadata"]
        if rt is NAMESPACES or not m.get("deletionTimestamp") or m.get("finalizers"):
            return
        if self.store.find(rt, m.get("namespace", ""), m["name"]) is obj:
            self.store.delete(rt, m.get("namespace", ""), m["name"])
