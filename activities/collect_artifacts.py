"""Activity: keep the evidence (final state, events, pod logs) before the sandbox is torn down."""

from __future__ import annotations

from temporalio import activity

from ontrial import steps
from ontrial.models.trial import AgentRun, SandboxRef, TrialSpec

from .errors import temporal_errors
from .heartbeat import heartbeating


@activity.defn(name="collect_artifacts")
async def collect_artifacts(spec: TrialSpec, sandbox: SandboxRef, run: AgentRun) -> dict[str, str]:
    """Returns artifact references (name -> ref), never the artifacts themselves."""
    async with heartbeating():
        with temporal_errors():
            return await steps.collect_artifacts(spec, sandbox, run)
