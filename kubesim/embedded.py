"""Run kubesim in-process: uvicorn on its own thread and event loop, bound to 127.0.0.1.

Two listeners serve the same app: HTTPS (the kubeconfig's server: kubectl and client-go only send
bearer tokens over TLS) and plain HTTP (``.url``, handy for in-process callers such as httpx).
Both require a bearer token. The cluster belongs to the server's loop thread; touch it from
elsewhere only through ``Embedded.call``.

    with embedded.start(time_scale=0) as sim:
        subprocess.run(["kubectl", "--kubeconfig", sim.kubeconfig_path, "get", "pods"])
        sim.advance(300)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, TypeVar

import uvicorn

from .auth import Authenticator
from .build import build_cluster
from .cluster import Cluster
from .kubeconfig import write_kubeconfig
from .server import KubeApp
from .tls import ServingCert, serving_cert

T = TypeVar("T")
STARTUP_TIMEOUT = 15.0


class QuietServer(uvicorn.Server):
    """A uvicorn.Server that leaves signal handling to its owner."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def bind_socket(host: str, port: int) -> socket.socket:
    # Passing the protocol matters: asyncio only sets TCP_NODELAY on sockets whose proto is TCP,
    # and without it every response pays a 40 ms delayed-ACK stall.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)  # connections queue from now on, even before uvicorn starts accepting
    sock.set_inheritable(True)
    return sock


def make_servers(app: KubeApp, tls_sock: socket.socket, cert: ServingCert, plain_sock: socket.socket | None = None,
                 access_log: bool = False) -> list[tuple[uvicorn.Server, socket.socket]]:
    """uvicorn servers for the HTTPS listener (which runs the app's lifespan) and the optional plain one."""
    def config(tls: bool) -> uvicorn.Config:
        return uvicorn.Config(app, lifespan="on" if tls else "off", ws="none", log_config=None,
                              log_level="warning", access_log=access_log, timeout_graceful_shutdown=2,
                              timeout_keep_alive=30,
                              ssl_context_factory=(lambda _cfg, _default: cert.ssl_context()) if tls else None)
    servers = [(QuietServer(config(True)), tls_sock)]
    if plain_sock is not None:
        servers.append((QuietServer(config(False)), plain_sock))
    return servers


async def serve_all(servers: list[tuple[uvicorn.Server, socket.socket]]) -> None:
    await asyncio.gather(*(server.serve(sockets=[sock]) for server, sock in servers))


def request_exit(app: KubeApp, servers: list[tuple[uvicorn.Server, socket.socket]]) -> None:
    """Ask every server to stop (call on the loop thread); a second call forces it."""
    app.begin_shutdown()
    for server, _ in servers:
        if server.should_exit:
            server.force_exit = True
        server.should_exit = True


class Embedded:
    """A running in-process kubesim. Stop it with ``stop()`` or use it as a context manager."""

    def __init__(self, cluster: Cluster, app: KubeApp, servers: list[tuple[uvicorn.Server, socket.socket]],
                 loop: asyncio.AbstractEventLoop, thread: threading.Thread, url: str, https_url: str,
                 kubeconfig_path: str, ca_file: str, owns_kubeconfig: bool):
        self.cluster = cluster
        self.app = app
        self.url = url  # plain HTTP
        self.https_url = https_url  # the kubeconfig's server
        self.kubeconfig_path = kubeconfig_path
        self.ca_file = ca_file  # PEM CA for verifying https_url (e.g. httpx verify=...)
        self.admin_token = app.auth.admin_token
        self._servers = servers
        self._loop = loop
        self._thread = thread
        self._owns_kubeconfig = owns_kubeconfig
        self._stopped = False

    @property
    def port(self) -> int:
        """The plain-HTTP port (``url``)."""
        return int(self.url.rsplit(":", 1)[1])

    def call(self, fn: Callable[[], T], timeout: float = 60.0) -> T:
        """Run ``fn()`` on the server's loop thread, after settling pending writes as a read would, and
        return its result (exceptions propagate)."""
        if threading.current_thread() is self._thread:
            self.app.reconcile("call")
            return fn()

        async def run() -> T:
            self.app.reconcile("call")
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout)

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` of simulated time pass (controllers run at every wake-up on the way)."""
        self.call(lambda: self.cluster.advance(seconds))

    def stop(self, timeout: float = 10.0) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(request_exit, self.app, self._servers)
            self._thread.join(timeout)
        for path, owned in ((self.kubeconfig_path, self._owns_kubeconfig), (self.ca_file, True)):
            if owned:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)

    def __enter__(self) -> "Embedded":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def start(port: int = 0, time_scale: float = 1.0, seed: int = 0, kubeconfig_path: str | os.PathLike[str] | None = None,
          profiles: Iterable[Mapping[str, Any]] = (), cluster: Cluster | None = None,
          admin_token: str | None = None) -> Embedded:
    """Build a cluster (unless given one) and serve it: HTTPS on 127.0.0.1:``port`` (0 = a free port) for
    the kubeconfig written to ``kubeconfig_path`` (a temp file when None), plain HTTP on another free port."""
    tls_sock = bind_socket("127.0.0.1", port)
    plain_sock = bind_socket("127.0.0.1", 0)
    tls_port, plain_port = tls_sock.getsockname()[1], plain_sock.getsockname()[1]
    cluster = cluster if cluster is not None else build_cluster(time_scale=time_scale, seed=seed, profiles=profiles)
    auth = Authenticator(cluster.store, admin_token=admin_token)
    app = KubeApp(cluster, auth, server_address=f"127.0.0.1:{tls_port}")
    cert = serving_cert(("127.0.0.1",))
    servers = make_servers(app, tls_sock, cert, plain_sock)
    loop = asyncio.new_event_loop()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(serve_all(servers))
        except BaseException as e:  # surfaced to the caller of start()
            failure.append(e)
        finally:
            for _, sock in servers:
                sock.close()
            loop.close()

    thread = threading.Thread(target=run, name=f"kubesim-{tls_port}", daemon=True)
    thread.start()
    waited = threading.Event()
    remaining = STARTUP_TIMEOUT
    while not all(s.started for s, _ in servers) and thread.is_alive() and remaining > 0:
        waited.wait(0.01)
        remaining -= 0.01
    if not all(s.started for s, _ in servers):
        if thread.is_alive():
            loop.call_soon_threadsafe(request_exit, app, servers)
            thread.join(5)
        raise RuntimeError(f"kubesim failed to start on 127.0.0.1:{tls_port}: {failure[0] if failure else 'timeout'}")
    https_url = f"https://127.0.0.1:{tls_port}"
    path = write_kubeconfig(kubeconfig_path, https_url, auth.admin_token, ca_pem=cert.ca_pem)
    fd, ca_file = tempfile.mkstemp(prefix="kubesim-ca-", suffix=".crt")
    with os.fdopen(fd, "wb") as f:
        f.write(cert.ca_pem)
    return Embedded(cluster, app, servers, loop, thread, f"http://127.0.0.1:{plain_port}", https_url,
                    str(Path(path)), ca_file, kubeconfig_path is None)
