"""metrics.k8s.io shapes and values from profiles and runtime state."""

from __future__ import annotations

from kubesim.workloads.metrics import node_metrics, pod_metrics
from kubesim.workloads.units import parse_cpu_millis, parse_memory_bytes

MI = 2**20


def _usage(items, name):
    pod = next(p for p in items if p["metadata"]["name"] == name)
    c = pod["containers"][0]["usage"]
    return parse_cpu_millis(c["cpu"]), parse_memory_bytes(c["memory"])


def test_pod_metrics_shape_and_values(sim):
    sim.pod("api", sim.api(), labels={"app": "api"})
    sim.advance(30)
    items = pod_metrics(sim.cluster, "default")
    assert len(items) == 1
    m = items[0]
    assert m["kind"] == "PodMetrics" and m["apiVersion"] == "metrics.k8s.io/v1beta1"
    assert m["metadata"]["labels"] == {"app": "api"} and m["window"] == "30s"
    assert m["containers"][0]["name"] == "api"
    usage = m["containers"][0]["usage"]
    assert usage["cpu"].endswith("n") and usage["memory"].endswith("Ki")
    cpu, mem = _usage(items, "api")
    assert 90 <= cpu <= 150  # shop/api needs ~120m
    assert 170 * MI <= mem <= 190 * MI  # working set ~180Mi


def test_only_pods_with_running_containers_are_listed(sim):
    sim.pod("ok", sim.api())
    sim.pod("bad", sim.api(image="shop/api:bad"))
    sim.pod("big", {"name": "c", "image": "nginx:1.25", "resources": {"requests": {"memory": "1Ti"}}})
    sim.pod("elsewhere", sim.api(), ns="other")
    sim.advance(30)
    assert [m["metadata"]["name"] for m in pod_metrics(sim.cluster, "default")] == ["ok"]
    assert sorted(m["metadata"]["name"] for m in pod_metrics(sim.cluster, None)) == ["elsewhere", "ok"]


def test_memory_grows_and_cpu_is_capped_by_the_limit(sim):
    sim.cluster.profiles.register({"image": "acme/leaky", "tags": ["1"], "ports": [8080], "cpu": {"millicores": 400},
                                   "memory": {"working_set_mi": 100, "growth_mi_per_min": 10}})
    sim.pod("leak", {"name": "app", "image": "acme/leaky:1", "resources": {"limits": {"cpu": "200m"}}})
    sim.advance(60)
    cpu1, mem1 = _usage(pod_metrics(sim.cluster, "default"), "leak")
    sim.advance(600)
    cpu2, mem2 = _usage(pod_metrics(sim.cluster, "default"), "leak")
    assert cpu1 <= 200 and cpu2 <= 200
    assert 95 <= (mem2 - mem1) / MI <= 105  # 10 minutes at 10Mi/min


def test_metrics_are_stable_within_a_scrape_window(sim):
    sim.pod("api", sim.api())
    sim.advance(31)
    first = pod_metrics(sim.cluster, "default")
    sim.cluster.clock.advance(0.0)
    assert pod_metrics(sim.cluster, "default") == first


def test_node_metrics_include_pods_and_overhead(sim):
    empty = node_metrics(sim.cluster)
    assert [m["metadata"]["name"] for m in empty] == ["kubesim-node-1"]
    base_cpu = parse_cpu_millis(empty[0]["usage"]["cpu"])
    assert 100 <= base_cpu <= 250
    for i in range(4):
        sim.pod(f"api{i}", sim.api())
    sim.advance(30)
    node = node_metrics(sim.cluster)[0]
    assert node["kind"] == "NodeMetrics" and node["window"] == "30s"
    assert parse_cpu_millis(node["usage"]["cpu"]) >= base_cpu + 300
    assert parse_memory_bytes(node["usage"]["memory"]) >= 4 * 170 * MI
