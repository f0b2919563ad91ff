"""TrialWorkflow on a real Temporal dev server and an embedded kubesim: verdicts, and a sandbox
that is torn down however the trial ends."""

from __future__ import annotations

import asyncio
import json
import uuid

from temporalio.testing import WorkflowEnvironment

from ontrial.models.trial import BudgetKind
from ontrial.outcomes import InfraStage, Outcome
from ontrial.tasks import load_task, task_hash
from trial_harness import (
    attempts_of,
    clear_api_faults,
    markers,
    namespaces,
    namespaces_of,
    result_within,
    seed_failing_first,
    set_api_faults,
    trial_input,
    trial_spec,
    wait_for_stage,
)
from workflows import TrialStage, TrialWorkflow


def suite() -> str:
    return f"s-{uuid.uuid4().hex[:6]}"


async def run(env: WorkflowEnvironment, queue: str, spec):
    return await env.client.execute_workflow(TrialWorkflow.run, trial_input(spec), id=spec.trial_id, task_queue=queue)


async def assert_torn_down(cluster, result) -> None:
    assert result.sandbox_namespace and result.torn_down
    assert result.sandbox_namespace not in await namespaces(cluster)
    assert await namespaces_of(cluster, result.trial_id) == []


async def test_reference_agent_passes_and_the_sandbox_is_gone(temporal_env, task_queue, trial_cluster, tmp_path):
    spec = trial_spec(trial_cluster, tmp_path, suite=suite())
    result = await run(temporal_env, task_queue, spec)
    assert result.outcome.outcome is Outcome.passed, result.outcome
    assert result.grade is not None and result.grade.passed
    assert result.run is not None and result.run.usage.steps == 3
    assert result.fault is not None and result.fault.applied
    assert {"transcript", "audit", "final_snapshot"} <= set(result.artifacts)
    assert result.started_at < result.finished_at and result.versions.harness
    assert result.versions.task_hash == task_hash(load_task(spec.task_file))  # a standalone trial too
    await assert_torn_down(trial_cluster, result)


async def test_noop_agent_fails_on_the_checks(temporal_env, task_queue, trial_cluster, tmp_path):
    result = await run(temporal_env, task_queue, trial_spec(trial_cluster, tmp_path, agent="noop", suite=suite()))
    assert result.outcome.outcome is Outcome.failed
    assert "rollout_complete" in result.outcome.reason
    await assert_torn_down(trial_cluster, result)


async def test_agent_crash_is_the_agents_failure_and_teardown_runs(temporal_env, task_queue, trial_cluster, tmp_path):
    result = await run(temporal_env, task_queue, trial_spec(trial_cluster, tmp_path, agent="test-crash", suite=suite()))
    assert result.outcome.outcome is Outcome.agent_error
    assert "shoelaces" in result.outcome.reason
    assert result.grade is not None  # still graded, for the report
    await assert_torn_down(trial_cluster, result)


async def test_step_budget_hit_and_teardown_runs(temporal_env, task_queue, trial_cluster, tmp_path):
    result = await run(temporal_env, task_queue,
                       trial_spec(trial_cluster, tmp_path, agent="test-step-loop", suite=suite()))
    assert result.outcome.outcome is Outcome.budget_exhausted
    assert result.outcome.budget is BudgetKind.steps
    assert result.run is not None and result.run.usage.steps >= 8
    await assert_torn_down(trial_cluster, result)


async def test_wall_budget_hit_by_a_slow_agent(temporal_env, task_queue, trial_cluster, tmp_path):
    spec = trial_spec(trial_cluster, tmp_path, agent="test-sleep", task="web-tight-wall", suite=suite())
    result = await run(temporal_env, task_queue, spec)
    assert result.outcome.outcome is Outcome.budget_exhausted
    assert result.outcome.budget is BudgetKind.wall
    await assert_torn_down(trial_cluster, result)


async def test_cancelling_a_running_trial_stops_the_agent_then_tears_down(temporal_env, task_queue, trial_cluster,
                                                                          tmp_path):
    spec = trial_spec(trial_cluster, tmp_path, agent="test-sleep", suite=suite(),
                      config={"marker_dir": str(tmp_path / "runs")})
    handle = await temporal_env.client.start_workflow(TrialWorkflow.run, trial_input(spec), id=spec.trial_id,
                                                      task_queue=task_queue)
    await wait_for_stage(handle, TrialStage.running_agent)
    while not markers(tmp_path / "runs"):
        await asyncio.sleep(0.05)
    await handle.cancel()
    result = await result_within(handle, 60)
    assert result.outcome.outcome is Outcome.cancelled
    assert "running_agent" in result.outcome.reason
    assert result.run is None  # the agent step was cancelled, not completed
    assert await handle.query(TrialWorkflow.progress) is TrialStage.done
    await assert_torn_down(trial_cluster, result)


async def test_cancelling_while_the_sandbox_is_created_still_leaves_nothing(temporal_env, task_queue, trial_cluster,
                                                                            tmp_path):
    spec = trial_spec(trial_cluster, tmp_path, suite=suite())
    handle = await temporal_env.client.start_workflow(TrialWorkflow.run, trial_input(spec), id=spec.trial_id,
                                                      task_queue=task_queue)
    await wait_for_stage(handle, TrialStage.creating_sandbox)
    await handle.cancel()
    result = await result_within(handle, 60)
    assert result.outcome.outcome is Outcome.cancelled
    assert result.run is None
    assert result.torn_down == (result.sandbox_namespace is not None)
    assert await namespaces_of(trial_cluster, spec.trial_id) == []


async def test_transient_sandbox_error_is_retried_and_the_trial_passes(temporal_env, task_queue, trial_cluster,
                                                                        tmp_path):
    spec = trial_spec(trial_cluster, tmp_path, suite=suite())
    set_api_faults(trial_cluster, error_rate=0.5, seed=seed_failing_first(0.5), methods=["POST"],
                   paths=["/apis/apps/v1/namespaces/"])  # the app's Deployment create fails once
    try:
        result = await run(temporal_env, task_queue, spec)
    finally:
        clear_api_faults(trial_cluster)
    assert result.outcome.outcome is Outcome.passed, result.outcome
    assert await attempts_of(temporal_env.client, spec.trial_id, "create_sandbox") == 2
    await assert_torn_down(trial_cluster, result)


async def test_infra_retries_running_out_is_an_infra_error_and_teardown_runs(temporal_env, task_queue,
                                                                             trial_cluster, tmp_path):
    spec = trial_spec(trial_cluster, tmp_path, suite=suite())
    set_api_faults(trial_cluster, error_rate=1.0, methods=["PATCH"], paths=["/apis/apps/v1/namespaces/"])
    try:
        result = await run(temporal_env, task_queue, spec)  # the fault's patch never goes through
    finally:
        clear_api_faults(trial_cluster)
    assert result.outcome.outcome is Outcome.infra_error
    assert result.outcome.infra_stage is InfraStage.fault
    assert "injecting_fault" in result.outcome.reason and "500" in result.outcome.reason
    assert not result.outcome.counts
    assert await attempts_of(temporal_env.client, spec.trial_id, "inject_fault") >= 2
    assert result.run is None and result.grade is None
    await assert_torn_down(trial_cluster, result)


async def test_unrecoverable_infra_error_is_an_infra_error_not_a_failure(temporal_env, task_queue, trial_cluster,
                                                                         tmp_path):
    spec = trial_spec(trial_cluster, tmp_path, task="web-never-healthy", suite=suite())
    result = await run(temporal_env, task_queue, spec)
    assert result.outcome.outcome is Outcome.infra_error
    assert result.outcome.infra_stage is InfraStage.sandbox
    assert "not healthy" in result.outcome.reason
    assert await attempts_of(temporal_env.client, spec.trial_id, "create_sandbox") == 1
    assert result.sandbox_namespace is None
    assert await namespaces_of(trial_cluster, spec.trial_id) == []


async def test_sandboxes_left_by_a_lost_attempt_are_discarded(temporal_env, task_queue, trial_cluster, tmp_path):
    from ontrial.artifacts import artifact_store_for
    from ontrial.sandbox.kube import KubeBackend

    spec = trial_spec(trial_cluster, tmp_path, agent="noop", suite=suite())
    async with KubeBackend.from_settings(spec.sandbox, artifact_store_for(str(tmp_path))) as backend:
        orphan = await backend.create(spec.trial_id)  # as if a killed worker had started creating it
    result = await run(temporal_env, task_queue, spec)
    assert result.sandbox_namespace != orphan.namespace
    assert orphan.namespace not in await namespaces(trial_cluster)
    await assert_torn_down(trial_cluster, result)


async def test_history_carries_summaries_not_the_transcript(temporal_env, task_queue, trial_cluster, tmp_path):
    from ontrial.artifacts import artifact_store_for, read_jsonl

    spec = trial_spec(trial_cluster, tmp_path, suite=suite())
    result = await run(temporal_env, task_queue, spec)
    history = (await temporal_env.client.get_workflow_handle(spec.trial_id).fetch_history()).to_json()
    assert len(history) < 100_000
    records = read_jsonl(artifact_store_for(spec.artifacts_root), result.artifacts["transcript"])
    tool_output = [line for record in records if record.get("type") == "tool.result"
                   for line in str(record.get("gen_ai.tool.call.result", "")).splitlines() if len(line.strip()) > 30]
    assert len(tool_output) >= 3  # the transcript has content worth leaking
    for line in tool_output:
        assert json.dumps(line)[1:-1] not in history and line not in history, line


async def test_progress_query_follows_the_stages(temporal_env, task_queue, trial_cluster, tmp_path):
    spec = trial_spec(trial_cluster, tmp_path, suite=suite())
    handle = await temporal_env.client.start_workflow(TrialWorkflow.run, trial_input(spec), id=spec.trial_id,
                                                      task_queue=task_queue)
    seen = []
    while (stage := await handle.query(TrialWorkflow.progress)) is not TrialStage.done:
        if not seen or seen[-1] is not stage:
            seen.append(stage)
        await asyncio.sleep(0.02)
    await handle.result()
    order = list(TrialStage)
    assert seen and seen == sorted(seen, key=order.index)  # never goes back
    assert TrialStage.creating_sandbox in seen
