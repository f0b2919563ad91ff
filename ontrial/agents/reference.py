"""The reference agent: replays the task's reference solution through the tool gateway.

It proves a task is solvable with the tools agents get (same budgets, invariants, RBAC) and
that the graders pass a correct answer; a task whose reference agent fails is a broken task.
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from ..gateway import ToolGateway
from ..models.trial import Diagnosis
from .protocol import AgentOutput, Budgets, TrialContext


class ReferenceAgent:
    def __init__(self, actions: list[Any], diagnosis: Diagnosis | None):
        self.actions = [a if isinstance(a, dict) else {"tool": a.tool, "args": dict(a.args)} for a in actions]
        self.diagnosis = diagnosis
        self.ctx: TrialContext | None = None

    @classmethod
    def for_task(cls, task: Any) -> "ReferenceAgent":
        solution = getattr(task, "reference_solution", None)
        if solution is None:
            raise ConfigError(f"task {getattr(task, 'id', '?')} has no reference_solution for the reference agent")
        return cls(list(solution.actions), solution.diagnosis)

    async def setup(self, ctx: TrialContext) -> None:
        self.ctx = ctx

    async def invoke(self, alert: dict[str, Any], tools: ToolGateway, budgets: Budgets) -> AgentOutput:
        lines = []
        for action in self.actions:
            result = await tools.call(action["tool"], action.get("args") or {})
            status = "ok" if result.ok else ("blocked" if result.blocked else "error")
            lines.append(f"{action['tool']}: {status}: {result.output.splitlines()[0] if result.output else ''}")
        diagnosis = self.diagnosis
        if diagnosis is not None and self.actions:
            diagnosis = diagnosis.model_copy(update={"mitigation_applied": True})
        return AgentOutput(diagnosis=diagnosis, text="\n".join(lines))

    async def teardown(self) -> None:
        self.ctx = None
