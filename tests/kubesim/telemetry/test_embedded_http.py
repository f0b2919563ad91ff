"""Telemetry through kubesim's own HTTP server: the Prometheus API under ``/prometheus`` and rule
registration under ``/kubesim/v1/namespaces/<ns>/rules``, with the admin token."""

from __future__ import annotations

import os
import subprocess
from typing import Iterator

import httpx
import pytest
from telemetry_sim import ERROR_RATIO_RULES

from kubesim import embedded, objects
from kubesim.build import build_cluster
from kubesim.resources import DEPLOYMENTS, NAMESPACES, SERVICES
from kubesim.telemetry.demo import shop_manifests


@pytest.fixture(scope="module")
def server() -> Iterator[embedded.Embedded]:
    cluster = build_cluster(time_scale=0)  # telemetry attached by default
    cluster.store.create(NAMESPACES, objects.prepare(NAMESPACES, {"metadata": {"name": "shop"}}, None))
    for obj in shop_manifests("shop"):
        rt = DEPLOYMENTS if obj["kind"] == "Deployment" else SERVICES
        cluster.store.create(rt, objects.prepare(rt, obj, None))
    sim = embedded.start(time_scale=0, cluster=cluster)
    try:
        yield sim
    finally:
        sim.stop()


def _client(sim: embedded.Embedded) -> httpx.Client:
    return httpx.Client(base_url=sim.url, headers={"Authorization": f"Bearer {sim.admin_token}"}, timeout=10)


def test_prometheus_api_and_rule_registration_over_http(server):
    with _client(server) as http:
        probe = http.get("/prometheus/api/v1/query", params={"query": "vector(1)"})
        if probe.status_code == 404 and "kind" in probe.text:
            pytest.skip("kubesim.server does not route /prometheus to kubesim.telemetry.prom_api yet")
        rules = http.put("/kubesim/v1/namespaces/shop/rules", content=ERROR_RATIO_RULES,
                         headers={"Content-Type": "application/yaml"})
        assert rules.status_code == 200, rules.text
        server.advance(300)
        body = http.get("/prometheus/api/v1/query",
                        params={"query": 'sum(rate(http_requests_total{namespace="shop"}[1m]))'}).json()
        assert body["status"] == "success" and float(body["data"]["result"][0]["value"][1]) > 20
        post = http.post("/prometheus/api/v1/query", data={"query": "sum(up)"})
        assert post.status_code == 200 and post.json()["data"]["result"][0]["value"][1] == "6"
        bad = http.get("/prometheus/api/v1/query", params={"query": "sum("})
        assert bad.status_code == 400 and bad.json()["errorType"] == "bad_data"
        assert http.get("/prometheus/api/v1/alerts").json()["data"] == {"alerts": []}


KUBECTL = "/usr/bin/kubectl"


@pytest.mark.skipif(not os.access(KUBECTL, os.X_OK), reason=f"kubectl 1.32 not found at {KUBECTL}")
def test_kubectl_logs_of_the_symptomatic_service_point_onward(server):
    def kubectl(*args: str) -> str:
        done = subprocess.run([KUBECTL, "--kubeconfig", server.kubeconfig_path, "-n", "shop", *args],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    kubectl("set", "env", "deployment/checkout", "PAYMENTS_ADDR=payments:8082")
    server.advance(180)
    pods = kubectl("get", "pods", "-l", "app in (checkout,frontend)", "-o", "name").split()
    logs = {p.split("/")[1].split("-")[0]: kubectl("logs", p, "--tail=5") for p in pods}
    assert "error calling checkout: checkout responded 504 Gateway Timeout" in logs["frontend"]
    assert 'Post "http://payments:8082/charge": context deadline exceeded' in logs["checkout"]
