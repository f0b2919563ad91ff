"""kubesim's HTTP front door: a raw ASGI app (no framework, the hot path is a few dict lookups).

Per request: health endpoints answer without auth; everything else authenticates the bearer
token, classifies the URL (routing.parse), authorizes with RBAC, maybe injects a fault, reads
the body and dispatches to the REST / subresource / virtual handlers. Writes only mark their
namespace dirty; the controllers run before the next read, watch or admin call and on every tick,
so a burst of writes (``kubectl apply`` of a manifest) is reconciled once, not once per object.
Every error is a ``Status`` body; a 500 means a kubesim bug and is logged with its traceback.

The ASGI lifespan starts a background task that ticks the cluster every ``tick_interval``
seconds of real time so time-driven state (back-off, start-up delays) advances on its own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qsl

from .admin import PREFIX as ADMIN_PREFIX
from .admin import PROMETHEUS_PREFIX, Admin
from .auth import Authenticator
from .cluster import Cluster
from .discovery import HEALTH_PATHS, build_documents, is_public_path
from .errors import ApiError
from .faults import FaultInjector
from .rbac import Attributes, Authorizer, forbidden
from .rest import Rest
from .routing import RequestInfo, method_not_allowed, not_found_path, parse
from .subresources import Subresources
from .virtual import Virtual
from .watch import WatchHub, serve_watch
from .wire import JSON, MAX_BODY_BYTES, OCTETS, TEXT, Request, Response, error_response, media_type

log = logging.getLogger("kubesim.server")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

_BODY_METHODS = frozenset(("POST", "PUT", "PATCH", "DELETE"))
_WRITE_VERBS = frozenset(("create", "update", "patch", "delete", "deletecollection"))
_OK = Response(200, b"ok", TEXT)
_OPENAPI_V2 = Response(200, b"", OCTETS)
_MISSING = object()
LOG_REPEAT_SECONDS = 60.0


def _internal_error() -> Response:
    return error_response(ApiError(500, "Internal error occurred: kubesim hit an unexpected error handling this "
                                        "request (see the server log)", "InternalError"))


class KubeApp:
    """The ASGI application serving one Cluster."""

    def __init__(self, cluster: Cluster, authenticator: Authenticator | None = None,
                 faults: FaultInjector | None = None, server_address: str = "127.0.0.1:6443",
                 tick_interval: float = 0.05):
        self.cluster = cluster
        self.auth = authenticator or Authenticator(cluster.store)
        self.authz = Authorizer(cluster.store)
        self.faults = faults or FaultInjector()
        self.rest = Rest(cluster)
        self.subresources = Subresources(self.rest, self.auth)
        self.virtual = Virtual(self.rest, self.auth, self.authz)
        self.admin = Admin(cluster, self.faults)
        self.watches = WatchHub()
        self.docs = build_documents(server_address)
        self.tick_interval = tick_interval
        self._ticker: asyncio.Task[None] | None = None
        self._logged_errors: dict[str, float] = {}

    # -- ASGI entry ---------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":  # exec/attach over WebSocket: refuse the upgrade
            await send({"type": "websocket.close", "code": 1008})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.start_ticking()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.begin_shutdown()
                await self.stop_ticking()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # -- background tick ----------------------------------------------------------------------
    def start_ticking(self) -> None:
        if self._ticker is None and self.tick_interval > 0:
            self._ticker = asyncio.ensure_future(self._tick_loop())

    async def stop_ticking(self) -> None:
        task, self._ticker = self._ticker, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    async def _tick_loop(self) -> None:
        while True:
            await asyncio.sleep(self.tick_interval)
            self.reconcile("tick")

    def reconcile(self, why: str) -> None:
        """Run the controllers; a controller bug is logged (once a minute per distinct error), never
        turned into a client error: the write that triggered the reconcile has already succeeded."""
        try:
            self.cluster.tick() if why == "tick" else self.cluster.reconcile()
        except Exception as e:
            key, now = f"{type(e).__name__}: {e}", time.monotonic()
            if now - self._logged_errors.get(key, -LOG_REPEAT_SECONDS) >= LOG_REPEAT_SECONDS:
                self._logged_errors[key] = now
                log.exception("controller error while reconciling (%s)", why)

    def begin_shutdown(self) -> None:
        """End open watch streams so the server can stop without waiting for them."""
        self.watches.close_all()

    # -- HTTP ---------------------------------------------------------------------------------
    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        method: str = scope["method"]
        path: str = scope["path"]
        accept = ctype = authorization = ""
        impersonation: list[tuple[bytes, str]] | None = None
        for key, value in scope["headers"]:
            if key == b"authorization":
                authorization = value.decode("latin-1")
            elif key == b"accept":
                accept = value.decode("latin-1")
            elif key == b"content-type":
                ctype = value.decode("latin-1")
            elif key.startswith(b"impersonate-"):
                impersonation = (impersonation or []) + [(key, value.decode("latin-1"))]
        qs: bytes = scope.get("query_string", b"")
        query = dict(parse_qsl(qs.decode("latin-1"), keep_blank_values=True)) if qs else {}
        req = Request(method, path, query, accept, media_type(ctype) if ctype else "", raw_query=qs)
        try:
            resp = await self._handle(req, authorization, impersonation, receive, send)
        except ApiError as e:
            resp = error_response(e)
        except RecursionError:
            resp = error_response(ApiError(400, "the request body is nested too deeply", "BadRequest"))
        except Exception:
            log.exception("unexpected error handling %s %s", method, path)
            resp = _internal_error()
        if resp is not None:
            await send({"type": "http.response.start", "status": resp.status,
                        "headers": [(b"content-type", resp.content_type),
                                    (b"content-length", str(len(resp.body)).encode("ascii"))]})
            await send({"type": "http.response.body", "body": resp.body})

    async def _read_body(self, req: Request, receive: Receive) -> None:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise ApiError(413, f"Request entity too large: limit is {MAX_BODY_BYTES}", "RequestEntityTooLarge")
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        req.body = b"".join(chunks)

    async def _handle(self, req: Request, authorization: str, impersonation: list[tuple[bytes, str]] | None,
                      receive: Receive, send: Send) -> Response | None:
        path = req.path
        if path.startswith(HEALTH_PATHS):
            return _OK if req.method == "GET" else error_response(method_not_allowed())
        req.user = user = self.auth.authenticate(authorization)
        if impersonation:
            req.user = user = self._impersonate(user, impersonation)
        if path.startswith(ADMIN_PREFIX) or path.startswith(PROMETHEUS_PREFIX):
            if req.method in _BODY_METHODS:
                await self._read_body(req, receive)
            self.reconcile("admin")
            resp = self.admin.handle(req)
            if req.method != "GET" and resp.status < 400:
                self.reconcile("admin")
            return resp
        info = parse(req.method, path, req.query.get("watch", "").lower() in ("true", "1"))
        if not info.resource_request:
            return await self._non_resource(req, info)
        if not user.is_master:
            attrs = Attributes(user, info.verb, True, info.namespace, info.api_group, info.resource,
                               info.subresource, info.name, path)
            if not self.authz.allowed(attrs):
                raise forbidden(attrs)
        if self.faults.active:
            await self.faults.maybe_fail(req.method, path)
        if req.method in _BODY_METHODS:
            await self._read_body(req, receive)
        if info.verb not in _WRITE_VERBS:
            self.reconcile(info.verb)  # settle what earlier writes set in motion before anyone looks
        if info.verb == "watch":
            await self._watch(req, info, receive, send)
            return None
        return self._dispatch(req, info)

    def _impersonate(self, user: Any, headers: list[tuple[bytes, str]]) -> Any:
        name = next((v for k, v in headers if k == b"impersonate-user"), "")
        groups = [v for k, v in headers if k == b"impersonate-group"]
        uid = next((v for k, v in headers if k == b"impersonate-uid"), "")
        if not name:
            raise ApiError(400, "requested impersonation without an Impersonate-User header", "BadRequest")
        return self.authz.impersonate(user, name, groups, uid)

    async def _non_resource(self, req: Request, info: RequestInfo) -> Response:
        path = req.path.rstrip("/") or "/"
        user = req.user
        if not user.is_master and not is_public_path(path):
            attrs = Attributes(user, info.verb, False, path=path)
            if not self.authz.allowed(attrs):
                raise forbidden(attrs)
        if self.faults.active:
            await self.faults.maybe_fail(req.method, path)
        doc = self.docs.get(path, _MISSING)
        if doc is not _MISSING:
            if req.method != "GET":
                raise method_not_allowed()
            return Response(200, doc, JSON)  # type: ignore[arg-type]
        if path == "/openapi/v2":
            return _OPENAPI_V2
        raise not_found_path()

    async def _watch(self, req: Request, info: RequestInfo, receive: Receive, send: Send) -> None:
        rt = info.rt
        assert rt is not None
        if "watch" not in rt.verbs:
            raise method_not_allowed()
        await serve_watch(self.rest, self.watches, rt, info.namespace, info.name, req, receive, send)

    def _dispatch(self, req: Request, info: RequestInfo) -> Response:
        rt = info.rt
        assert rt is not None
        verb, ns, name = info.verb, info.namespace, info.name
        if info.resource == "namespaces":
            ns = ""  # a Namespace lives at cluster scope; its "namespace" in the URL is its name
        if not rt.stored:
            if verb not in rt.verbs:
                raise method_not_allowed()
            return self.virtual.handle(rt, ns, name, verb, req)
        if info.subresource:
            return self.subresources.handle(rt, ns, name, info.subresource, verb, req)
        if verb not in rt.verbs:
            raise method_not_allowed()
        rest = self.rest
        if verb == "get":
            return rest.get(rt, ns, name, req)
        if verb == "list":
            return rest.list(rt, ns, req)
        if verb == "create":
            if name:
                raise method_not_allowed()
            if rt.namespaced and not ns:
                raise method_not_allowed()
            return rest.create(rt, ns, req)
        if verb == "update":
            if not name:
                raise method_not_allowed()
            return rest.update(rt, ns, name, req)
        if verb == "patch":
            if not name:
                raise method_not_allowed()
            return rest.patch(rt, ns, name, req)
        if verb == "delete":
            return rest.delete(rt, ns, name, req)
        if verb == "deletecollection":
            if rt.namespaced and not ns:
                raise method_not_allowed()  # no all-namespaces deletecollection route upstream either
            return rest.delete_collection(rt, ns, req)
        raise method_not_allowed()
