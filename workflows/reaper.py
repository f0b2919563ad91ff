"""ReapSandboxesWorkflow: one reaper pass, started periodically by a Schedule (worker/schedules.py).

Teardown cannot run when a trial workflow is terminated or its worker's cancel never lands; the
reaper deletes managed namespaces past their TTL, whatever left them behind.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.reap import reap_expired_sandboxes
    from ontrial.models.trial import SandboxSettings

    from .options import TrialOptions


@workflow.defn(name="ReapSandboxesWorkflow")
class ReapSandboxesWorkflow:
    @workflow.run
    async def run(self, settings: SandboxSettings) -> list[str]:
        return await workflow.execute_activity(
            reap_expired_sandboxes, settings,
            schedule_to_close_timeout=timedelta(minutes=10),
            start_to_close_timeout=timedelta(minutes=5),
            heartbeat_timeout=timedelta(minutes=1),
            retry_policy=TrialOptions().infra_retry_policy(),
        )
