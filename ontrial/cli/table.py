"""Plain-text tables, trial outcome labels and the outcome tally the progress bar shows."""

from __future__ import annotations

from collections.abc import Sequence

from ..models.result import TrialResult


def outcome_label(result: TrialResult) -> str:
    outcome = result.outcome
    if outcome.budget is not None:
        return f"{outcome.outcome.value}({outcome.budget.value})"
    if outcome.infra_stage is not None:
        return f"{outcome.outcome.value}({outcome.infra_stage.value})"
    return outcome.outcome.value


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(line, widths)).rstrip()
             for line in [header, ["-" * w for w in widths], *rows]]
    return "\n".join(lines)


def tally(by_outcome: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in sorted(by_outcome.items()) if count)
