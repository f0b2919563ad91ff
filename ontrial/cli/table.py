"""The verdict table and the one-line progress summary a run prints."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..models.result import TrialResult

MAX_REASON = 70


def outcome_label(result: TrialResult) -> str:
    outcome = result.outcome
    if outcome.budget is not None:
        return f"{outcome.outcome.value}({outcome.budget.value})"
    if outcome.infra_stage is not None:
        return f"{outcome.outcome.value}({outcome.infra_stage.value})"
    return outcome.outcome.value


def wall_seconds(result: TrialResult) -> str:
    if result.started_at is None or result.finished_at is None:
        return "-"
    return f"{(result.finished_at - result.started_at).total_seconds():.1f}s"


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def verdict_rows(results: Iterable[TrialResult], *, with_agent: bool) -> list[list[str]]:
    rows = []
    for result in sorted(results, key=lambda r: (r.agent.label, r.task_id, r.trial_index)):
        row = [result.task_id, str(result.trial_index), outcome_label(result), _clip(result.outcome.reason, MAX_REASON),
               str(result.run.usage.steps) if result.run else "-", wall_seconds(result)]
        rows.append([result.agent.label, *row] if with_agent else row)
    return rows


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(line, widths)).rstrip()
             for line in [header, ["-" * w for w in widths], *rows]]
    return "\n".join(lines)


def verdict_table(results: Sequence[TrialResult]) -> str:
    with_agent = len({r.agent.label for r in results}) > 1
    header = ["task", "trial", "outcome", "reason", "steps", "wall"]
    return render_table(["agent", *header] if with_agent else header, verdict_rows(results, with_agent=with_agent))


def tally(by_outcome: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in sorted(by_outcome.items()) if count)
