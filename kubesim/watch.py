"""Watch streams: chunked JSON lines ``{"type": ..., "object": ...}`` fed by store subscriptions.

A watch without a resourceVersion (or with "0") starts with synthetic ADDED events for what
exists now; with one, it replays the store's log after it (410 Gone as an ERROR event when the
log no longer reaches back that far). Selector-filtered watches turn objects that stop or start
matching into DELETED / ADDED events, as the real watch cache does. Every wake-up (event,
timeout, client gone, server shutdown) arrives through the subscription queue.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable

from .errors import ApiError
from .resources import ResourceType
from .rest import Rest, field_selector
from .selectors import LabelSelector
from .store import Obj, Subscription, WatchEvent
from .wire import JSON, Request, dumps, wants_as

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]
_STOP = None  # queue sentinel: end the stream
log = logging.getLogger("kubesim.watch")


class WatchHub:
    """Tracks open watch streams so shutdown can end them promptly."""

    def __init__(self) -> None:
        self.open: set[Subscription] = set()

    def close_all(self) -> None:
        for sub in list(self.open):
            sub.queue.put_nowait(_STOP)  # type: ignore[arg-type]


class _Matcher:
    def __init__(self, kind: str, req: Request, name: str):
        ls = req.query.get("labelSelector")
        self.labels = LabelSelector.parse(ls) if ls else None
        self.fields = field_selector(kind, req)
        self.name = name
        self.active = bool(self.labels or self.fields or name)

    def __call__(self, obj: Obj) -> bool:
        m = obj.get("metadata") or {}
        if self.name and m.get("name") != self.name:
            return False
        if self.labels is not None and not self.labels.matches(m.get("labels") or {}):
            return False
        return self.fields is None or self.fields.matches(obj)


def _since(req: Request) -> int | None:
    raw = req.query.get("resourceVersion", "")
    if raw in ("", "0"):
        return None
    try:
        rv = int(raw)
    except ValueError:
        raise ApiError(400, f'invalid resource version "{raw}"', "BadRequest") from None
    if rv < 0:
        raise ApiError(400, f'invalid resource version "{raw}"', "BadRequest")
    return rv


async def serve_watch(rest: Rest, hub: WatchHub, rt: ResourceType, ns: str, name: str, req: Request,
                      receive: Receive, send: Send) -> None:
    """Stream events until timeoutSeconds, client disconnect or server shutdown."""
    timeout = req.int_param("timeoutSeconds", minimum=0)
    matcher = _Matcher(rt.kind, req, name)
    since = _since(req)
    as_table = wants_as(req.accept) == "Table" if req.accept else False
    store = rest.store
    error: ApiError | None = None
    try:
        backlog, sub = store.subscribe(rt, ns or None, since)
    except ApiError as e:
        error, backlog, sub = e, [], None
    initial: list[WatchEvent] = []
    if since is None and sub is not None:
        rv = store.resource_version
        initial = [WatchEvent(rv, "ADDED", rt.key, o["metadata"].get("namespace", ""), o)
                   for o in store.list(rt, ns or None) if matcher(o)]
    # Keys this client can see, so selector transitions become ADDED/DELETED. Objects untouched
    # since ``since`` are visible when they match now; objects changed since then were visible
    # when they already existed (reporting a DELETED too many is harmless, one too few is not).
    visible: set[tuple[str, str]] = set()
    if matcher.active and since is not None:
        first: dict[tuple[str, str], str] = {}
        for e in backlog:
            first.setdefault((e.namespace, e.obj["metadata"]["name"]), e.type)
        visible = {k for k, t in first.items() if t != "ADDED"}
        for o in store.list(rt, ns or None):
            key = (o["metadata"].get("namespace", ""), o["metadata"]["name"])
            if key not in first and matcher(o):
                visible.add(key)

    def encode(ev_type: str, obj: Obj) -> bytes:
        if as_table:
            obj = rest.table(rt, [obj], req)
        return dumps({"type": ev_type, "object": obj}) + b"\n"

    def translate(ev: WatchEvent) -> bytes | None:
        if not matcher.active:
            return encode(ev.type, ev.obj)
        key = (ev.namespace, ev.obj["metadata"]["name"])
        matches = matcher(ev.obj)
        if ev.type == "DELETED":
            if key in visible or matches:
                visible.discard(key)
                return encode("DELETED", ev.obj)
            return None
        if matches:
            kind = "MODIFIED" if key in visible and ev.type == "MODIFIED" else "ADDED"
            visible.add(key)
            return encode(kind, ev.obj)
        if key in visible:
            visible.discard(key)
            return encode("DELETED", ev.obj)
        return None

    start = {"type": "http.response.start", "status": 200,
             "headers": [(b"content-type", JSON), (b"cache-control", b"no-cache, private")]}
    if sub is None:
        assert error is not None
        await send(start)
        await send({"type": "http.response.body", "body": dumps({"type": "ERROR", "object": error.status()}) + b"\n",
                    "more_body": False})
        return
    hub.open.add(sub)
    timer = None
    listener = None
    try:
        await send(start)
        if timeout is not None:
            timer = asyncio.get_running_loop().call_later(timeout, sub.queue.put_nowait, _STOP)

        async def watch_disconnect() -> None:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    sub.queue.put_nowait(_STOP)  # type: ignore[arg-type]
                    return

        listener = asyncio.ensure_future(watch_disconnect())
        try:
            await _stream(sub, initial + backlog, translate, send)
        except Exception:  # the response has started: report in-band, as the real server does
            log.exception("watch stream for %s failed", req.path)
            failure = ApiError(500, "Internal error occurred: the watch stream failed (see the server log)",
                               "InternalError")
            await send({"type": "http.response.body", "more_body": False,
                        "body": dumps({"type": "ERROR", "object": failure.status()}) + b"\n"})
    finally:
        hub.open.discard(sub)
        sub.close()
        if timer is not None:
            timer.cancel()
        if listener is not None:
            listener.cancel()


async def _stream(sub: Subscription, replay: list[WatchEvent], translate: Callable[[WatchEvent], bytes | None],
                  send: Send) -> None:
    """Send the replayed events, then live ones (batched per wake-up) until the stop sentinel."""
    chunk = b"".join(line for line in (translate(e) for e in replay) if line)
    if chunk:
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    while True:
        ev = await sub.queue.get()
        if ev is _STOP:
            break
        pieces = [translate(ev)]
        while not sub.queue.empty():  # batch what is already queued into one chunk
            nxt = sub.queue.get_nowait()
            if nxt is _STOP:
                sub.queue.put_nowait(_STOP)  # type: ignore[arg-type]
                break
            pieces.append(translate(nxt))
        chunk = b"".join(p for p in pieces if p)
        if chunk:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})
