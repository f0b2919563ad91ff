"""Activity: let the cluster settle, then grade the agent's work against the task's checks."""

from __future__ import annotations

from temporalio import activity

from ontrial import steps
from ontrial.models.trial import AgentRun, Grade, SandboxRef, TrialSpec

from .errors import temporal_errors
from .heartbeat import heartbeating


@activity.defn(name="grade")
async def grade(spec: TrialSpec, sandbox: SandboxRef, run: AgentRun) -> Grade:
    async with heartbeating():
        with temporal_errors():
            return await steps.grade(spec, sandbox, run)
