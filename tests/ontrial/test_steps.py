"""Whole trials through the plain steps against a real embedded kubesim: the reference agent fixes
the fault and passes, the noop agent fails, budgets and agent failures become AgentRun results."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Iterator

import pytest

from ontrial import steps
from ontrial.agents import AgentOutput, NoopAgent, register_agent
from ontrial.artifacts import artifact_store_for, read_jsonl
from ontrial.errors import ConfigError
from ontrial.models.trial import AgentRunStatus, AgentSpec, BudgetKind, FaultReport, SandboxSettings, TrialSpec
from ontrial.outcomes import Outcome, decide
from ontrial.sandbox import KubeRest, load_admin
from ontrial.sandbox.kinds import lookup_kind

embedded = pytest.importorskip("kubesim.embedded", reason="kubesim is not importable")
FIXTURES = Path(__file__).parent / "fixtures" / "shop"
NS = lookup_kind("Namespace")


@pytest.fixture(scope="module")
def sim() -> Iterator["embedded.Embedded"]:
    with embedded.start(time_scale=0) as server:
        yield server


def trial(sim, tmp_path: Path, agent: str, task: str = "web-bad-image", index: int = 0) -> TrialSpec:
    return TrialSpec(suite_id="suite-1", task_id=task, trial_index=index,
                     task_file=str(FIXTURES / task / "task.yaml"), agent=AgentSpec(kind=agent),
                     sandbox=SandboxSettings(kubeconfig=sim.kubeconfig_path, settle_seconds=60),
                     artifacts_root=str(tmp_path / "artifacts"))


async def namespace_exists(sim, name: str) -> bool:
    access = load_admin(sim.kubeconfig_path)
    try:
        return await KubeRest(access.api_client).get_or_none(NS, None, name) is not None
    finally:
        access.close()


async def run_trial(spec: TrialSpec, beats: list[dict[str, Any]] | None = None):
    sandbox = await steps.create_sandbox(spec)
    try:
        fault = await steps.inject_fault(spec, sandbox)
        run = await steps.run_agent(spec, sandbox, fault, (beats if beats is not None else []).append)
        grade = await steps.grade(spec, sandbox, run)
        artifacts = await steps.collect_artifacts(spec, sandbox, run)
    finally:
        await steps.teardown(spec, sandbox.namespace)
    return sandbox, fault, run, grade, artifacts


async def test_reference_agent_fixes_the_fault_and_passes(sim, tmp_path: Path) -> None:
    spec = trial(sim, tmp_path, "reference")
    beats: list[dict[str, Any]] = []
    sandbox, fault, run, grade, artifacts = await run_trial(spec, beats)
    assert sandbox.baseline_snapshot_ref and sandbox.token_expires_at is not None
    assert fault.applied == ["patch Deployment/web (strategic)"]
    assert fault.alert["name"] == "KubeDeploymentRolloutStuck"
    assert fault.alert["labels"]["namespace"] == sandbox.namespace

    assert run.status is AgentRunStatus.completed, run.reason
    assert run.usage.steps == 4 and run.safety_violations == []
    assert run.diagnosis.root_cause == ["bad-image-tag"] and run.diagnosis.mitigation_applied
    assert beats and set(beats[0]) == {"steps", "tokens", "wall_seconds"}

    store = artifact_store_for(spec.artifacts_root)
    audit = read_jsonl(store, run.audit_ref)
    assert [a["tool"] for a in audit] == ["get_resources", "describe", "get_events", "rollout_undo"]
    assert all(a["result"] == "ok" for a in audit), audit
    assert audit[-1]["verb"] == "patch" and audit[-1]["sim_seconds"] is not None
    transcript = read_jsonl(store, run.transcript_ref)
    assert transcript[0]["type"] == "session.start" and transcript[-1]["type"] == "session.end"
    assert sum(1 for t in transcript if t["type"] == "tool.call") == 4

    assert grade.passed and grade.mitigation_passed, grade
    assert decide(run, grade).outcome is Outcome.passed
    assert {"final_snapshot", "baseline", "audit", "transcript", "cassette"} <= set(artifacts)
    from ontrial.cassettes import load_cassette
    assert len(load_cassette(store, artifacts["cassette"]).interactions) == run.usage.steps  # one per tool call
    assert any(k.startswith("logs/web-") for k in artifacts)
    assert not await namespace_exists(sim, sandbox.namespace)
    await steps.teardown(spec, sandbox.namespace)  # idempotent


async def test_noop_agent_fails(sim, tmp_path: Path) -> None:
    spec = trial(sim, tmp_path, "noop")
    _, _, run, grade, _ = await run_trial(spec)
    assert run.status is AgentRunStatus.completed and run.usage.steps == 0
    assert not grade.passed and not grade.mitigation_passed
    assert decide(run, grade).outcome is Outcome.failed


class Looper:
    """Calls tools until something stops it."""

    async def setup(self, ctx) -> None:
        self.ctx = ctx

    async def invoke(self, alert, tools, budgets) -> AgentOutput:
        while True:
            await tools.call("get_resources", {"kind": "pods"})

    async def teardown(self) -> None:
        pass


class TokenSpender(Looper):
    async def invoke(self, alert, tools, budgets) -> AgentOutput:
        tools.report_usage(40, 20, model="test-model")
        return AgentOutput(text="unreachable")


class Sleeper(Looper):
    async def invoke(self, alert, tools, budgets) -> AgentOutput:
        await asyncio.sleep(60)
        return AgentOutput()


class Crasher(Looper):
    async def invoke(self, alert, tools, budgets) -> AgentOutput:
        await tools.call("get_events", {})
        raise RuntimeError("model returned garbage")


register_agent("test-looper", lambda spec, task: Looper())
register_agent("test-tokens", lambda spec, task: TokenSpender())
register_agent("test-sleeper", lambda spec, task: Sleeper())
register_agent("test-crasher", lambda spec, task: Crasher())
register_agent("test-noop", lambda spec, task: NoopAgent())


@pytest.mark.parametrize(("agent", "kind", "steps_used"), [("test-looper", BudgetKind.steps, 3),
                                                           ("test-tokens", BudgetKind.tokens, 0),
                                                           ("test-sleeper", BudgetKind.wall, 0)])
async def test_budget_hits_stop_the_agent_and_the_trial_is_still_graded(sim, tmp_path: Path, agent: str,
                                                                        kind: BudgetKind, steps_used: int) -> None:
    spec = trial(sim, tmp_path, agent, task="web-tight-budget")
    beats: list[dict[str, Any]] = []
    _, _, run, grade, _ = await run_trial(spec, beats)
    assert run.status is AgentRunStatus.budget_exhausted and run.budget is kind, run
    assert run.usage.steps == steps_used
    if kind is BudgetKind.wall:
        assert len(beats) >= 2 and 2.5 < run.usage.wall_seconds < 10
    transcript = read_jsonl(artifact_store_for(spec.artifacts_root), run.transcript_ref)
    if kind is BudgetKind.tokens:
        assert run.usage.tokens == 60
        usage = [t for t in transcript if t["type"] == "usage"]
        assert usage and usage[0]["gen_ai.usage.input_tokens"] == 40 and usage[0]["gen_ai.request.model"] == "test-model"
    assert grade is not None and not grade.within_budget
    outcome = decide(run, grade)
    assert outcome.outcome is Outcome.budget_exhausted and outcome.budget is kind
    assert any(t["type"] == "budget.exhausted" and t["kind"] == kind.value for t in transcript)


async def test_agent_exception_is_an_agent_error(sim, tmp_path: Path) -> None:
    spec = trial(sim, tmp_path, "test-crasher")
    sandbox = await steps.create_sandbox(spec)
    try:
        fault = await steps.inject_fault(spec, sandbox)
        run = await steps.run_agent(spec, sandbox, fault, lambda details: None)
    finally:
        await steps.teardown(spec, sandbox.namespace)
    assert run.status is AgentRunStatus.agent_error and "RuntimeError: model returned garbage" in run.reason
    assert run.usage.steps == 1 and run.diagnosis is None
    assert decide(run, None).outcome is Outcome.agent_error


DEMO_TASKS = sorted((Path(__file__).parents[2] / "tasks").glob("*/task.yaml"))


@pytest.mark.skipif(not DEMO_TASKS, reason="no demo tasks under tasks/")
@pytest.mark.parametrize("task_file", DEMO_TASKS, ids=lambda p: p.parent.name)
async def test_demo_tasks_reference_passes_and_noop_fails(sim, tmp_path: Path, task_file: Path) -> None:
    for agent, outcome in (("reference", Outcome.passed), ("noop", Outcome.failed)):
        spec = trial(sim, tmp_path / agent, agent).model_copy(update={"task_id": task_file.parent.name,
                                                                      "task_file": str(task_file)})
        _, _, run, grade, _ = await run_trial(spec)
        assert decide(run, grade).outcome is outcome, (agent, grade)


async def test_run_agent_mints_the_agents_token_as_it_starts(sim, tmp_path: Path) -> None:
    """Waiting for the trigger alert (or a retry) can outlast a token made with the sandbox."""
    spec = trial(sim, tmp_path, "reference")
    sandbox = await steps.create_sandbox(spec)
    store = artifact_store_for(spec.artifacts_root)
    try:
        before = store.get(sandbox.agent_kubeconfig_ref)
        fault = await steps.inject_fault(spec, sandbox)
        run = await steps.run_agent(spec, sandbox, fault, lambda details: None)
        assert run.status is AgentRunStatus.completed
        assert all(a["result"] == "ok" for a in read_jsonl(store, run.audit_ref))
        assert store.get(sandbox.agent_kubeconfig_ref) != before
    finally:
        await steps.teardown(spec, sandbox.namespace)


async def test_unknown_agent_kind_is_a_config_error(sim, tmp_path: Path) -> None:
    spec = trial(sim, tmp_path, "no-such-agent")
    sandbox = await steps.create_sandbox(spec)
    try:
        with pytest.raises(ConfigError, match="unknown agent kind"):
            await steps.run_agent(spec, sandbox, FaultReport(), lambda details: None)
    finally:
        await steps.teardown(spec, sandbox.namespace)
