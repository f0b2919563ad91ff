"""The tool gateway served over MCP (streamable HTTP) and the JSON tool API, against kubesim."""

from __future__ import annotations

import httpx
import pytest
from mcp import Client

from ontrial.gateway import TrialExtras
from ontrial.gateway.mcp_server import McpToolServer

ALERT = {"name": "KubeDeploymentRolloutStuck", "labels": {"deployment": "web"},
         "annotations": {"summary": "Deployment rollout is not progressing."}}


@pytest.fixture
async def served(web_box):
    extras = TrialExtras.for_kubesim(web_box.namespace, web_box.backend.admin, alerts=(ALERT,),
                                     runbooks={"rollbacks": "kubectl rollout undo deployment/<name>"})
    gw = web_box.gateway(steps=6, extras=extras)
    server = McpToolServer(gw)
    await server.start()
    yield gw, server
    await server.stop()


async def test_mcp_lists_and_calls_tools_through_the_gateway(served) -> None:
    gw, server = served
    async with Client(server.mcp_url) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert {"get_resources", "rollout_undo", "delete", "get_alerts", "query_metrics", "get_runbook"} <= set(listed)
        assert listed["scale"].input_schema["required"] == ["kind", "name", "replicas"]
        pods = await client.call_tool("get_resources", {"kind": "pods"})
        assert not pods.is_error and pods.content[0].text.startswith("NAME")
        alerts = await client.call_tool("get_alerts", {})
        assert "KubeDeploymentRolloutStuck [firing] {deployment=web}" in alerts.content[0].text
        book = await client.call_tool("get_runbook", {"name": "rollbacks"})
        assert book.content[0].text == "kubectl rollout undo deployment/<name>"
        blocked = await client.call_tool("delete", {"kind": "deployment", "name": "web"})
        assert blocked.is_error and "blocked by policy: forbidden: delete deployments/web" in blocked.content[0].text
        bad = await client.call_tool("scale", {"kind": "deployment", "name": "web"})
        assert bad.is_error and "missing required argument 'replicas'" in bad.content[0].text
    assert [e.tool for e in gw.audit.entries] == ["get_resources", "get_alerts", "get_runbook", "delete", "scale"]
    [violation] = gw.audit.violations()
    assert violation.startswith("blocked: forbidden: delete deployments/web")
    assert gw.budget.used_steps == 5


async def test_metrics_tool_answers_or_says_clearly_why_not(served) -> None:
    gw, server = served
    async with Client(server.mcp_url) as client:
        result = await client.call_tool("query_metrics", {"query": "vector(1)"})
    text = result.content[0].text
    if result.is_error:  # kubesim without its Prometheus API
        assert text.startswith("metrics are not available on this cluster: no Prometheus HTTP API answered")
    else:
        assert text.startswith("{} => 1") or "=> 1" in text


async def test_budget_exhaustion_over_mcp_and_the_json_api(served) -> None:
    gw, server = served
    async with httpx.AsyncClient() as http:
        listing = (await http.get(server.tools_url)).json()
        assert {t["name"] for t in listing["tools"]} >= {"get_events", "set_env"}
        for _ in range(6):
            answer = await http.post(f"{server.tools_url}/get_events", json={"type": "Warning"})
            assert answer.status_code == 200 and answer.json()["ok"]
        assert (await http.post(f"{server.tools_url}/get_events", content=b"[1]")).status_code == 400
        refused = await http.post(f"{server.tools_url}/get_events", json={})
        assert refused.status_code == 429 and refused.json()["budget_exhausted"] == "steps"
        assert (await http.post(server.result_url, json={"text": "done"})).status_code == 202
    assert server.results.get_nowait() == {"text": "done"}
    async with Client(server.mcp_url) as client:
        over = await client.call_tool("get_resources", {"kind": "pods"})
    assert over.is_error and "steps budget exhausted" in over.content[0].text
    assert gw.budget.used_steps == 6 and gw.budget.exhausted is not None


async def test_the_secret_path_is_the_only_way_in(served) -> None:
    _, server = served
    async with httpx.AsyncClient() as http:
        base = server.base_url.rsplit("/", 1)[0]
        assert (await http.get(base + "/tools")).status_code == 404
        assert (await http.get(base + "/wrong/tools")).status_code == 404
