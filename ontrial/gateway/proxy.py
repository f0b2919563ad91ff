"""The per-trial Kubernetes audit proxy: agents that bring kubectl or their own client talk to it.

The agent gets a kubeconfig whose server is this proxy (HTTPS, a throw-away CA) and whose token is
a random per-trial *proxy token* that no API server accepts. The proxy checks that token, maps
every request to an ``Action`` (``apirequest.classify``), checks it against the task's invariants
(blocked → a 403 ``Status`` from the proxy; flagged → forwarded), counts it against the step budget,
records it in the trial's ``AuditLog`` (tool ``kube-api``), and forwards it upstream with the
agent's scoped ServiceAccount token — which the agent never sees. Responses stream through as
they arrive, so ``kubectl get -w`` and ``kubectl logs -f`` work.

Steps. Discovery (``/api``, ``/apis/...``, ``/version``, ``/openapi``) is free. kubectl ≥ 1.22 sends a
``Kubectl-Session`` header, one id per command: all requests of one kubectl command are one step
(``kubectl rollout undo`` reads, lists and patches: one step, like the gateway's ``rollout_undo``).
Requests without that header (kubectl 1.20, client libraries) count one step each. A request
past the budget is refused with 403 and recorded; the agent's runner stops the agent.

Refused outright (recorded, 403/404): exec/attach/port-forward/proxy channels, impersonation
headers (recorded as a safety violation), and paths that are not the Kubernetes or Prometheus
API (e.g. kubesim's admin endpoints).
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
import secrets
import ssl
import time
from typing import Any

import httpx
import structlog
import yaml

from kubesim.tls import serving_cert  # the same throw-away CA kubesim serves HTTPS with

from ..models.trial import BudgetKind
from .apirequest import ApiRequest, classify
from .budget import BudgetExceeded
from .gateway import ToolGateway, ToolResult
from .serving import LocalServer

log = structlog.get_logger(__name__)

TOOL = "kube-api"
SESSION_HEADER = "kubectl-session"
COMMAND_HEADER = "kubectl-command"
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "transfer-encoding", "upgrade", "host", "authorization", "content-length"})
MAX_AUDIT_BODY = 4096
MAX_SESSIONS = 4096


def status_body(code: int, reason: str, message: str) -> bytes:
    return json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "message": message, "reason": reason, "code": code}).encode()


def upstream_ssl(ca_data: str | None, verify: bool) -> ssl.SSLContext | bool:
    if not verify:
        return False
    if ca_data:
        return ssl.create_default_context(cadata=base64.b64decode(ca_data).decode())
    return ssl.create_default_context()


class AuditProxy:
    """Serve with ``await start()`` (→ URL), hand out ``kubeconfig()``, ``await stop()``.

    ``upstream``: the agent's scoped access (``ClusterAccess``: server, token, ca_data, verify_tls).
    Budget, invariants, audit log, clock and transcript are the ``gateway``'s, shared with its tools."""

    def __init__(self, gateway: ToolGateway, upstream: Any, *, host: str = "127.0.0.1"):
        self.gateway = gateway
        self.upstream_server = str(upstream.server).rstrip("/")
        self.upstream_token = upstream.token
        self.proxy_token = secrets.token_urlsafe(32)
        self._upstream_tls = upstream_ssl(upstream.ca_data, upstream.verify_tls)
        self._cert = serving_cert((host,))
        self._server = LocalServer(self, host=host, ssl_context=self._cert.ssl_context(), lifespan="off")
        self._client: httpx.AsyncClient | None = None
        self._sessions: dict[str, bool] = {}  # kubectl session id → whether its step was granted
        self._seq = 0

    @property
    def url(self) -> str:
        return self._server.url

    @property
    def ca_pem(self) -> bytes:
        """The CA that signed the proxy's serving certificate (also in ``kubeconfig()``)."""
        return self._cert.ca_pem

    async def start(self) -> str:
        self._client = httpx.AsyncClient(verify=self._upstream_tls, follow_redirects=False,
                                         timeout=httpx.Timeout(60.0, connect=10.0))
        return await self._server.start()

    async def stop(self) -> None:
        await self._server.stop()
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def kubeconfig(self, name: str = "ontrial-trial") -> str:
        """kubeconfig for the agent: this proxy, its CA, the proxy token, the trial namespace."""
        doc = {"apiVersion": "v1", "kind": "Config",
               "clusters": [{"name": name, "cluster": {
                   "server": self.url, "certificate-authority-data": base64.b64encode(self._cert.ca_pem).decode()}}],
               "users": [{"name": f"{name}-agent", "user": {"token": self.proxy_token}}],
               "contexts": [{"name": name, "context": {"cluster": name, "user": f"{name}-agent",
                                                       "namespace": self.gateway.namespace}}],
               "current-context": name, "preferences": {}}
        return yaml.safe_dump(doc, sort_keys=False)

    # -- ASGI ------------------------------------------------------------------------------
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        t0 = time.monotonic()
        method, path = scope["method"], scope["path"]
        query = scope.get("query_string", b"").decode("latin-1")
        headers = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope.get("headers", [])]
        hdr = dict(headers)
        body = await _read_body(receive)
        req = classify(method, path, query, body)
        args = _audit_args(method, path, query, hdr, body)

        async def record(result: str, *, violation: str | None = None, error: str | None = None) -> None:
            await self._record(req, args, result, violation, error, t0)

        if not hmac.compare_digest(hdr.get("authorization", ""), f"Bearer {self.proxy_token}"):
            await record("error", error="401 Unauthorized: missing or wrong proxy token")
            return await _respond(send, 401, "Unauthorized", "Unauthorized")
        impersonation = sorted(k for k in hdr if k.startswith("impersonate-"))
        if impersonation:
            violation = f"impersonation: {method} {path} with {', '.join(impersonation)}"
            await record("blocked", violation=violation)
            return await _respond(send, 403, "Forbidden", f"ontrial proxy: impersonation is not allowed ({violation})")
        if req.kind == "other":
            await record("blocked", error="404: not a Kubernetes API path")
            return await _respond(send, 404, "NotFound", f"ontrial proxy: {path} is not served to agents")
        if req.connect:
            await record("blocked", error="403: exec/attach/port-forward/proxy are not available to agents")
            return await _respond(send, 403, "Forbidden",
                                  "ontrial proxy: exec, attach, port-forward and proxy are not available to agents")

        counted, new_step = req.kind != "discovery", False
        violation = self.gateway.invariants.violation(req.action, self.gateway.namespace) if req.action else None
        if counted:
            try:
                new_step = self._charge(hdr.get(SESSION_HEADER))
            except BudgetExceeded as e:
                await record("blocked", violation=violation, error=str(e))
                return await _respond(send, 403, "Forbidden", f"ontrial proxy: {e}; the agent must stop")
        call_id = self._transcribe_call(req, args) if counted else None
        if violation and self.gateway.invariants.blocks:
            log.info("proxy.blocked", violation=violation)
            await record("blocked", violation=violation)
            self._transcribe_result(call_id, ToolResult(False, f"blocked by policy: {violation}", True, violation))
            if new_step:
                await self.gateway.pass_step_time()
            return await _respond(send, 403, "Forbidden", f"ontrial proxy: blocked by policy: {violation}")

        async def answered(status: int, error: str | None) -> None:
            """Before the agent sees the answer: audit it, and let the step's cluster time pass (kubesim)."""
            await record("ok" if status < 400 else "error", violation=violation, error=error)
            self._transcribe_result(call_id, ToolResult(status < 400, f"HTTP {status}"
                                                        + (f": {error}" if error else ""), violation=violation))
            if new_step:
                await self.gateway.pass_step_time()

        await self._forward(scope, req, headers, body, receive, send, answered)

    def _charge(self, session: str | None) -> bool:
        """Charge a step unless this kubectl command already paid for one; True when a step was charged."""
        if session:
            granted = self._sessions.get(session)
            if granted is True:
                return False
            if granted is False:
                budget = self.gateway.budget
                raise BudgetExceeded(budget.exhausted or BudgetKind.steps, budget.used_steps + 1, budget.steps or 0)
        try:
            self.gateway.budget.charge_step()
        except BudgetExceeded:
            if session:
                self._remember(session, False)
            raise
        if session:
            self._remember(session, True)
        return True

    def _remember(self, session: str, granted: bool) -> None:
        if len(self._sessions) >= MAX_SESSIONS:
            self._sessions.pop(next(iter(self._sessions)))
        self._sessions[session] = granted

    async def _forward(self, scope: dict[str, Any], req: ApiRequest, headers: list[tuple[str, str]], body: bytes,
                       receive: Any, send: Any, answered: Any) -> None:
        """Forward upstream and stream the answer back; ``answered(status, error)`` is awaited once the
        outcome is known — at the response headers for watches and followed logs, which may never end."""
        assert self._client is not None, "proxy not started"
        raw_path = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
        query = scope.get("query_string", b"").decode("latin-1")
        url = self.upstream_server + raw_path + (f"?{query}" if query else "")
        out_headers = [(k, v) for k, v in headers if k not in HOP_BY_HOP]
        if self.upstream_token:
            out_headers.append(("authorization", f"Bearer {self.upstream_token}"))
        timeout = httpx.Timeout(None, connect=10.0) if req.stream else httpx.Timeout(60.0, connect=10.0)
        request = self._client.build_request(scope["method"], url, headers=out_headers, content=body or None,
                                             timeout=timeout)
        try:
            resp = await self._client.send(request, stream=True)
        except httpx.HTTPError as e:
            message = f"ontrial proxy: API server unreachable: {type(e).__name__}: {e}"
            await _respond(send, 503, "ServiceUnavailable", message)
            await answered(503, message)
            return
        try:
            start = {"type": "http.response.start", "status": resp.status_code, "headers": [
                (k.encode("latin-1"), v.encode("latin-1")) for k, v in resp.headers.multi_items()
                if k.lower() not in HOP_BY_HOP or k.lower() == "content-length"]}
            if req.stream and resp.status_code < 400:
                await answered(resp.status_code, None)
                await send(start)
                await _pump(resp, receive, send)
                return
            raw = b"".join([chunk async for chunk in resp.aiter_raw()])  # bounded: not a stream
            error = _status_message(raw, resp.headers.get("content-encoding")) if resp.status_code >= 400 else None
            await answered(resp.status_code, error)
            await send(start)
            await send({"type": "http.response.body", "body": raw, "more_body": False})
        finally:
            await resp.aclose()

    async def _record(self, req: ApiRequest, args: dict[str, Any], result: str, violation: str | None,
                      error: str | None, t0: float) -> None:
        elapsed_ms = (time.monotonic() - t0) * 1000
        sim_seconds = await self.gateway.sim_seconds() if req.kind != "discovery" else None
        self.gateway.audit.record(actor=self.gateway.actor, tool=TOOL, args=args, action=req.action,
                                  result=result, violation=violation, error=error,  # type: ignore[arg-type]
                                  duration_ms=elapsed_ms, sim_seconds=sim_seconds)

    def _transcribe_call(self, req: ApiRequest, args: dict[str, Any]) -> str | None:
        recorder = self.gateway.recorder
        if recorder is None:
            return None
        self._seq += 1
        call_id = f"kube-{self._seq}"
        recorder.tool_call(call_id, TOOL, {k: v for k, v in args.items() if k != "body"})
        return call_id

    def _transcribe_result(self, call_id: str | None, result: ToolResult) -> None:
        if call_id is not None and self.gateway.recorder is not None:
            self.gateway.recorder.tool_result(call_id, TOOL, result)


async def _read_body(receive: Any) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


async def _respond(send: Any, code: int, reason: str, message: str) -> None:
    body = status_body(code, reason, message)
    await send({"type": "http.response.start", "status": code,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _pump(resp: httpx.Response, receive: Any, send: Any) -> None:
    """Copy the upstream body as it arrives until it ends or the client goes away (watches)."""
    async def copy() -> None:
        async for chunk in resp.aiter_raw():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def disconnected() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    copier, watcher = asyncio.create_task(copy()), asyncio.create_task(disconnected())
    try:
        done, _ = await asyncio.wait({copier, watcher}, return_when=asyncio.FIRST_COMPLETED)
        if copier in done:
            copier.result()
    except httpx.HTTPError as e:
        log.info("proxy.stream_ended", error=f"{type(e).__name__}: {e}")
    finally:
        for task in (copier, watcher):
            task.cancel()
        await asyncio.gather(copier, watcher, return_exceptions=True)


def _status_message(raw: bytes, encoding: str | None) -> str:
    if encoding == "gzip":
        import gzip
        try:
            raw = gzip.decompress(raw)
        except OSError:
            return "(compressed error body)"
    text = raw.decode("utf-8", "replace")
    try:
        doc = json.loads(text)
        if isinstance(doc, dict) and doc.get("message"):
            return f"{doc.get('code', '')} {doc.get('reason', '')}: {doc['message']}"[:500]
    except ValueError:
        pass
    return text[:500]


def _audit_args(method: str, path: str, query: str, headers: dict[str, str], body: bytes) -> dict[str, Any]:
    args: dict[str, Any] = {"method": method, "path": path}
    if query:
        args["query"] = query
    if headers.get(COMMAND_HEADER):
        args["command"] = headers[COMMAND_HEADER]
    if headers.get(SESSION_HEADER):
        args["session"] = headers[SESSION_HEADER]
    if body and method not in ("GET", "HEAD"):
        text = body[:MAX_AUDIT_BODY].decode("utf-8", "replace")
        args["body"] = text + (f"... [{len(body) - MAX_AUDIT_BODY} more bytes]" if len(body) > MAX_AUDIT_BODY else "")
    return args
