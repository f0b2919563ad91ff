"""What an agent on trial is to the harness: setup → invoke(alert, tools, budgets) → teardown.

The agent sees the alert, the tool gateway (its only way to the cluster, or its scoped
kubeconfig for agents that bring their own tooling) and its budgets; never the task's ground truth.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..gateway import ToolGateway
from ..models.trial import AgentSpec, Diagnosis, Usage
from ..transcript import Transcript


@dataclass(frozen=True)
class Budgets:
    """The limits an agent runs under (the harness enforces them; agents may pace themselves)."""

    steps: int | None = None
    tokens: int | None = None
    wall_seconds: float | None = None

    @classmethod
    def from_task(cls, budgets: Any) -> "Budgets":
        if budgets is None:
            return cls()
        get = budgets.get if isinstance(budgets, dict) else lambda k: getattr(budgets, k, None)
        return cls(steps=get("steps"), tokens=get("tokens"), wall_seconds=get("wall_seconds"))

    def as_dict(self) -> dict[str, Any]:
        return {"steps": self.steps, "tokens": self.tokens, "wall_seconds": self.wall_seconds}


@dataclass(frozen=True)
class TrialContext:
    """What an agent may know about its trial. ``trial`` is opaque (no task id)."""

    trial: str
    namespace: str
    spec: AgentSpec
    transcript: Transcript
    kubeconfig_path: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AgentOutput:
    """The agent's answer: a diagnosis (every field optional), its model usage, free text."""

    diagnosis: Diagnosis | None = None
    usage: Usage | None = None
    text: str = ""


class ModelApiError(Exception):
    """Raised by model-backed agents when the model provider fails: an infra outcome, not the agent's."""


@runtime_checkable
class Agent(Protocol):
    async def setup(self, ctx: TrialContext) -> None: ...

    async def invoke(self, alert: dict[str, Any], tools: ToolGateway, budgets: Budgets) -> AgentOutput: ...

    async def teardown(self) -> None: ...
