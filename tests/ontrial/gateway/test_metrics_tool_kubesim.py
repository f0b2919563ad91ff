"""The query_metrics and get_alerts tools against kubesim with telemetry attached (its
namespace-scoped Prometheus HTTP API, reached with the harness's credentials)."""

from __future__ import annotations

import tempfile
from typing import Iterator

import pytest

from ontrial.artifacts import LocalArtifactStore
from ontrial.gateway import AuditLog, Budget, Invariants, ToolGateway, TrialExtras
from ontrial.models.trial import SandboxSettings
from ontrial.sandbox import KubeBackend, client_from_kubeconfig_text

embedded = pytest.importorskip("kubesim.embedded", reason="kubesim is not importable")


@pytest.fixture(scope="module")
def telemetry_cluster() -> Iterator["embedded.Embedded"]:
    from kubesim.build import build_cluster

    cluster = build_cluster(time_scale=0)  # telemetry attached by default
    with embedded.start(cluster=cluster) as sim:
        yield sim


async def test_promql_through_the_gateway(telemetry_cluster) -> None:
    store = LocalArtifactStore(tempfile.mkdtemp())
    backend = KubeBackend.from_settings(SandboxSettings(kubeconfig=telemetry_cluster.kubeconfig_path), store)
    ref = await backend.create("suite/metrics/0")
    agent = client_from_kubeconfig_text(store.get(ref.agent_kubeconfig_ref))
    try:
        alert = {"name": "HighRequestErrorRate", "labels": {"service": "api"}}
        gw = ToolGateway(agent.api_client, ref.namespace, Invariants(), Budget(), AuditLog("t"),
                         extras=TrialExtras.for_kubesim(ref.namespace, backend.admin, alerts=(alert,)))
        assert "query_metrics" in gw.tool_names()
        one = await gw.call("query_metrics", {"query": "vector(1)"})
        assert one.ok and one.output == "{} => 1"
        ranged = await gw.call("query_metrics", {"query": "vector(2)", "range_minutes": 5, "step_seconds": 60})
        assert ranged.ok and ranged.output.startswith("{} => [2 2 2") and "points, oldest first" in ranged.output
        bad = await gw.call("query_metrics", {"query": "sum(("})
        assert not bad.ok and bad.output.startswith("PromQL error (400): bad_data")
        alerts = await gw.call("get_alerts", {})
        assert alerts.ok and alerts.output.startswith("HighRequestErrorRate [firing] {service=api}")
        other_ns = await gw.call("query_metrics", {"query": "up", "namespace": "default"})
        assert other_ns.blocked and other_ns.violation.startswith("own_namespace_only")
    finally:
        agent.close()
        await backend.teardown(ref.namespace)
        await backend.close()


async def test_without_a_metrics_source_the_tool_is_not_offered(telemetry_cluster) -> None:
    store = LocalArtifactStore(tempfile.mkdtemp())
    backend = KubeBackend.from_settings(SandboxSettings(kubeconfig=telemetry_cluster.kubeconfig_path), store)
    try:
        gw = ToolGateway(backend.access.api_client, "default", Invariants(), Budget(), AuditLog("t"))
        assert "query_metrics" not in gw.tool_names() and "get_runbook" not in gw.tool_names()
        refused = await gw.call("query_metrics", {"query": "up"})
        assert not refused.ok and refused.output.startswith("error: unknown tool 'query_metrics'")
    finally:
        await backend.close()
