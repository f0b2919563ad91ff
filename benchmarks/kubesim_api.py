"""kubesim API cost, measured side by side in one run.

1. GET of one object: median and p99 latency and requests/s, kubesim vs a bare ASGI endpoint served
   by the same uvicorn stack returning the same bytes (the floor the stack itself costs). Each
   server runs in its own process; a raw-socket keep-alive client sends sequential requests so the
   client adds as little as possible. Rounds are interleaved so machine load hits both alike.
2. Median time of one sandbox cycle over HTTP with the clock advanced by the caller: create a
   namespace, apply a 3-service app, let simulated time pass until every Deployment is Ready,
   inject a fault (a bad image tag), delete the namespace and see it gone.

    python benchmarks/kubesim_api.py [--requests 5000] [--cycles 30]
"""

from __future__ import annotations

import argparse
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
SERVICES = ("web", "api", "db")
BARE_APP = textwrap.dedent("""
    import socket, sys, uvicorn
    BODY = open(sys.argv[1], "rb").read()
    HEADERS = [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]
    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
        await send({"type": "http.response.body", "body": BODY})
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0)); sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    uvicorn.Server(uvicorn.Config(app, lifespan="off", ws="none", log_config=None, log_level="warning",
                                  access_log=False)).run(sockets=[sock])
""")


def deployment(svc: str) -> dict:
    return {"metadata": {"name": svc, "labels": {"app": svc}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": svc}},
                     "template": {"metadata": {"labels": {"app": svc}},
                                  "spec": {"containers": [{"name": svc, "image": "nginx:1.25",
                                                           "ports": [{"containerPort": 80}],
                                                           "resources": {"limits": {"memory": "128Mi"}}}]}}}}


def service(svc: str) -> dict:
    return {"metadata": {"name": svc}, "spec": {"selector": {"app": svc}, "ports": [{"port": 80}]}}


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


def measure(port: int, path: str, token: str | None, n: int) -> list[float]:
    """Per-request seconds of ``n`` sequential keep-alive GETs (after a warm-up)."""
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    req = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n{auth}\r\n".encode()
    lat = []
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buf = bytearray()
        for _ in range(200):
            sock.sendall(req)
            buf = _read_response(sock, buf)
        for _ in range(n):
            t = time.perf_counter()
            sock.sendall(req)
            buf = _read_response(sock, buf)
            lat.append(time.perf_counter() - t)
    return lat


def summary(lat: list[float]) -> dict[str, float]:
    xs = sorted(lat)
    return {"median_ms": statistics.median(xs) * 1e3, "p99_ms": xs[int(0.99 * (len(xs) - 1))] * 1e3,
            "rps": len(xs) / sum(xs)}


def sandbox_cycle(client: httpx.Client, i: int) -> float:
    ns = f"bench-{i}"
    t0 = time.perf_counter()
    client.post("/api/v1/namespaces", json={"metadata": {"name": ns}}).raise_for_status()
    for svc in SERVICES:
        client.post(f"/apis/apps/v1/namespaces/{ns}/deployments", json=deployment(svc)).raise_for_status()
        client.post(f"/api/v1/namespaces/{ns}/services", json=service(svc)).raise_for_status()
    for _ in range(10):
        client.post("/kubesim/v1/clock/advance", json={"seconds": 30}).raise_for_status()
        items = client.get(f"/apis/apps/v1/namespaces/{ns}/deployments").json()["items"]
        if all(d.get("status", {}).get("readyReplicas") == 2 for d in items):
            break
    else:
        raise RuntimeError("the app never became Ready")
    client.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/api",
                 json={"spec": {"template": {"spec": {"containers": [{"name": "api", "image": "nginx:no-such-tag"}]}}}},
                 headers={"content-type": "application/strategic-merge-patch+json"}).raise_for_status()
    client.delete(f"/api/v1/namespaces/{ns}").raise_for_status()
    for _ in range(10):
        client.post("/kubesim/v1/clock/advance", json={"seconds": 1}).raise_for_status()
        if client.get(f"/api/v1/namespaces/{ns}").status_code == 404:
            return time.perf_counter() - t0
    raise RuntimeError("the namespace never went away")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=5000)
    ap.add_argument("--cycles", type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        sim = subprocess.Popen([sys.executable, "-m", "kubesim", "serve", "--port", "0", "--http-port", "0",
                                "--kubeconfig", str(kubeconfig), "--time-scale", "0", "--log-level", "warning"],
                               cwd=ROOT, stdout=subprocess.PIPE, text=True)
        bare = None
        try:
            port = int(re.search(r"plain http: http://[\d.]+:(\d+)", sim.stdout.readline()).group(1))
            token = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"]
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"authorization": f"Bearer {token}"},
                              timeout=30) as client:
                client.post("/api/v1/namespaces/default/configmaps",
                            json={"metadata": {"name": "bench"}, "data": {"k": "v" * 200}}).raise_for_status()
                path = "/api/v1/namespaces/default/configmaps/bench"
                body = Path(tmp) / "body.json"
                body.write_bytes(client.get(path).content)
                size = body.stat().st_size
                bare = subprocess.Popen([sys.executable, "-c", BARE_APP, str(body)], stdout=subprocess.PIPE, text=True)
                bare_port = int(bare.stdout.readline())
                kube_lat: list[float] = []
                bare_lat: list[float] = []
                for _ in range(5):  # interleaved rounds
                    bare_lat += measure(bare_port, path, None, args.requests // 5)
                    kube_lat += measure(port, path, token, args.requests // 5)
                cycles = sorted(sandbox_cycle(client, i) for i in range(args.cycles))
        finally:
            for p in (sim, bare):
                if p is not None:
                    p.terminate()
                    p.wait()
    kube, floor = summary(kube_lat), summary(bare_lat)
    print(f"GET one object ({size} bytes), {args.requests} sequential "
          "keep-alive requests each, servers in their own processes")
    print(f"  {'':8} {'median ms':>10} {'p99 ms':>10} {'req/s':>10}")
    for name, m in (("kubesim", kube), ("bare", floor)):
        print(f"  {name:8} {m['median_ms']:10.3f} {m['p99_ms']:10.3f} {m['rps']:10.0f}")
    print(f"  kubesim/bare: median {kube['median_ms'] / floor['median_ms']:.2f}x (target <= 2x), "
          f"p99 {kube['p99_ms'] / floor['p99_ms']:.2f}x, throughput {kube['rps'] / floor['rps']:.2f}x")
    med = statistics.median(cycles) * 1e3
    print(f"sandbox cycle (namespace + 3 services + Ready + fault + delete), {args.cycles} cycles: "
          f"median {med:.1f} ms, p90 {cycles[int(0.9 * (len(cycles) - 1))] * 1e3:.1f} ms (target <= 50 ms)")


if __name__ == "__main__":
    main()
