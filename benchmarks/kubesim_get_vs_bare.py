"""How much a kubesim GET of one object costs next to a bare ASGI endpoint on the same uvicorn stack.

Both servers run in their own processes (plain HTTP, keep-alive); a raw-socket client sends
sequential requests so the client adds as little as possible. Rounds are interleaved and the
best round of each counts. Prints per-request latency and the ratio. Run: ``.venv/bin/python benchmarks/kubesim_get_vs_bare.py [requests]``.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BARE_APP = textwrap.dedent("""
    import socket, sys, uvicorn
    BODY = b'{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"bench"}}'
    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]})
        await send({"type": "http.response.body", "body": BODY})
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0)); sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    uvicorn.Server(uvicorn.Config(app, lifespan="off", ws="none", log_config=None, log_level="warning",
                                  access_log=False)).run(sockets=[sock])
""")


def _request(path: str, token: str | None) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n{auth}\r\n".encode()


def _read_response(sock: socket.socket, buf: bytearray) -> bytearray:
    while b"\r\n\r\n" not in buf:
        buf += sock.recv(65536)
    head, _, rest = bytes(buf).partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: (\d+)", head).group(1))
    body = bytearray(rest)
    while len(body) < length:
        body += sock.recv(65536)
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(head.decode(errors="replace"))
    return body[length:]


def measure(port: int, path: str, token: str | None, n: int) -> float:
    """Mean seconds per request over ``n`` sequential keep-alive requests (after a warm-up)."""
    req = _request(path, token)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = bytearray()
        for _ in range(200):
            sock.sendall(req)
            buf = _read_response(sock, buf)
        start = time.perf_counter()
        for _ in range(n):
            sock.sendall(req)
            buf = _read_response(sock, buf)
        return (time.perf_counter() - start) / n


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        sim = subprocess.Popen([sys.executable, "-m", "kubesim", "serve", "--port", "0", "--http-port", "0",
                                "--kubeconfig", str(kubeconfig), "--time-scale", "0", "--log-level", "warning"],
                               cwd=ROOT, stdout=subprocess.PIPE, text=True)
        bare = subprocess.Popen([sys.executable, "-c", BARE_APP], stdout=subprocess.PIPE, text=True)
        try:
            sim_port = int(re.search(r"plain http: http://[\d.]+:(\d+)", sim.stdout.readline()).group(1))
            bare_port = int(bare.stdout.readline())
            import yaml
            token = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"]
            with socket.create_connection(("127.0.0.1", sim_port)) as s:
                body = json.dumps({"metadata": {"name": "bench"}, "data": {"k": "v"}}).encode()
                s.sendall(f"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
                          f"Authorization: Bearer {token}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
                s.recv(65536)
            path = "/api/v1/namespaces/default/configmaps/bench"
            rounds = [(measure(bare_port, path, None, n // 5), measure(sim_port, path, token, n // 5),
                       measure(sim_port, "/api/v1/namespaces/default/pods", token, n // 5)) for _ in range(5)]
            # Interleaved rounds, best of each: other load on the machine only ever adds time.
            bare_s, sim_s, pods_s = (min(r[i] for r in rounds) for i in range(3))
        finally:
            for p in (sim, bare):
                p.terminate()
                p.wait()
    print(f"bare ASGI endpoint        {bare_s * 1e6:8.1f} us/request")
    print(f"kubesim GET configmap     {sim_s * 1e6:8.1f} us/request   ratio {sim_s / bare_s:.2f}x")
    print(f"kubesim LIST pods (empty) {pods_s * 1e6:8.1f} us/request   ratio {pods_s / bare_s:.2f}x")


if __name__ == "__main__":
    main()
