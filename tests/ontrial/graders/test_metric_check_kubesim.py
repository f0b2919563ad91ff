"""The ``metric`` outcome check against kubesim's namespace-scoped Prometheus API (telemetry attached)."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from ontrial.graders.checks import run_checks
from ontrial.tasks import OutcomeCheck

PROFILE = {"image": "demo/shop", "tags": ["1.0"], "startup_seconds": 1, "ports": [8080],
           "readiness": {"path": "/healthz", "port": 8080}, "memory": {"working_set_mi": 40},
           "telemetry": {"handler": "GET /", "traffic": {"rps": 20}, "errors": {"ratio": 0.25},
                         "counters": [{"name": "orders_duplicated_total", "per_request": 0}]}}
NS = "metrics"


@pytest.fixture(scope="module")
def api() -> Iterator[k8s.ApiClient]:
    embedded = pytest.importorskip("kubesim.embedded", reason="kubesim is not importable")
    telemetry = pytest.importorskip("kubesim.telemetry", reason="kubesim has no telemetry")
    from kubesim.build import build_cluster

    cluster = build_cluster(time_scale=0, with_telemetry=False)
    cluster.controllers += telemetry.attach(cluster, profiles=[PROFILE])
    with embedded.start(cluster=cluster) as sim:
        client = k8s_config.new_client_from_config(config_file=sim.kubeconfig_path)
        core, apps = k8s.CoreV1Api(client), k8s.AppsV1Api(client)
        core.create_namespace({"metadata": {"name": NS}})
        labels = {"app.kubernetes.io/name": "shop"}
        apps.create_namespaced_deployment(NS, {
            "metadata": {"name": "shop"}, "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels}, "spec": {"containers": [{
                    "name": "shop", "image": "demo/shop:1.0", "ports": [{"containerPort": 8080}],
                    "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}}}]}}}})
        core.create_namespaced_service(NS, {"metadata": {"name": "shop"}, "spec": {
            "selector": labels, "ports": [{"port": 8080}]}})
        sim.advance(300)
        yield client
        client.close()


def metric(api: Any, **args: Any) -> tuple[bool, str]:
    (result,) = run_checks(api, NS, [OutcomeCheck.of("metric", **args)])
    return result.passed, result.detail


def test_samples_within_bounds_pass(api):
    assert metric(api, query='sum(rate(http_requests_total{service="shop"}[2m]))', min=10) == (
        True, "1 sample(s) within [10, inf]")


def test_a_sample_out_of_bounds_fails_naming_the_series(api):
    passed, detail = metric(api, query='sum by (service) (rate(http_requests_total{code=~"5.."}[2m]))', max=0.5)
    assert not passed and detail.startswith('{service="shop"} = ') and detail.endswith(", want within [-inf, 0.5]")


def test_empty_results_follow_the_check_and_bad_queries_fail(api):
    assert metric(api, query="orders_duplicated_total > 0", max=0) == (False, "the query returned no sample")
    assert metric(api, query="orders_duplicated_total > 0", max=0, empty="pass") == (
        True, "the query returned no sample")
    passed, detail = metric(api, query="sum(rate(", max=1)
    assert not passed and detail.startswith("query failed: bad_data: ")
