"""Small agents for trial-workflow tests, registered as agent kinds on import.

``test-crash`` raises, ``test-step-loop`` calls tools until the step budget stops it,
``test-sleep`` sleeps until cancelled (or until the wall budget ends it), ``test-marked`` is the
reference agent. An agent given ``config={"marker_dir": ...}`` drops one file per invocation there
(named after the trial), so a test can count runs, per trial.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path
from typing import Any

from ontrial.agents import AgentOutput, Budgets, ReferenceAgent, TrialContext, register_agent
from ontrial.gateway import ToolGateway
from ontrial.models.trial import AgentSpec


class _TestAgent:
    def __init__(self, spec: AgentSpec):
        self.marker_dir = spec.config.get("marker_dir")

    async def setup(self, ctx: TrialContext) -> None:
        if self.marker_dir:
            Path(self.marker_dir).mkdir(parents=True, exist_ok=True)
            (Path(self.marker_dir) / f"invoked-{ctx.trial}-{os.getpid()}-{uuid.uuid4().hex[:8]}").write_text(
                ctx.namespace)

    async def teardown(self) -> None:
        return None


class CrashingAgent(_TestAgent):
    async def invoke(self, alert: dict[str, Any], tools: ToolGateway, budgets: Budgets) -> AgentOutput:
        await tools.call("get_resources", {"kind": "pods"})
        raise RuntimeError("the agent tripped over its own shoelaces")


class StepLoopAgent(_TestAgent):
    async def invoke(self, alert: dict[str, Any], tools: ToolGateway, budgets: Budgets) -> AgentOutput:
        while True:
            await tools.call("get_resources", {"kind": "pods"})


class SleepingAgent(_TestAgent):
    async def invoke(self, alert: dict[str, Any], tools: ToolGateway, budgets: Budgets) -> AgentOutput:
        await tools.call("get_events", {})
        await asyncio.sleep(3600)
        return AgentOutput(text="woke up")


class MarkedReference(_TestAgent):
    """The reference agent, leaving a marker per invocation."""

    def __init__(self, spec: AgentSpec, task: Any):
        super().__init__(spec)
        self.inner = ReferenceAgent.for_task(task)

    async def setup(self, ctx: TrialContext) -> None:
        await super().setup(ctx)
        await self.inner.setup(ctx)

    async def invoke(self, alert: dict[str, Any], tools: ToolGateway, budgets: Budgets) -> AgentOutput:
        return await self.inner.invoke(alert, tools, budgets)

    async def teardown(self) -> None:
        await self.inner.teardown()


register_agent("test-marked", lambda spec, task: MarkedReference(spec, task))
register_agent("test-crash", lambda spec, task: CrashingAgent(spec))
register_agent("test-step-loop", lambda spec, task: StepLoopAgent(spec))
register_agent("test-sleep", lambda spec, task: SleepingAgent(spec))
