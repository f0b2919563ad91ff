"""metrics.k8s.io: PodMetrics and NodeMetrics computed from profiles and runtime state.

Usage is a deterministic function of (pod, container, 15-second scrape bucket), so ``kubectl top``
is reproducible: CPU near the profile's need (higher during start-up, capped by the limit),
memory the profile's working set plus its growth since the container started.
"""

from __future__ import annotations

from typing import Any

from ..clock import rfc3339
from ..resources import NODES, PODS
from .behaviour import memory_bytes
from .containers import RUNNING
from .logstream import stable_int
from .runtime import ContainerRuntime

SCRAPE_SECONDS = 15
WINDOW = "30s"
API_VERSION = "metrics.k8s.io/v1beta1"
NODE_OVERHEAD_MILLIS = 180.0
NODE_OVERHEAD_BYTES = 950 * 2**20


def _jitter(*key: Any, spread: float = 0.08) -> float:
    return 1.0 + spread * ((stable_int(*key) % 2001) / 1000.0 - 1.0)


def container_usage(cluster: Any, c: ContainerRuntime, uid: str, now: float) -> tuple[float, int]:
    """(cpu millicores, memory working-set bytes) of a running container at sim time ``now``."""
    run = c.run
    if run is None or c.phase != RUNNING:
        return 0.0, 0
    bucket = int(now // SCRAPE_SECONDS)
    need = run.profile.cpu_millicores
    if run.app and now < run.listen_at:
        need *= 3.0
    cpu = need * _jitter(uid, c.name, bucket, "cpu", spread=0.15)
    if run.cpu_limit_millis:
        cpu = min(cpu, float(run.cpu_limit_millis))
    mem = int(memory_bytes(run, now) * _jitter(uid, c.name, bucket, "mem", spread=0.02))
    if run.memory_limit:
        mem = min(mem, run.memory_limit - 4096)
    return max(cpu, 0.05), max(mem, 0)


def _cpu(millis: float) -> str:
    return f"{int(millis * 1_000_000)}n"


def _memory(n: int) -> str:
    return f"{n // 1024}Ki"


def _pod_entry(cluster: Any, pod: dict[str, Any], now: float, stamp: str) -> dict[str, Any] | None:
    pr = cluster.runtime.get(pod["metadata"].get("uid", ""))
    if pr is None:
        return None
    running = [c for c in pr.containers if c.phase == RUNNING and c.run is not None]
    if not running:
        return None
    items = []
    for c in sorted(running, key=lambda c: c.name):
        cpu, mem = container_usage(cluster, c, pr.uid, now)
        items.append({"name": c.name, "usage": {"cpu": _cpu(cpu), "memory": _memory(mem)}})
    meta = pod["metadata"]
    return {
        "kind": "PodMetrics",
        "apiVersion": API_VERSION,
        "metadata": {"name": meta["name"], "namespace": meta.get("namespace"), "creationTimestamp": stamp,
                     "labels": dict(meta.get("labels") or {})},
        "timestamp": stamp,
        "window": WINDOW,
        "containers": items,
    }


def _scrape_time(cluster: Any, now: float) -> str:
    return rfc3339(cluster.clock.at(now - now % SCRAPE_SECONDS))


def pod_metrics(cluster: Any, namespace: str | None) -> list[dict[str, Any]]:
    """PodMetrics for every pod with a running container (all namespaces when None)."""
    now = cluster.now_s()
    stamp = _scrape_time(cluster, now)
    out = []
    for pod in cluster.store.list(PODS, namespace):
        entry = _pod_entry(cluster, pod, now, stamp)
        if entry is not None:
            out.append(entry)
    return out


def node_metrics(cluster: Any) -> list[dict[str, Any]]:
    now = cluster.now_s()
    stamp = _scrape_time(cluster, now)
    bucket = int(now // SCRAPE_SECONDS)
    totals: dict[str, list[float]] = {}
    for pr in cluster.runtime.values():
        for c in pr.containers:
            cpu, mem = container_usage(cluster, c, pr.uid, now)
            t = totals.setdefault(pr.node, [0.0, 0.0])
            t[0] += cpu
            t[1] += mem
    out = []
    for node in cluster.store.list(NODES):
        name = node["metadata"]["name"]
        cpu, mem = totals.get(name, [0.0, 0.0])
        cpu += NODE_OVERHEAD_MILLIS * _jitter(name, bucket, "cpu", spread=0.2)
        mem += NODE_OVERHEAD_BYTES * _jitter(name, bucket, "mem", spread=0.03)
        out.append({
            "kind": "NodeMetrics",
            "apiVersion": API_VERSION,
            "metadata": {"name": name, "creationTimestamp": stamp,
                         "labels": dict(node["metadata"].get("labels") or {})},
            "timestamp": stamp,
            "window": WINDOW,
            "usage": {"cpu": _cpu(cpu), "memory": _memory(int(mem))},
        })
    return out
