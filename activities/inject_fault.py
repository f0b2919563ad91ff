"""Activity: break the sandboxed app in the task's known way and produce the alert."""

from __future__ import annotations

from temporalio import activity

from ontrial import steps
from ontrial.models.trial import FaultReport, SandboxRef, TrialSpec

from .errors import temporal_errors
from .heartbeat import heartbeating


@activity.defn(name="inject_fault")
async def inject_fault(spec: TrialSpec, sandbox: SandboxRef) -> FaultReport:
    async with heartbeating():
        with temporal_errors():
            return await steps.inject_fault(spec, sandbox)
