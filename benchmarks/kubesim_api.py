"""kubesim API cost, measured side by side in one run.

1. GET latency (median, p99) and requests/s for one object from kubesim vs a bare ASGI endpoint
   served by the same uvicorn stack with the same response bytes (the floor the stack itself costs).
2. Median time of one sandbox cycle over HTTP with the clock advanced by the caller: create a
   namespace, apply a 3-service app, wait until every Deployment is Ready, inject a fault, delete
   the namespace and see it gone.

    python benchmarks/kubesim_api.py [--requests 2000] [--cycles 30]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time

import httpx
import uvicorn

from kubesim import embedded

APP = [
    ("apps/v1", "deployments", {
        "metadata": {"name": "{svc}", "labels": {"app": "{svc}"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "{svc}"}},
                 "template": {"metadata": {"labels": {"app": "{svc}"}},
                              "spec": {"containers": [{"name": "{svc}", "image": "nginx:1.25",
                                                       "ports": [{"containerPort": 80}],
                                                       "resources": {"limits": {"memory": "128Mi"}}}]}}}}),
    ("v1", "services", {"metadata": {"name": "{svc}"},
                        "spec": {"selector": {"app": "{svc}"}, "ports": [{"port": 80}]}}),
]
SERVICES = ("web", "api", "db")


def fill(obj: object, svc: str) -> object:
    if isinstance(obj, dict):
        return {k: fill(v, svc) for k, v in obj.items()}
    if isinstance(obj, list):
        return [fill(v, svc) for v in obj]
    return obj.replace("{svc}", svc) if isinstance(obj, str) else obj


def base(api_version: str) -> str:
    return "/api/v1" if api_version == "v1" else f"/apis/{api_version}"


def bare_app(body: bytes):
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def serve_bare(body: bytes) -> tuple[str, uvicorn.Server]:
    sock = embedded.bind_socket("127.0.0.1", 0)
    server = embedded.QuietServer(uvicorn.Config(bare_app(body), lifespan="off", ws="none", log_config=None,
                                                 log_level="warning", access_log=False))
    threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    return f"http://127.0.0.1:{sock.getsockname()[1]}", server


def measure(client: httpx.Client, url: str, n: int) -> dict[str, float]:
    for _ in range(50):
        client.get(url).raise_for_status()
    lat = []
    t0 = time.perf_counter()
    for _ in range(n):
        s = time.perf_counter()
        client.get(url).raise_for_status()
        lat.append(time.perf_counter() - s)
    wall = time.perf_counter() - t0
    lat.sort()
    return {"median_ms": statistics.median(lat) * 1e3, "p99_ms": lat[int(0.99 * (len(lat) - 1))] * 1e3,
            "rps": n / wall}


def sandbox_cycle(client: httpx.Client, sim: embedded.Embedded, i: int) -> float:
    ns = f"bench-{i}"
    t0 = time.perf_counter()
    client.post("/api/v1/namespaces", json={"metadata": {"name": ns}}).raise_for_status()
    for svc in SERVICES:
        for api_version, plural, tmpl in APP:
            client.post(f"{base(api_version)}/namespaces/{ns}/{plural}", json=fill(tmpl, svc)).raise_for_status()
    for _ in range(20):
        client.post("/kubesim/v1/clock/advance", json={"seconds": 5}).raise_for_status()
        items = client.get(f"/apis/apps/v1/namespaces/{ns}/deployments").json()["items"]
        if all(d.get("status", {}).get("readyReplicas") == 2 for d in items):
            break
    else:
        raise RuntimeError("app never became ready")
    client.patch(f"/apis/apps/v1/namespaces/{ns}/deployments/api",
                 json={"spec": {"template": {"spec": {"containers": [{"name": "api", "image": "nginx:no-such-tag"}]}}}},
                 headers={"content-type": "application/strategic-merge-patch+json"}).raise_for_status()
    client.delete(f"/api/v1/namespaces/{ns}").raise_for_status()
    for _ in range(20):
        client.post("/kubesim/v1/clock/advance", json={"seconds": 1}).raise_for_status()
        if client.get(f"/api/v1/namespaces/{ns}").status_code == 404:
            return time.perf_counter() - t0
    raise RuntimeError("namespace never went away")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--cycles", type=int, default=30)
    args = ap.parse_args()
    with embedded.start(time_scale=0) as sim:
        headers = {"authorization": f"Bearer {sim.admin_token}"}
        with httpx.Client(base_url=sim.url, headers=headers, timeout=30) as client:
            client.post("/api/v1/namespaces/default/configmaps",
                        json={"metadata": {"name": "bench"}, "data": {"k": "v" * 200}}).raise_for_status()
            path = "/api/v1/namespaces/default/configmaps/bench"
            body = client.get(path).content
            bare_url, bare = serve_bare(body)
            kube = measure(client, path, args.requests)
            with httpx.Client(timeout=30) as bc:
                floor = measure(bc, bare_url + path, args.requests)
            bare.should_exit = True
            cycles = sorted(sandbox_cycle(client, sim, i) for i in range(args.cycles))
    print(f"GET one object ({len(body)} bytes), {args.requests} sequential keep-alive requests")
    print(f"  {'':10} {'median ms':>10} {'p99 ms':>10} {'req/s':>10}")
    for name, m in (("kubesim", kube), ("bare", floor)):
        print(f"  {name:10} {m['median_ms']:10.3f} {m['p99_ms']:10.3f} {m['rps']:10.0f}")
    print(f"  ratio kubesim/bare: median {kube['median_ms'] / floor['median_ms']:.2f}x (target <= 2x), "
          f"p99 {kube['p99_ms'] / floor['p99_ms']:.2f}x, req/s {floor['rps'] / kube['rps']:.2f}x")
    med = statistics.median(cycles) * 1e3
    print(f"sandbox cycle (ns + 3 services + Ready + fault + delete), {args.cycles} cycles: "
          f"median {med:.1f} ms, p90 {cycles[int(0.9 * (len(cycles) - 1))] * 1e3:.1f} ms (target <= 50 ms)")


if __name__ == "__main__":
    main()
