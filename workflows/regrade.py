"""RegradeWorkflow: re-grade stored trials of a run, calling only the re-grade activity (no sandbox, no agent).

The results are returned, not saved: the caller (``ontrial regrade``) shows before/after and saves the
re-graded run as a new run derived from the original, so the original's numbers never change.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.regrade import regrade_trial
    from ontrial.suite.regrade import RegradedTrial, RegradeInput, RegradeRequest

    from .options import TrialOptions

__all__ = ["RegradeInput", "RegradeWorkflow"]

CONCURRENCY = 50


@workflow.defn(name="RegradeWorkflow")
class RegradeWorkflow:
    @workflow.run
    async def run(self, regrade: RegradeInput) -> list[RegradedTrial]:
        slots = asyncio.Semaphore(CONCURRENCY)  # far below the server's 2,000 pending activities per workflow
        retry = TrialOptions().infra_retry_policy()

        async def one(request: RegradeRequest) -> RegradedTrial:
            async with slots:
                return await workflow.execute_activity(
                    regrade_trial, request, start_to_close_timeout=timedelta(minutes=2),
                    schedule_to_close_timeout=timedelta(minutes=10), retry_policy=retry, summary=request.trial_id)

        return list(await asyncio.gather(*(one(request) for request in regrade.requests)))
