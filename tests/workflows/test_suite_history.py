"""SuiteWorkflow keeps each run's history small: it continues as new after ``chunk_size`` trials, or
earlier when its history reaches ``history_limit``, carrying aggregates only — and still starts every
planned trial exactly once. Runs on the instant trial path (orchestration only)."""

from __future__ import annotations

from ontrial.results import ResultsStore
from trial_harness import child_starts, result_within, suite_input, suite_run_lengths, suite_tasks
from workflows import SuiteWorkflow

#: Parent events per trial at most: child initiated/started/completed, plus workflow tasks and record batches.
EVENTS_PER_TRIAL = 8
EVENTS_PER_RUN = 40  # start, plan or carried state, final record batch, finish, continue-as-new


async def run_suite(env, queue, suite):
    handle = await env.client.start_workflow(SuiteWorkflow.run, suite, id=suite.spec.suite_id, task_queue=queue)
    outcome = await result_within(handle, 120)
    return outcome, await suite_run_lengths(env.client, suite.spec.suite_id)


def planned(suite, tasks: int, trials: int) -> list[str]:
    return sorted(f"{suite.spec.suite_id}/web-scaled-down-{t:02d}/{k}" for t in range(tasks) for k in range(trials))


async def test_a_suite_continues_as_new_every_chunk_and_runs_each_trial_once(temporal_env, instant_queue, tmp_path):
    suite = suite_input(None, tmp_path, suite_tasks(tmp_path / "tasks", 12), agent="instant", trials=5,
                        concurrency=10, chunk_size=20, config={"pass_rate": 0.8})
    outcome, lengths = await run_suite(temporal_env, instant_queue, suite)
    assert len(lengths) == 3, lengths  # 60 trials, 20 per run
    assert all(n < 20 * EVENTS_PER_TRIAL + EVENTS_PER_RUN for n in lengths), lengths
    assert sorted(await child_starts(temporal_env.client, suite.spec.suite_id)) == planned(suite, 12, 5)
    record = ResultsStore(suite.results_url).get(suite.spec.suite_id)
    assert sorted(t.trial_id for t in record.trials) == planned(suite, 12, 5)
    assert outcome.trials == 60 and sum(outcome.outcome_counts.values()) == 60
    assert 0 < outcome.outcome_counts.get("failed", 0) < 60  # the 80% instant agent fails some


async def test_a_history_limit_forces_continue_as_new_below_the_threshold(temporal_env, instant_queue, tmp_path):
    limit, concurrency = 120, 4
    suite = suite_input(None, tmp_path, suite_tasks(tmp_path / "tasks", 10), agent="instant", trials=6,
                        concurrency=concurrency, chunk_size=1_000, history_limit=limit)
    outcome, lengths = await run_suite(temporal_env, instant_queue, suite)
    assert len(lengths) >= 3, lengths
    # a run stops starting trials at the limit and drains at most `concurrency` running ones
    assert all(n <= limit + concurrency * EVENTS_PER_TRIAL + EVENTS_PER_RUN for n in lengths), lengths
    assert sorted(await child_starts(temporal_env.client, suite.spec.suite_id)) == planned(suite, 10, 6)
    assert outcome.outcome_counts == {"passed": 60}
