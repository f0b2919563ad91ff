"""A worker killed with SIGKILL mid-trial: a restarted worker finishes the trial with exactly one
verdict, the agent is not run a second time, and no namespace is leaked."""

from __future__ import annotations

import asyncio
import signal
import uuid

from temporalio.api.enums.v1 import EventType

from ontrial.outcomes import InfraStage, Outcome
from trial_harness import (
    markers,
    namespaces,
    namespaces_of,
    result_within,
    start_worker,
    trial_input,
    trial_spec,
    wait_for_stage,
)
from workflows import TrialStage, TrialWorkflow


async def test_sigkilled_worker_mid_agent_ends_in_one_verdict_and_no_leak(temporal_env, trial_cluster, tmp_path):
    client = temporal_env.client
    address = client.service_client.config.target_host
    queue = f"crash-{uuid.uuid4().hex[:6]}"
    runs = tmp_path / "agent-runs"
    spec = trial_spec(trial_cluster, tmp_path / "artifacts", agent="test-sleep", suite=f"k-{uuid.uuid4().hex[:6]}",
                      config={"marker_dir": str(runs)})
    first = start_worker(address, queue, tmp_path / "worker-1.log")
    second = None
    try:
        handle = await client.start_workflow(TrialWorkflow.run, trial_input(spec), id=spec.trial_id, task_queue=queue)
        await wait_for_stage(handle, TrialStage.running_agent, timeout=90)
        while not markers(runs):
            await asyncio.sleep(0.05)
        namespace = (await namespaces_of(trial_cluster, spec.trial_id))[0]
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        second = start_worker(address, queue, tmp_path / "worker-2.log")
        result = await result_within(handle, 120)
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(10)
    assert result.outcome.outcome is Outcome.infra_error, result.outcome
    assert result.outcome.infra_stage is InfraStage.sandbox
    assert "not re-run" in result.outcome.reason and "heartbeat" in result.outcome.reason
    assert len(markers(runs)) == 1  # the agent acted once and was not started again
    assert result.sandbox_namespace == namespace and result.torn_down
    assert namespace not in await namespaces(trial_cluster)
    closes = [e for e in [e async for e in handle.fetch_history_events()]
              if e.event_type in (EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
                                  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED)]
    assert len(closes) == 1
