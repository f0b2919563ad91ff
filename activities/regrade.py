"""Activity: re-grade one stored trial from its recorded evidence (see ``ontrial.suite.regrade`` for limits)."""

from __future__ import annotations

import asyncio

from temporalio import activity

from ontrial.errors import ConfigError
from ontrial.suite.regrade import RegradedTrial, RegradeRequest, regrade

from .errors import temporal_errors
from .suite import results_store


def _regrade(request: RegradeRequest) -> RegradedTrial:
    store = results_store(request.results_url)
    record = store.get(request.run_id)
    trials = {t.trial_id: t for t in (record.trials if record else store.recorded_trials(request.run_id))}
    if request.trial_id not in trials:
        raise ConfigError(f"run {request.run_id} has no trial {request.trial_id}")
    root = record.spec.artifacts_root if record and record.spec else None
    return regrade(trials[request.trial_id], request.task_file, root)


@activity.defn(name="regrade_trial")
async def regrade_trial(request: RegradeRequest) -> RegradedTrial:
    with temporal_errors():
        return await asyncio.to_thread(_regrade, request)
