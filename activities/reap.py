"""Activity: delete expired trial namespaces that no teardown reached (terminated trials, crashes)."""

from __future__ import annotations

from temporalio import activity

from ontrial.models.trial import SandboxSettings
from ontrial.sandbox.reaper import reap

from .errors import temporal_errors
from .heartbeat import heartbeating


@activity.defn(name="reap_expired_sandboxes")
async def reap_expired_sandboxes(settings: SandboxSettings) -> list[str]:
    """Returns the namespaces whose deletion was requested."""
    async with heartbeating():
        with temporal_errors():
            return await reap(settings)
