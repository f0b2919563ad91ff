"""A raw ASGI app serving ``prom_api.handle`` for one cluster, for running the Prometheus API on a
listener of its own (Prometheus and Grafana clients expect it at a URL root, not under the
Kubernetes API's paths). Requests run on the serving loop, like every other touch of the cluster."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from . import prom_api

MAX_BODY = 1024 * 1024


def prometheus_app(cluster: Any, namespace: str | None = None) -> Callable[..., Awaitable[None]]:
    async def app(scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]],
                  send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > MAX_BODY or not message.get("more_body"):
                break
        if len(body) > MAX_BODY:
            status, headers, payload = 413, [("Content-Type", "text/plain")], b"request body too large\n"
        else:
            status, headers, payload = prom_api.handle(cluster, scope["method"], scope["path"],
                                                       scope.get("query_string", b""), body, namespace)
        await send({"type": "http.response.start", "status": status,
                    "headers": [(k.lower().encode(), v.encode()) for k, v in headers]
                    + [(b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})

    return app
