"""The noop agent: does nothing, reports nothing — the floor every task must fail."""

from __future__ import annotations

from typing import Any

from ..gateway import ToolGateway
from .protocol import AgentOutput, Budgets, TrialContext


class NoopAgent:
    async def setup(self, ctx: TrialContext) -> None:
        return None

    async def invoke(self, alert: dict[str, Any], tools: ToolGateway, budgets: Budgets) -> AgentOutput:
        return AgentOutput()

    async def teardown(self) -> None:
        return None
