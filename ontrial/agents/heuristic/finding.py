"""A heuristic finding: the cause's label (the catalogue's canonical spelling), where it is, the
evidence seen, and the obvious mitigation as gateway tool calls (applied only when configured)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Action = tuple[str, dict[str, Any]]


@dataclass
class Finding:
    service: str | None
    label: str
    summary: str
    evidence: list[str] = field(default_factory=list)
    plan: list[Action] = field(default_factory=list)
    proposal: str = ""
    hard: bool = True  # a failure of this service itself (not a symptom of another's)


def undo(service: str) -> list[Action]:
    return [("rollout_undo", {"deployment": service})]


def restart(service: str) -> Action:
    return ("rollout_restart", {"deployment": service})
