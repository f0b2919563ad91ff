"""Subresource endpoints: status, scale, pods/log, serviceaccounts/token, pods/eviction,
namespaces/finalize, and the streaming ones kubesim refuses (exec, attach, portforward)."""

from __future__ import annotations

from typing import Any

from . import objects, patch
from .auth import Authenticator
from .errors import ApiError, invalid
from .resources import NAMESPACES, PODS, ResourceType
from .rest import Rest, check_identity, check_type, metadata_of
from .store import Obj
from .tree import clone
from .wire import PATCH_TYPES, TEXT, Request, Response, decode_object, json_response, success_status, unsupported_media
from .workloads import logs

SCALE_API = "autoscaling/v1"
STREAMING = frozenset(("exec", "attach", "portforward"))


def selector_string(selector: Any) -> str:
    """A label selector dict rendered the way Scale.status.selector carries it."""
    if not isinstance(selector, dict):
        return ""
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        if not isinstance(expr, dict):
            continue
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(sorted(map(str, values)))})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(sorted(map(str, values)))})")
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


def to_scale(obj: Obj) -> Obj:
    m = obj["metadata"]
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return {
        "kind": "Scale",
        "apiVersion": SCALE_API,
        "metadata": {k: m[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in m},
        "spec": {"replicas": spec.get("replicas", 1)},
        "status": {"replicas": status.get("replicas", 0), "selector": selector_string(spec.get("selector"))},
    }


class Subresources:
    def __init__(self, rest: Rest, auth: Authenticator):
        self.rest = rest
        self.store = rest.store
        self.cluster = rest.cluster
        self.auth = auth

    def handle(self, rt: ResourceType, ns: str, name: str, sub: str, verb: str, req: Request) -> Response:
        if sub in STREAMING:
            return self._streaming(sub)
        handler = getattr(self, f"_{sub}", None)
        if handler is None:
            raise ApiError(404, "the server could not find the requested resource", "NotFound", {})
        return handler(rt, ns, name, verb, req)

    @staticmethod
    def _streaming(sub: str) -> Response:
        what = {"portforward": "port-forward"}.get(sub, sub)
        raise ApiError(400, f"Upgrade request required (kubesim does not support {what} streams: "
                            f"pods/{sub} needs a SPDY or WebSocket connection to a real container runtime)",
                       "BadRequest")

    @staticmethod
    def _not_allowed() -> ApiError:
        return ApiError(405, "the server does not allow this method on the requested resource", "MethodNotAllowed", {})

    # -- status -----------------------------------------------------------------------------
    def _status(self, rt: ResourceType, ns: str, name: str, verb: str, req: Request) -> Response:
        current = self.store.get(rt, ns, name)
        if verb == "get":
            return self.rest.render_one(rt, current, req)
        if verb == "update":
            new = decode_object(req)
            check_type(rt, new)
            check_identity(rt, metadata_of(new), ns, name)
        elif verb == "patch":
            new = self._patched(rt, current, req)
        else:
            raise self._not_allowed()
        out = clone(current)
        if "status" in new:
            out["status"] = new["status"]
        else:
            out.pop("status", None)
        rv = new["metadata"].get("resourceVersion")
        if rv:
            out["metadata"]["resourceVersion"] = rv
        out = objects.prepare(rt, out, current)
        return self.rest.render_one(rt, self.store.update(rt, out, check_rv=True, dry_run=req.dry_run), req)

    def _patched(self, rt: ResourceType, current: Obj, req: Request) -> Obj:
        if req.content_type not in PATCH_TYPES:
            raise unsupported_media(req.content_type, ", ".join(PATCH_TYPES))
        new = patch.apply_patch(clone(current), req.body, req.content_type, rt)
        if not isinstance(new, dict):
            raise ApiError(422, "the patched object is not an object", "Invalid")
        check_identity(rt, metadata_of(new), current["metadata"].get("namespace", ""), current["metadata"]["name"])
        return new

    # -- scale ------------------------------------------------------------------------------
    def _scale(self, rt: ResourceType, ns: str, name: str, verb: str, req: Request) -> Response:
        current = self.store.get(rt, ns, name)
        scale = to_scale(current)
        if verb == "get":
            return json_response(scale)
        if verb == "update":
            new = decode_object(req)
            if new.get("kind") not in (None, "", "Scale"):
                raise ApiError(400, f"the kind in the data ({new.get('kind')}) does not match the expected kind "
                                    f"(Scale)", "BadRequest")
            check_identity(rt, metadata_of(new), ns, name)
        elif verb == "patch":
            if req.content_type not in PATCH_TYPES:
                raise unsupported_media(req.content_type, ", ".join(PATCH_TYPES))
            new = patch.apply_patch(clone(scale), req.body, req.content_type, rt)
            if not isinstance(new, dict):
                raise ApiError(422, "the patched Scale is not an object", "Invalid")
        else:
            raise self._not_allowed()
        spec = new.get("spec")
        replicas = spec.get("replicas") if isinstance(spec, dict) else None
        if isinstance(replicas, bool) or not isinstance(replicas, int):
            if replicas is None:
                replicas = 0
            else:
                raise ApiError(400, f'Scale in version "v1" cannot be handled as a Scale: spec.replicas must be an '
                                    f'integer, got {replicas!r}', "BadRequest")
        if replicas < 0:
            raise invalid("Scale", name, [("spec.replicas", f"Invalid value: {replicas}: must be greater than or "
                                                            f"equal to 0")])
        m = new.get("metadata") if isinstance(new.get("metadata"), dict) else {}
        out = clone(current)
        out["spec"]["replicas"] = replicas
        rv = m.get("resourceVersion")
        if rv:
            out["metadata"]["resourceVersion"] = rv
        updated = self.store.update(rt, objects.prepare(rt, out, current), check_rv=True, dry_run=req.dry_run)
        return json_response(to_scale(updated))

    # -- pods -------------------------------------------------------------------------------
    def _log(self, rt: ResourceType, ns: str, name: str, verb: str, req: Request) -> Response:
        if verb != "get":
            raise self._not_allowed()
        pod = self.store.get(rt, ns, name)
        text = logs.read_log(self.cluster, pod, req.query.get("container") or None, req.flag("previous"),
                             req.int_param("tailLines", minimum=0), req.int_param("limitBytes", minimum=1),
                             req.flag("timestamps"))
        return Response(200, text.encode("utf-8"), TEXT)

    def _eviction(self, rt: ResourceType, ns: str, name: str, verb: str, req: Request) -> Response:
        if verb != "create":
            raise self._not_allowed()
        body = decode_object(req) if req.body.strip() else {}
        check_identity(rt, metadata_of(body), ns, name)
        opts = body.get("deleteOptions") if isinstance(body.get("deleteOptions"), dict) else {}
        opts = dict(opts)
        if opts.get("propagationPolicy") not in ("Foreground", "Background", "Orphan"):
            opts["propagationPolicy"] = "Background"
        self.rest.delete_object(PODS, ns, name, opts, req.dry_run)
        return json_response(success_status(201), 201)

    # -- service accounts and namespaces ----------------------------------------------------
    def _token(self, rt: ResourceType, ns: str, name: str, verb: str, req: Request) -> Response:
        if verb != "create":
            raise self._not_allowed()
        body = decode_object(req)
        if body.get("kind") not in (None, "", "TokenRequest"):
            raise ApiError(400, f"the kind in the data ({body.get('kind')}) does not match the expected kind "
                                f"(TokenRequest)", "BadRequest")
        return json_response(self.auth.token_request(ns, name, body), 201)

    def _finalize(self, rt: ResourceType, ns: str, name: str, verb: str, req: Request) -> Response:
        if verb != "update" or rt is not NAMESPACES:
            raise self._not_allowed()
        body = decode_object(req)
        check_type(rt, body)
        check_identity(rt, metadata_of(body), ns, name)
        current = self.store.get(rt, "", name)
        finalizers = (body.get("spec") or {}).get("finalizers") or []
        if not isinstance(finalizers, list) or not all(isinstance(f, str) for f in finalizers):
            raise invalid("Namespace", name, [("spec.finalizers", "Invalid value: must be a list of strings")])
        out = clone(current)
        out.setdefault("spec", {})["finalizers"] = finalizers
        if not finalizers:
            out["spec"].pop("finalizers")
        return json_response(self.store.update(rt, out, check_rv=False, dry_run=req.dry_run))
