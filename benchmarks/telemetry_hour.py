"""Cost of one simulated hour of telemetry for the six-service shop (plus redis and postgres) in N
namespaces: wall and CPU time, the speed-up over real time, TSDB size and resident memory growth.
The cluster's own controllers run too (telemetry's wake-ups are what drive them here).

    .venv/bin/python benchmarks/telemetry_hour.py [namespaces=1] [hours=1]
"""

from __future__ import annotations

import sys
import time
import os

from kubesim import objects
from kubesim.build import build_cluster
from kubesim.resources import DEPLOYMENTS, NAMESPACES, SERVICES
from kubesim.telemetry import admin
from kubesim.telemetry.demo import shop_manifests

RULES = """
groups:
  - name: slo
    rules:
      - alert: HighErrorRate
        expr: sum by (service) (rate(http_requests_total{code=~"5.."}[1m])) / sum by (service) (rate(http_requests_total[1m])) > 0.05
        for: 2m
"""


def build(namespaces: int):
    cluster = build_cluster(time_scale=0)  # telemetry attached by default
    for i in range(namespaces):
        ns = f"shop-{i}"
        cluster.store.create(NAMESPACES, objects.prepare(NAMESPACES, {"metadata": {"name": ns}}, None))
        for obj in shop_manifests(ns):
            rt = DEPLOYMENTS if obj["kind"] == "Deployment" else SERVICES
            cluster.store.create(rt, objects.prepare(rt, obj, None))
        admin.handle(cluster, "PUT", f"/kubesim/v1/namespaces/{ns}/rules", None, RULES.encode())
    cluster.reconcile()
    cluster.advance(60)
    return cluster


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main(namespaces: int = 1, hours: float = 1.0) -> None:
    cluster = build(namespaces)
    base_rss = rss_bytes()
    wall, cpu = time.perf_counter(), time.process_time()
    cluster.advance(hours * 3600)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    stats = cluster.telemetry.tsdb.stats()
    print(f"namespaces={namespaces} simulated_hours={hours:g}")
    print(f"wall={wall:.2f}s cpu={cpu:.2f}s speedup_over_real_time={hours * 3600 / wall:.0f}x "
          f"cpu_per_namespace_hour={cpu / namespaces / hours:.3f}s")
    print(f"series={stats['series']} samples={stats['samples']} scrapes={stats['scrapes']}")
    print(f"rss_growth={(rss_bytes() - base_rss) / 2**20:.1f}MiB sample_bytes={stats['samples'] * 8 / 2**20:.1f}MiB")


if __name__ == "__main__":
    args = [float(a) for a in sys.argv[1:]]
    main(int(args[0]) if args else 1, args[1] if len(args) > 1 else 1.0)
