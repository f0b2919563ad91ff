"""Activity: delete the trial's sandbox and wait until it is gone (idempotent: gone is done)."""

from __future__ import annotations

from temporalio import activity

from ontrial import steps
from ontrial.models.trial import TrialSpec

from .errors import temporal_errors
from .heartbeat import finish_despite_cancel, heartbeating


@activity.defn(name="teardown")
async def teardown(spec: TrialSpec, sandbox_namespace: str) -> None:
    async with heartbeating():
        with temporal_errors():
            await finish_despite_cancel(steps.teardown(spec, sandbox_namespace))
