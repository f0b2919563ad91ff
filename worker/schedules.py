"""Schedules: the reaper (a periodic ReapSandboxesWorkflow) and suites on a cron (the nightly gate).

Idempotent: creating one again updates the existing schedule instead of failing, so every worker may
call ``ensure_reaper_schedule`` at startup, and ``ontrial schedule nightly`` may be re-run to change one.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleIntervalSpec,
    SchedulePolicy,
    ScheduleOverlapPolicy,
    ScheduleSpec,
    ScheduleState,
    ScheduleUpdate,
    ScheduleUpdateInput,
)

from ontrial.models.trial import SandboxSettings
from workflows.reaper import ReapSandboxesWorkflow

if TYPE_CHECKING:
    from workflows.suite_models import SuiteInput

REAPER_SCHEDULE_ID = "ontrial-reaper"


def reaper_schedule(settings: SandboxSettings, task_queue: str, every: timedelta) -> Schedule:
    return Schedule(
        action=ScheduleActionStartWorkflow(
            ReapSandboxesWorkflow.run, settings, id=f"{REAPER_SCHEDULE_ID}-run", task_queue=task_queue,
            execution_timeout=every * 2,  # a hung pass is dropped; the next pass redoes its work
        ),
        spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=every)]),
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP, catchup_window=every),
        state=ScheduleState(note="delete trial namespaces past their TTL"),
    )


async def ensure_reaper_schedule(client: Client, settings: SandboxSettings, task_queue: str,
                                 every: timedelta = timedelta(minutes=10),
                                 schedule_id: str = REAPER_SCHEDULE_ID) -> None:
    await ensure_schedule(client, schedule_id, reaper_schedule(settings, task_queue, every))


def suite_schedule(suite: SuiteInput, cron: str, task_queue: str, workflow_id: str, *,
                   time_zone: str = "UTC", note: str = "") -> Schedule:
    """A Schedule starting a SuiteWorkflow on ``cron`` (e.g. ``0 2 * * *``).

    The server appends the nominal time to ``workflow_id`` for every start, and the suite takes its
    run id from its workflow id, so each scheduled run is a separate run in the results store. Overlap
    BUFFER_ONE: a run still going when the next is due delays it (at most one waits) instead of
    running two suites on one cluster, or silently skipping the night (SKIP)."""
    from workflows.suite import SuiteWorkflow

    return Schedule(
        action=ScheduleActionStartWorkflow(SuiteWorkflow.run, suite, id=workflow_id, task_queue=task_queue),
        spec=ScheduleSpec(cron_expressions=[cron], time_zone_name=time_zone),
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.BUFFER_ONE, catchup_window=timedelta(hours=1)),
        state=ScheduleState(note=note or f"suite {suite.spec.name}: {cron} ({time_zone})"),
    )


async def ensure_schedule(client: Client, schedule_id: str, schedule: Schedule) -> bool:
    """Create the schedule, or replace the existing one's definition; returns whether it was created."""
    try:
        await client.create_schedule(schedule_id, schedule)
        return True
    except ScheduleAlreadyRunningError:
        def replace(_: ScheduleUpdateInput) -> ScheduleUpdate:
            return ScheduleUpdate(schedule=schedule)

        await client.get_schedule_handle(schedule_id).update(replace)
        return False
