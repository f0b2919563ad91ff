"""What an agent may spend: tool steps (counted at the tool boundary), model tokens (reported by
the agent), wall seconds (enforced by the harness with a timeout; checked here too)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..models.trial import BudgetKind, Usage


class BudgetExceeded(Exception):
    """Raised at the moment a budget runs out; the harness stops the agent and still grades."""

    def __init__(self, kind: BudgetKind, used: float, limit: float):
        super().__init__(f"{kind.value} budget exhausted ({used:g} used, limit {limit:g})")
        self.kind = kind
        self.used = used
        self.limit = limit


@dataclass
class Budget:
    """Mutable spend tracker for one agent run. ``None`` limits are unlimited."""

    steps: int | None = None
    tokens: int | None = None
    wall_seconds: float | None = None
    used_steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    exhausted: BudgetKind | None = None
    _t0: float = field(default_factory=time.monotonic, repr=False)

    @classmethod
    def from_limits(cls, limits: Any) -> "Budget":
        """From a task's ``budgets`` (model or mapping with steps/tokens/wall_seconds) or None."""
        if limits is None:
            return cls()
        get = limits.get if isinstance(limits, dict) else lambda k: getattr(limits, k, None)
        return cls(steps=get("steps"), tokens=get("tokens"), wall_seconds=get("wall_seconds"))

    def start(self) -> None:
        """Restart the wall clock (when the agent actually begins)."""
        self._t0 = time.monotonic()

    @property
    def used_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def wall_elapsed(self) -> float:
        return time.monotonic() - self._t0

    def remaining_wall(self) -> float | None:
        return None if self.wall_seconds is None else max(0.0, self.wall_seconds - self.wall_elapsed())

    def _exhaust(self, kind: BudgetKind, used: float, limit: float) -> BudgetExceeded:
        self.exhausted = self.exhausted or kind
        return BudgetExceeded(kind, used, limit)

    def charge_step(self) -> int:
        """Count one tool call; the call past the limit is refused (not executed, not counted)."""
        self.check_wall()
        if self.steps is not None and self.used_steps >= self.steps:
            raise self._exhaust(BudgetKind.steps, self.used_steps + 1, self.steps)
        self.used_steps += 1
        return self.used_steps

    def add_tokens(self, input_tokens: int = 0, output_tokens: int = 0, cost_usd: float = 0.0) -> None:
        """Record model usage the agent reports; going over the limit stops the agent."""
        self.input_tokens += max(0, int(input_tokens or 0))
        self.output_tokens += max(0, int(output_tokens or 0))
        self.cost_usd += max(0.0, float(cost_usd or 0.0))
        if self.tokens is not None and self.used_tokens > self.tokens:
            raise self._exhaust(BudgetKind.tokens, self.used_tokens, self.tokens)

    def check_wall(self) -> None:
        if self.wall_seconds is not None and self.wall_elapsed() > self.wall_seconds:
            raise self._exhaust(BudgetKind.wall, round(self.wall_elapsed(), 3), self.wall_seconds)

    def exceeded(self) -> BudgetExceeded | None:
        """The exhaustion so far as an exception (for runners that watch the budget from outside), or None."""
        if self.exhausted is None:
            try:
                self.check_wall()
            except BudgetExceeded as e:
                return e
            return None
        used, limit = {BudgetKind.steps: (self.used_steps + 1, self.steps),
                       BudgetKind.tokens: (self.used_tokens, self.tokens),
                       BudgetKind.wall: (round(self.wall_elapsed(), 3), self.wall_seconds)}[self.exhausted]
        return BudgetExceeded(self.exhausted, used, limit or 0)

    def usage(self) -> Usage:
        return Usage(steps=self.used_steps, tokens=self.used_tokens, wall_seconds=round(self.wall_elapsed(), 3),
                     cost_usd=round(self.cost_usd, 6))
