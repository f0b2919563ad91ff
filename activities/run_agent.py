"""Activity: put the agent to work on the alert, under the harness's budgets.

The step reports progress through the heartbeat callback (tool calls, usage); the background
ticker keeps heartbeating while the agent thinks, so a slow model call is not mistaken for a
dead worker. A cancellation arrives as ``CancelledError`` at the agent's next await; the step
cleans up and re-raises it, and the workflow waits for that (WAIT_CANCELLATION_COMPLETED), so its
teardown never races a still-running agent.
"""

from __future__ import annotations

from temporalio import activity

from ontrial import steps
from ontrial.models.trial import AgentRun, FaultReport, SandboxRef, TrialSpec

from .errors import temporal_errors
from .heartbeat import heartbeating


@activity.defn(name="run_agent")
async def run_agent(spec: TrialSpec, sandbox: SandboxRef, fault: FaultReport) -> AgentRun:
    async with heartbeating() as heartbeat:
        with temporal_errors():
            return await steps.run_agent(spec, sandbox, fault, heartbeat)
