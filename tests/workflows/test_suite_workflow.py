"""RunTrialsWorkflow: tasks × k child trials with deterministic ids, bounded concurrency, and a
cancel that still yields one verdict per planned trial and leaves no sandbox behind."""

from __future__ import annotations

import asyncio
import uuid

from temporalio.api.enums.v1 import EventType

from ontrial.models.trial import AgentSpec, SandboxSettings
from ontrial.outcomes import Outcome
from trial_harness import FAST, TASKS, namespaces, namespaces_of, result_within
from workflows import RunTrialsInput, RunTrialsWorkflow, TaskRef


def suite_input(cluster, tmp_path, agent: str, *, trials: int, concurrency: int, config=None) -> RunTrialsInput:
    return RunTrialsInput(
        suite_id=f"suite-{uuid.uuid4().hex[:6]}",
        tasks=[TaskRef(task_id=t, task_file=str(TASKS / t / "task.yaml")) for t in ("web-bad-image", "web-tight-wall")],
        agent=AgentSpec(kind=agent, config=config or {}), trials=trials, concurrency=concurrency,
        sandbox=SandboxSettings(kubeconfig=cluster.kubeconfig_path, settle_seconds=60),
        artifacts_root=str(tmp_path), trial_options=FAST)


async def test_every_task_gets_k_trials_with_deterministic_ids(temporal_env, task_queue, trial_cluster, tmp_path):
    suite = suite_input(trial_cluster, tmp_path, "reference", trials=2, concurrency=2)
    handle = await temporal_env.client.start_workflow(RunTrialsWorkflow.run, suite, id=suite.suite_id,
                                                      task_queue=task_queue)
    most_running = 0
    while not (progress := await handle.query(RunTrialsWorkflow.progress)).done == 4:
        most_running = max(most_running, progress.running)
        assert progress.running <= 2
        await asyncio.sleep(0.05)
    result = await handle.result()
    ids = sorted(r.trial_id for r in result.results)
    assert ids == sorted(f"{suite.suite_id}/{task}/{k}" for task in ("web-bad-image", "web-tight-wall") for k in (0, 1))
    assert {r.outcome.outcome for r in result.results} == {Outcome.passed}
    assert progress.by_outcome == {"passed": 4} and progress.total == 4
    children = [e.child_workflow_execution_started_event_attributes.workflow_execution.workflow_id
                async for e in handle.fetch_history_events()
                if e.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED]
    assert sorted(children) == ids


async def test_cancelling_the_suite_cancels_trials_and_leaves_no_sandbox(temporal_env, task_queue, trial_cluster,
                                                                         tmp_path):
    suite = suite_input(trial_cluster, tmp_path, "test-sleep", trials=2, concurrency=2)
    handle = await temporal_env.client.start_workflow(RunTrialsWorkflow.run, suite, id=suite.suite_id,
                                                      task_queue=task_queue)
    while (await handle.query(RunTrialsWorkflow.progress)).running < 2:
        await asyncio.sleep(0.1)
    await asyncio.sleep(1.0)
    await handle.cancel()
    result = await result_within(handle, 90)
    assert len(result.results) == 4
    outcomes = {r.trial_id: r.outcome for r in result.results}
    assert all(o.outcome in (Outcome.cancelled, Outcome.budget_exhausted) for o in outcomes.values()), outcomes
    assert sum(o.outcome is Outcome.cancelled for o in outcomes.values()) >= 2
    never_started = [r for r in result.results if r.started_at is None]
    assert all(r.outcome.outcome is Outcome.cancelled for r in never_started)
    mine = [r.sandbox_namespace for r in result.results if r.sandbox_namespace]
    assert mine and all(r.torn_down for r in result.results if r.sandbox_namespace)
    assert not set(mine) & set(await namespaces(trial_cluster))


async def test_a_terminated_trial_is_an_infra_error_and_its_sandbox_is_left_to_the_reaper(
        temporal_env, task_queue, trial_cluster, tmp_path):
    from ontrial import steps

    suite = suite_input(trial_cluster, tmp_path, "test-sleep", trials=1, concurrency=2)
    suite = suite.model_copy(update={"tasks": suite.tasks[:1]})
    handle = await temporal_env.client.start_workflow(RunTrialsWorkflow.run, suite, id=suite.suite_id,
                                                      task_queue=task_queue)
    trial_id = f"{suite.suite_id}/web-bad-image/0"
    while not await namespaces_of(trial_cluster, trial_id):
        await asyncio.sleep(0.1)
    await asyncio.sleep(1.0)
    await temporal_env.client.get_workflow_handle(trial_id).terminate("operator mistake")
    result = await result_within(handle, 60)
    [verdict] = result.results
    assert verdict.outcome.outcome is Outcome.infra_error and "did not complete" in verdict.outcome.reason
    leftovers = await namespaces_of(trial_cluster, trial_id)
    assert leftovers  # terminate runs no workflow code: no teardown (the reaper's job)
    for name in leftovers:
        await steps.teardown(suite.trial_specs()[0], name)
