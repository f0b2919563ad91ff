"""The reaper Schedule: a periodic ReapSandboxesWorkflow run against the sandbox cluster.

Idempotent: creating it again updates the existing schedule instead of failing, so every
worker may call ``ensure_reaper_schedule`` at startup.
"""

from __future__ import annotations

from datetime import timedelta

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
    schedule = reaper_schedule(settings, task_queue, every)
    try:
        await client.create_schedule(schedule_id, schedule)
    except ScheduleAlreadyRunningError:
        def replace(_: ScheduleUpdateInput) -> ScheduleUpdate:
            return ScheduleUpdate(schedule=schedule)

        await client.get_schedule_handle(schedule_id).update(replace)
