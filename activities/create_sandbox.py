"""Activity: create the trial's isolated sandbox (namespace, scoped credentials, healthy app)."""

from __future__ import annotations

from temporalio import activity

from ontrial import steps
from ontrial.models.trial import SandboxRef, TrialSpec

from .errors import temporal_errors
from .heartbeat import finish_despite_cancel, heartbeating
from .leftovers import discard_leftovers


@activity.defn(name="create_sandbox")
async def create_sandbox(spec: TrialSpec) -> SandboxRef:
    """Not cancellable midway: a half-created sandbox would leak; the workflow tears down what it gets.

    First removes what an earlier, lost attempt of this trial may have left (see ``leftovers``).
    """
    async with heartbeating():
        with temporal_errors():
            return await finish_despite_cancel(_create(spec))


async def _create(spec: TrialSpec) -> SandboxRef:
    discarded = await discard_leftovers(spec)
    if discarded:
        activity.logger.info("discarded sandboxes of earlier attempts: %s", ", ".join(discarded))
    return await steps.create_sandbox(spec)
