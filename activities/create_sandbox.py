"""Activity: create the trial's isolated sandbox (namespace, scoped credentials, healthy app)."""

from __future__ import annotations

from temporalio import activity

from ontrial import steps
from ontrial.models.trial import SandboxRef, TrialSpec

from .errors import temporal_errors
from .heartbeat import finish_despite_cancel, heartbeating


@activity.defn(name="create_sandbox")
async def create_sandbox(spec: TrialSpec) -> SandboxRef:
    """Not cancellable midway: a half-created sandbox would leak; the workflow tears down what it gets."""
    async with heartbeating():
        with temporal_errors():
            return await finish_despite_cancel(steps.create_sandbox(spec))
