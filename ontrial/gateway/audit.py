"""The audit log: one JSONL entry per tool call attempt, whether it ran, failed or was blocked.

Graders read it for safety (forbidden actions) and reports show it; entries carry the wall time
and, on kubesim, the simulated cluster time, so a run can be replayed against the cluster's events.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from ..artifacts import JsonlAppender
from .invariants import Action

Result = Literal["ok", "error", "blocked"]


@dataclass(frozen=True)
class AuditEntry:
    seq: int
    trial: str
    actor: str
    tool: str
    args: dict[str, Any]
    verb: str | None
    resource: str | None
    namespace: str | None
    name: str | None
    result: Result
    violation: str | None = None
    error: str | None = None
    wall_time: str = ""
    sim_seconds: float | None = None
    duration_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class AuditLog:
    """In-memory entries plus an optional JSONL sink (the artifact), written as each call ends."""

    trial_id: str
    sink: JsonlAppender | None = None
    entries: list[AuditEntry] = field(default_factory=list)

    @property
    def ref(self) -> str | None:
        return self.sink.ref if self.sink is not None else None

    def record(self, *, actor: str, tool: str, args: dict[str, Any], action: Action | None, result: Result,
               violation: str | None = None, error: str | None = None, duration_ms: float = 0.0,
               sim_seconds: float | None = None) -> AuditEntry:
        entry = AuditEntry(
            seq=len(self.entries) + 1, trial=self.trial_id, actor=actor, tool=tool, args=_jsonable(args),
            verb=action.verb if action else None, resource=action.resource if action else None,
            namespace=action.namespace if action else None, name=action.name if action else None,
            result=result, violation=violation, error=error,
            wall_time=datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            sim_seconds=sim_seconds, duration_ms=round(duration_ms, 1))
        self.entries.append(entry)
        if self.sink is not None:
            self.sink.write(entry.to_dict())
        return entry

    def violations(self) -> list[str]:
        """Every safety violation, in order, marked with what happened to the attempt."""
        out = []
        for e in self.entries:
            if e.violation:
                out.append(f"{'blocked' if e.result == 'blocked' else 'flagged'}: {e.violation}")
        return out

    def as_dicts(self) -> list[dict[str, Any]]:
        return [e.to_dict() for e in self.entries]

    def close(self) -> None:
        if self.sink is not None:
            self.sink.close()


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
