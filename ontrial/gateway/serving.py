"""Serve an ASGI app on 127.0.0.1 from the caller's own event loop (uvicorn, no threads).

The per-trial MCP server and audit proxy run inside the agent step's loop, next to the tool
gateway they share budgets and audit with, so a tool call needs no locks and no thread hops.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from typing import Any, Iterator

import uvicorn

STARTUP_TIMEOUT = 10.0


class _QuietServer(uvicorn.Server):
    """A uvicorn.Server that leaves signal handling to the process that owns it."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    return sock


class LocalServer:
    """One ASGI app on a free (or given) port; ``await start()`` → base URL, ``await stop()``."""

    def __init__(self, app: Any, *, host: str = "127.0.0.1", port: int = 0, ssl_context: ssl.SSLContext | None = None,
                 lifespan: str = "auto"):
        self.app = app
        self.host = host
        self.port = port
        self.ssl_context = ssl_context
        self.lifespan = lifespan
        self._server: _QuietServer | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.ssl_context else 'http'}://{self.host}:{self.port}"

    async def start(self) -> str:
        sock = _bind(self.host, self.port)
        self.port = sock.getsockname()[1]
        ctx = self.ssl_context
        config = uvicorn.Config(self.app, lifespan=self.lifespan, ws="none", log_config=None, log_level="warning",
                                access_log=False, timeout_graceful_shutdown=1, timeout_keep_alive=30,
                                ssl_context_factory=(lambda _cfg, _default: ctx) if ctx else None)
        self._server = _QuietServer(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]), name=f"serve-{self.port}")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STARTUP_TIMEOUT
        while not self._server.started:
            if self._task.done() or loop.time() > deadline:
                sock.close()
                error = self._task.exception() if self._task.done() else None
                await self.stop()
                raise RuntimeError(f"could not serve on {self.host}:{self.port}: {error or 'timeout'}")
            await asyncio.sleep(0.01)
        return self.url

    async def stop(self) -> None:
        """Stop accepting, give open responses (watch streams) a moment, then close. Idempotent."""
        server, task = self._server, self._task
        self._server = self._task = None
        if server is None or task is None:
            return
        server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=3.0)
        except (asyncio.TimeoutError, TimeoutError):
            server.force_exit = True
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        except Exception:  # noqa: BLE001 - a server failing on the way down has nothing left to serve
            pass
