"""A worker killed with SIGKILL in the middle of a suite: a restarted worker finishes it, and every
planned trial has exactly one verdict — none lost, none started twice, no agent run twice, no sandbox
leaked. (The parent replays from its history; children have deterministic ids.)"""

from __future__ import annotations

import asyncio
import signal
import uuid
from collections import Counter
from datetime import timedelta

from ontrial.outcomes import Outcome
from ontrial.results import ResultsStore
from ontrial.sandbox.kube import trial_label
from trial_harness import (FAST, child_starts, markers, namespaces, result_within, start_worker, suite_input,
                           suite_tasks)
from workflows import SuiteWorkflow

TASKS, TRIALS, CONCURRENCY = 8, 3, 4
# Infra steps cut off by the kill must outlive the restart and be retried by the second worker, so that
# the only verdicts the kill may cost are agent steps (never re-run by design).
OPTIONS = FAST.model_copy(update={"infra_step_timeout": timedelta(seconds=60)})


async def test_sigkilled_worker_mid_suite_loses_and_duplicates_no_trial(temporal_env, trial_cluster, tmp_path):
    client = temporal_env.client
    address = client.service_client.config.target_host
    queue = f"suite-crash-{uuid.uuid4().hex[:6]}"
    runs = tmp_path / "agent-runs"
    suite = suite_input(trial_cluster, tmp_path / "artifacts", suite_tasks(tmp_path / "tasks", TASKS),
                        agent="test-marked", trials=TRIALS, concurrency=CONCURRENCY, chunk_size=10,
                        config={"marker_dir": str(runs)}, trial_options=OPTIONS)
    run_id = suite.spec.suite_id
    first = start_worker(address, queue, tmp_path / "worker-1.log")
    second = None
    try:
        handle = await client.start_workflow(SuiteWorkflow.run, suite, id=run_id, task_queue=queue)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 120
        while not ((p := await handle.query(SuiteWorkflow.progress)).done >= 6 and p.running > 0):
            assert loop.time() < deadline, f"suite stuck: {p}"
            await asyncio.sleep(0.1)
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        killed_at = p.done
        second = start_worker(address, queue, tmp_path / "worker-2.log")
        outcome = await result_within(handle, 240)
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(10)
    planned = sorted(f"{run_id}/web-scaled-down-{t:02d}/{k}" for t in range(TASKS) for k in range(TRIALS))
    assert killed_at < len(planned)
    assert sorted(await child_starts(client, run_id)) == planned  # none started twice, none skipped
    store = ResultsStore(suite.results_url)
    record = store.get(run_id)
    assert sorted(t.trial_id for t in record.trials) == planned
    assert sorted(t.trial_id for t in store.recorded_trials(run_id)) == planned
    assert outcome.trials == len(planned) and sum(outcome.outcome_counts.values()) == len(planned)
    verdicts = Counter(t.outcome.outcome for t in record.trials)
    assert set(verdicts) <= {Outcome.passed, Outcome.infra_error}, verdicts
    assert verdicts[Outcome.infra_error] <= CONCURRENCY  # at most the agents cut off by the kill
    for trial in record.trials:
        if trial.outcome.outcome is Outcome.infra_error:
            assert "not re-run" in trial.outcome.reason or "heartbeat" in trial.outcome.reason, trial.outcome
    runs_per_trial = Counter(m.name.split("-")[1] for m in markers(runs))
    assert runs_per_trial and max(runs_per_trial.values()) == 1  # no agent ran twice for a trial
    assert set(runs_per_trial) <= {trial_label(t) for t in planned}
    assert not {t.sandbox_namespace for t in record.trials} & set(await namespaces(trial_cluster))
