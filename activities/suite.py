"""Activities of a suite run: plan it, record trial verdicts in batches, finish it, record a human decision.

All of a suite's I/O (task files, the results store, report files) happens here, so the suite workflow's
history carries aggregates only. Store calls are blocking (SQLAlchemy), so they run in a thread.
"""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta

from temporalio import activity
from temporalio.exceptions import ApplicationError

from ontrial.models.suite import ApplyOverride, FinishRequest, RecordTrials, SuiteOutcome, SuitePlan, SuiteSpec
from ontrial.results import ResultsStore
from ontrial.suite.plan import plan_suite as resolve_plan
from ontrial.suite.decisions import DecisionRefused
from ontrial.suite.runs import BaselinePending, RunNotFound, finish_run, override_run

from .errors import temporal_errors

BASELINE_POLL = timedelta(seconds=2)
DECISION_REFUSED = "DecisionRefused"

_stores: dict[str, ResultsStore] = {}
_stores_lock = threading.Lock()


def results_store(url: str) -> ResultsStore:
    """One store (engine and connection pool) per URL per worker process."""
    with _stores_lock:
        if url not in _stores:
            _stores[url] = ResultsStore(url)
        return _stores[url]


@activity.defn(name="plan_suite")
async def plan_suite(spec: SuiteSpec) -> SuitePlan:
    """Load the suite's task files once; a bad task file fails the suite at once (not retried)."""
    with temporal_errors():
        return await asyncio.to_thread(resolve_plan, spec.task_files, spec.agent)


@activity.defn(name="record_trials")
async def record_trials(batch: RecordTrials) -> int:
    """Keep a batch of trial verdicts in the results store (idempotent per trial id)."""
    await asyncio.to_thread(lambda: results_store(batch.results_url).record_trials(batch.run_id, batch.results))
    return len(batch.results)


@activity.defn(name="finish_suite")
async def finish_suite(request: FinishRequest) -> SuiteOutcome:
    """Summarize, gate against the baseline, write the reports, save the run.

    A baseline run named explicitly but not saved yet (two agents compared in one invocation) is waited
    for by retrying every few seconds, within the activity's schedule-to-close timeout."""
    try:
        with temporal_errors():
            return await asyncio.to_thread(finish_run, results_store(request.results_url), request)
    except BaselinePending as err:
        raise ApplicationError(str(err), type="BaselinePending", next_retry_delay=BASELINE_POLL) from err


@activity.defn(name="apply_override")
async def apply_override(request: ApplyOverride) -> SuiteOutcome:
    """Record who overrode a failed gate and why (and promote the run if asked)."""
    store = results_store(request.results_url)
    try:
        return await asyncio.to_thread(override_run, store, request.run_id, request.override,
                                       promote=request.promote)
    except (DecisionRefused, RunNotFound) as err:
        raise ApplicationError(str(err), type=DECISION_REFUSED, non_retryable=True) from err


SUITE_ACTIVITIES = [plan_suite, record_trials, finish_suite, apply_override]
