"""Each adapter end to end in a trial on kubesim, through the plain trial steps:
create_sandbox → inject_fault → run_agent → grade → teardown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_trials import (CLI_AGENT, PYTHON, AgentService, KubeClientAgent, ModelServer, Served, run_trial,
                          tool_call)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ontrial import steps
from ontrial.models.trial import AgentRunStatus, AgentSpec
from ontrial.outcomes import Outcome, decide
from ontrial.transcript_otel import export_transcript_spans


async def test_python_adapter_gets_the_gateway_and_an_audited_kubeconfig(trial_cluster, tmp_path: Path) -> None:
    agent = AgentSpec(kind="python", config={"entrypoint": "agent_trials:KubeClientAgent",
                                             "options": {"greeting": "hi"}})
    trial = await run_trial(trial_cluster, tmp_path, agent)
    assert trial.run.status is AgentRunStatus.completed, trial.run.reason
    assert decide(trial.run, trial.grade).outcome is Outcome.passed, trial.grade
    inner = KubeClientAgent.last
    assert inner is not None and inner.torn_down
    assert inner.kubeconfig_seen and "agent-kubeconfig" not in inner.kubeconfig_seen
    assert trial.run.diagnosis.summary == "hi: 1 pods cannot pull their image"
    # the client's list went through the audit proxy (one step), the fix through the gateway (one step)
    lists = [a for a in trial.kube_requests() if a["verb"] == "list" and a["resource"] == "pods"]
    assert len(lists) == 1 and lists[0]["namespace"] == trial.namespace and lists[0]["result"] == "ok"
    assert [a["tool"] for a in trial.audit if a["tool"] != "kube-api"] == ["rollout_undo"]
    assert trial.run.usage.steps == 2


async def test_python_kind_shorthand(trial_cluster, tmp_path: Path) -> None:
    trial = await run_trial(trial_cluster, tmp_path, AgentSpec(kind="python:agent_trials:KubeClientAgent"),
                            grade=False)
    assert trial.run.status is AgentRunStatus.completed and trial.run.diagnosis.summary.startswith("hello:")


@pytest.mark.parametrize("mode", ["poll", "callback", "sync"])
async def test_http_adapter(trial_cluster, tmp_path: Path, mode: str) -> None:
    service = AgentService(mode)
    async with Served(service) as served:
        agent = AgentSpec(kind="http", config={"url": served.url + "/invoke", "poll_seconds": 0.05})
        trial = await run_trial(trial_cluster, tmp_path, agent)
    assert trial.run.status is AgentRunStatus.completed, trial.run.reason
    assert decide(trial.run, trial.grade).outcome is Outcome.passed, trial.grade
    [inv] = service.invocations
    assert inv["contract"] == "ontrial.agent-invocation/1" and inv["namespace"] == trial.namespace
    assert inv["alert"]["name"] == "KubeDeploymentRolloutStuck" and inv["budgets"]["steps"] == 20
    assert {d["name"] for d in inv["tools"]["definitions"]} >= {"get_resources", "rollout_undo", "get_alerts"}
    assert "certificate-authority-data" in inv["kubeconfig"] and "web-bad-image" not in json.dumps(inv)
    diagnosis = trial.run.diagnosis
    assert diagnosis.root_cause == ["bad-image-tag"] and diagnosis.mitigation_applied and diagnosis.evidence
    assert trial.run.usage.tokens == 150
    assert [a["tool"] for a in trial.audit] == ["get_resources", "rollout_undo", "get_events"]
    assert service.cancelled == []


async def test_http_adapter_agent_service_down_is_an_agent_error(trial_cluster, tmp_path: Path) -> None:
    agent = AgentSpec(kind="http", config={"url": "http://127.0.0.1:9/invoke", "request_timeout": 2})
    trial = await run_trial(trial_cluster, tmp_path, agent, grade=False)
    assert trial.run.status is AgentRunStatus.agent_error and "agent service POST" in trial.run.reason


async def test_command_adapter_with_mcp_and_kubectl(trial_cluster, tmp_path: Path) -> None:
    agent = AgentSpec(kind="command", config={"command": [PYTHON, str(CLI_AGENT), "fix"]})
    trial = await run_trial(trial_cluster, tmp_path, agent)
    assert trial.run.status is AgentRunStatus.completed, trial.run.reason
    assert decide(trial.run, trial.grade).outcome is Outcome.passed, trial.grade
    assert trial.run.diagnosis.root_cause == ["bad-image-tag"] and trial.run.diagnosis.evidence
    assert trial.run.usage.tokens == 350
    tools = [a["tool"] for a in trial.audit]
    assert tools.count("get_events") == 1
    patches = [a for a in trial.kube_requests() if a["verb"] == "patch"]
    assert len(patches) == 1 and patches[0]["args"]["command"] == "kubectl rollout undo"
    assert patches[0]["resource"] == "deployments" and patches[0]["name"] == "web"
    # two kubectl commands (get, rollout undo) + one MCP call = 3 steps; discovery is free
    assert trial.run.usage.steps == 3
    types = [t["type"] for t in trial.transcript]
    assert "agent.process" in types and "agent.process.exit" in types
    exit_record = next(t for t in trial.transcript if t["type"] == "agent.process.exit")
    assert exit_record["returncode"] == 0 and "progress: rolled back" in exit_record["stdout"]


async def test_openai_adapter_runs_a_tool_calling_loop(trial_cluster, tmp_path: Path, monkeypatch) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(steps, "export_transcript_spans",
                        lambda records: export_transcript_spans(records, provider.get_tracer("test")))
    final = {"content": "The image tag does not exist.\n```json\n" + json.dumps(
        {"root_cause": ["bad-image-tag"], "causal_service": "web", "mitigation_applied": True}) + "\n```"}
    model = ModelServer([tool_call("get_resources", kind="pods"),
                         {"content": "Rolling back.", "tool_calls": [("rollout_undo", {"deployment": "web"}),
                                                                     ("get_events", {"name": "web"})]},
                         final])
    monkeypatch.setenv("TEST_MODEL_KEY", "sk-test")
    async with Served(model) as served:
        agent = AgentSpec(kind="openai", model="scripted-1",
                          config={"base_url": served.url + "/v1", "api_key_env": "TEST_MODEL_KEY",
                                  "price_per_1k_input": 1.0})
        trial = await run_trial(trial_cluster, tmp_path, agent)
    assert trial.run.status is AgentRunStatus.completed, trial.run.reason
    assert decide(trial.run, trial.grade).outcome is Outcome.passed, trial.grade
    assert trial.run.diagnosis.root_cause == ["bad-image-tag"] and trial.run.diagnosis.causal_service == "web"
    assert trial.run.usage.tokens == 3 * 120 and trial.run.usage.steps == 3
    assert trial.run.usage.cost_usd == pytest.approx(0.3)
    assert set(model.auth) == {"Bearer sk-test"}
    first, last = model.requests[0], model.requests[-1]
    assert first["model"] == "scripted-1" and {t["function"]["name"] for t in first["tools"]} >= {"rollout_undo"}
    tool_messages = [m for m in last["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 3 and "rolled back" in tool_messages[1]["content"]
    usage = [t for t in trial.transcript if t["type"] == "usage"]
    assert len(usage) == 3 and usage[0]["gen_ai.usage.input_tokens"] == 100
    assistant = [t for t in trial.transcript if t["type"] == "message" and t["role"] == "assistant"]
    assert assistant[0]["parts"][0]["type"] == "tool_call" and assistant[0]["gen_ai.request.model"] == "scripted-1"
    spans = [s.name for s in exporter.get_finished_spans()]  # the same steps as OpenTelemetry spans
    assert spans.count("chat scripted-1") == 3 and spans.count("execute_tool rollout_undo") == 1
    assert "invoke_agent openai" in spans


async def test_openai_adapter_free_text_answer_is_kept(trial_cluster, tmp_path: Path) -> None:
    model = ModelServer([{"content": "Looks like a bad image tag on web; I would roll it back."}])
    async with Served(model) as served:
        agent = AgentSpec(kind="openai", model="m", config={"base_url": served.url + "/v1", "api_key_env": None})
        trial = await run_trial(trial_cluster, tmp_path, agent)
    assert trial.run.status is AgentRunStatus.completed
    assert trial.run.diagnosis.root_cause == [] and "bad image tag" in trial.run.diagnosis.summary
    assert trial.grade.diagnosis_score == 1.0 and not trial.grade.passed  # nothing was fixed
    assert model.auth == [None]


async def test_openai_provider_failure_is_a_model_api_error(trial_cluster, tmp_path: Path) -> None:
    model = ModelServer([tool_call("get_resources", kind="pods"), 503, 503, 503])
    async with Served(model) as served:
        agent = AgentSpec(kind="openai", model="m", config={"base_url": served.url + "/v1", "api_key_env": None,
                                                            "backoff_seconds": 0.01})
        trial = await run_trial(trial_cluster, tmp_path, agent, grade=False)
    assert trial.run.status is AgentRunStatus.model_api_error and "503" in trial.run.reason
    assert decide(trial.run, None).outcome is Outcome.infra_error
    assert trial.run.usage.steps == 1 and len(model.requests) == 4
