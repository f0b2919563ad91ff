"""SuiteWorkflow on kubesim: tasks × k child trials with deterministic ids and bounded concurrency, a
progress query, verdicts recorded in the results store, and a cancel that still yields one verdict per
planned trial, an inconclusive gate and no sandbox left behind."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ontrial.models.suite import GateVerdict, RunStatus
from ontrial.outcomes import Outcome
from ontrial.results import ResultsStore
from trial_harness import child_starts, namespaces, namespaces_of, result_within, suite_input, suite_tasks
from workflows import SuiteWorkflow
from workflows.suite_models import SuiteStatus


async def test_every_task_gets_k_trials_with_deterministic_ids(temporal_env, task_queue, trial_cluster, tmp_path):
    suite = suite_input(trial_cluster, tmp_path, suite_tasks(tmp_path / "tasks", 2), trials=2, concurrency=2)
    run_id = suite.spec.suite_id
    handle = await temporal_env.client.start_workflow(SuiteWorkflow.run, suite, id=run_id, task_queue=task_queue)
    seen = set()
    while (progress := await handle.query(SuiteWorkflow.progress)).status is not SuiteStatus.done:
        seen.add(progress.status)
        assert progress.running <= 2
        await asyncio.sleep(0.05)
    outcome = await handle.result()
    assert seen >= {SuiteStatus.running}
    assert progress.total == 4 and progress.done == 4 and progress.by_outcome == {"passed": 4}
    expected = sorted(f"{run_id}/web-scaled-down-{t:02d}/{k}" for t in (0, 1) for k in (0, 1))
    assert sorted(await child_starts(temporal_env.client, run_id)) == expected
    record = ResultsStore(suite.results_url).get(run_id)
    assert sorted(t.trial_id for t in record.trials) == expected
    assert {t.outcome.outcome for t in record.trials} == {Outcome.passed}
    assert all(t.versions.task_hash.startswith("sha256:") and t.versions.task_version == "1" for t in record.trials)
    assert outcome.gate.verdict is GateVerdict.passed and outcome.trials == 4 and outcome.pass_hat_1 == 1.0
    assert record.versions.task_set_hash and record.versions.grader and record.versions.harness
    assert record.started_at <= record.finished_at
    assert {Path(p).name for p in outcome.reports.values()} == {"report.json", "report.md", "report.junit.xml"}
    assert "web-scaled-down-01" in Path(outcome.reports["junit"]).read_text()


async def test_cancelling_the_suite_cancels_trials_and_leaves_no_sandbox(temporal_env, task_queue, trial_cluster,
                                                                         tmp_path):
    suite = suite_input(trial_cluster, tmp_path, suite_tasks(tmp_path / "tasks", 2), agent="test-sleep", trials=2,
                        concurrency=2)
    handle = await temporal_env.client.start_workflow(SuiteWorkflow.run, suite, id=suite.spec.suite_id,
                                                      task_queue=task_queue)
    while (await handle.query(SuiteWorkflow.progress)).running < 2:
        await asyncio.sleep(0.1)
    await asyncio.sleep(1.0)
    await handle.cancel()
    outcome = await result_within(handle, 90)
    assert outcome.status is RunStatus.cancelled
    assert outcome.gate.verdict is GateVerdict.inconclusive and any("cancelled" in r for r in outcome.gate.reasons)
    record = ResultsStore(suite.results_url).get(suite.spec.suite_id)
    assert len(record.trials) == 4  # one verdict per planned trial, also for those never started
    outcomes = {t.trial_id: t.outcome.outcome for t in record.trials}
    assert set(outcomes.values()) <= {Outcome.cancelled, Outcome.budget_exhausted}, outcomes
    assert list(outcomes.values()).count(Outcome.cancelled) >= 2
    mine = [t.sandbox_namespace for t in record.trials if t.sandbox_namespace]
    assert mine and all(t.torn_down for t in record.trials if t.sandbox_namespace)
    assert not set(mine) & set(await namespaces(trial_cluster))


async def test_a_terminated_trial_is_an_infra_error_and_its_sandbox_is_left_to_the_reaper(
        temporal_env, task_queue, trial_cluster, tmp_path):
    from ontrial import steps
    from ontrial.models.trial import TrialSpec

    suite = suite_input(trial_cluster, tmp_path, suite_tasks(tmp_path / "tasks", 1), agent="test-sleep")
    handle = await temporal_env.client.start_workflow(SuiteWorkflow.run, suite, id=suite.spec.suite_id,
                                                      task_queue=task_queue)
    trial_id = f"{suite.spec.suite_id}/web-scaled-down-00/0"
    while not await namespaces_of(trial_cluster, trial_id):
        await asyncio.sleep(0.1)
    await asyncio.sleep(1.0)
    await temporal_env.client.get_workflow_handle(trial_id).terminate("operator mistake")
    outcome = await result_within(handle, 60)
    [verdict] = ResultsStore(suite.results_url).get(suite.spec.suite_id).trials
    assert verdict.outcome.outcome is Outcome.infra_error and "did not complete" in verdict.outcome.reason
    assert outcome.gate.verdict is GateVerdict.inconclusive  # 100% infra errors: no verdict about the agent
    leftovers = await namespaces_of(trial_cluster, trial_id)
    assert leftovers  # terminate runs no workflow code: no teardown (the reaper's job)
    spec = TrialSpec(suite_id=suite.spec.suite_id, task_id="web-scaled-down-00", task_file="-",
                     agent=suite.spec.agent, sandbox=suite.spec.sandbox, artifacts_root=str(tmp_path))
    for name in leftovers:
        await steps.teardown(spec, name)
