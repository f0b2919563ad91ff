"""A failed gate waits for a human decision: the override Update is validated (only a failed gate, a named
approver, a reason), recorded with who/why/when in the result and the store, and may promote the run;
a refused update changes nothing. Runs on the instant trial path (orchestration only)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from temporalio.client import WorkflowUpdateFailedError

from ontrial.models.suite import GateVerdict, OverrideRequest
from ontrial.results import ResultsStore
from ontrial.suite.decisions import DecisionRefused
from trial_harness import result_within, suite_input, suite_tasks
from worker.decisions import override
from workflows import SuiteWorkflow
from workflows.suite_models import SuiteStatus


async def baseline_and_candidate(env, queue, tmp_path, *, candidate_rate: float, window: timedelta):
    """A passing baseline run (promoted), then a candidate gated against it that waits ``window``."""
    tasks = suite_tasks(tmp_path / "tasks", 6)
    url = f"sqlite:///{tmp_path}/results.db"
    base = suite_input(None, tmp_path, tasks, agent="instant", trials=3, results_url=url, name="gate-me",
                       promote_on_pass=True)
    outcome = await env.client.execute_workflow(SuiteWorkflow.run, base, id=base.spec.suite_id, task_queue=queue)
    assert outcome.promoted and ResultsStore(url).baseline("gate-me").run_id == base.spec.suite_id
    cand = suite_input(None, tmp_path, tasks, agent="instant", trials=3, results_url=url, name="gate-me",
                       config={"pass_rate": candidate_rate}, decision_window=window)
    handle = await env.client.start_workflow(SuiteWorkflow.run, cand, id=cand.spec.suite_id, task_queue=queue)
    return base, cand, handle


async def wait_for(handle, status: SuiteStatus, timeout: float = 60) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while (await handle.query(SuiteWorkflow.progress)).status is not status:
        assert loop.time() < deadline, f"suite never reached {status}"
        await asyncio.sleep(0.1)


async def test_override_update_is_validated_then_recorded_and_promotes(temporal_env, instant_queue, tmp_path):
    base, cand, handle = await baseline_and_candidate(temporal_env, instant_queue, tmp_path, candidate_rate=0.3,
                                                      window=timedelta(minutes=10))
    await wait_for(handle, SuiteStatus.awaiting_decision)
    waiting = await handle.query(SuiteWorkflow.outcome)
    assert waiting.gate.verdict is GateVerdict.failed and waiting.gate.regressions
    assert waiting.baseline_run_id == base.spec.suite_id
    for request, needle in [(OverrideRequest(approver="  ", reason="known flake"), "approver"),
                            (OverrideRequest(approver="alice", reason=""), "reason")]:
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(SuiteWorkflow.override, request)
        assert needle in str(refused.value.cause)
    assert (await handle.query(SuiteWorkflow.progress)).status is SuiteStatus.awaiting_decision  # nothing changed

    accepted = await handle.execute_update(
        SuiteWorkflow.override, OverrideRequest(approver="alice", reason="flaky fixture, tracked in OPS-12",
                                                promote=True))
    assert accepted.gate.override.approver == "alice" and accepted.gate.effective is GateVerdict.passed
    assert accepted.gate.override.at is not None and accepted.promoted
    final = await result_within(handle, 30)  # the decision ends the wait
    assert final.gate.override.reason == "flaky fixture, tracked in OPS-12"
    store = ResultsStore(cand.results_url)
    saved = store.get(cand.spec.suite_id)
    assert saved.gate.verdict is GateVerdict.failed and saved.gate.override.approver == "alice"
    assert store.baseline("gate-me").run_id == cand.spec.suite_id
    assert "overridden from fail" in open(final.reports["md"]).read()
    with pytest.raises(DecisionRefused, match="already overridden"):  # the workflow is gone: the store decides
        await override(temporal_env.client, store, cand.spec.suite_id, OverrideRequest(approver="bob", reason="again"))


async def test_override_is_refused_while_running_and_on_a_passing_gate(temporal_env, instant_queue, tmp_path):
    base, cand, handle = await baseline_and_candidate(temporal_env, instant_queue, tmp_path, candidate_rate=1.0,
                                                      window=timedelta(minutes=10))
    with pytest.raises((WorkflowUpdateFailedError, DecisionRefused)) as early:
        await override(temporal_env.client, ResultsStore(cand.results_url), cand.spec.suite_id,
                       OverrideRequest(approver="alice", reason="too early"))
    assert "only a failed gate" in str(early.value) or "once the gate has failed" in str(early.value) \
        or "once it has failed" in str(early.value)
    outcome = await result_within(handle, 60)  # a passing gate does not wait for a decision
    assert outcome.gate.verdict is GateVerdict.passed
    with pytest.raises(DecisionRefused, match="only a failed gate can be overridden"):
        await override(temporal_env.client, ResultsStore(cand.results_url), cand.spec.suite_id,
                       OverrideRequest(approver="alice", reason="why not"))


async def test_a_failed_gate_without_a_window_is_overridden_in_the_store(temporal_env, instant_queue, tmp_path):
    base, cand, handle = await baseline_and_candidate(temporal_env, instant_queue, tmp_path, candidate_rate=0.0,
                                                      window=timedelta(0))
    outcome = await result_within(handle, 60)
    assert outcome.gate.verdict is GateVerdict.failed and len(outcome.gate.regressions) == 6
    store = ResultsStore(cand.results_url)
    decided = await override(temporal_env.client, store, cand.spec.suite_id,
                             OverrideRequest(approver="carol", reason="expected: the fixture changed"))
    assert decided.via == "store" and decided.outcome.gate.effective is GateVerdict.passed
    assert store.get(cand.spec.suite_id).gate.override.approver == "carol"
    assert store.baseline("gate-me").run_id == base.spec.suite_id  # not promoted unless asked
