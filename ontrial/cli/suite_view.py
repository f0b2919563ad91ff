"""What ``ontrial run`` and ``ontrial gate`` print: a verdict table per task, suite statistics, the gate."""

from __future__ import annotations

from collections.abc import Sequence

from ..models.suite import GateResult, SuiteReport, TaskStats
from ..reports import RunRecord
from .table import outcome_label, render_table

#: One letter per trial outcome, so a task's k trials fit in one cell (``PPPPF``).
LETTERS = {"passed": "P", "failed": "F", "budget_exhausted": "B", "agent_error": "E", "infra_error": "I",
           "cancelled": "C"}
LEGEND = "P passed, F failed, S safety failure, B budget exhausted, E agent error, I infra error, C cancelled"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def _pct1(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def trial_letters(record: RunRecord, task: TaskStats) -> str:
    severe = {t.trial_index for t in record.trials if t.task_id == task.task_id and t.outcome.severe}
    return "".join("S" if i in severe else LETTERS.get(o, "?") for i, o in enumerate(task.outcomes))


def verdict_table(records: Sequence[RunRecord]) -> str:
    """One row per task; per run its trials as letters and pass^1; the flip of the last run against its baseline."""
    task_ids = sorted({t.task_id for r in records for t in r.report.tasks})
    by_run = [{t.task_id: t for t in r.report.tasks} for r in records]
    flips: dict[str, str] = {}
    last = records[-1] if records else None
    if last is not None and last.gate is not None:
        flips.update({f.task_id: "pass→fail" for f in last.gate.regressions})
        flips.update({f.task_id: "fail→pass" for f in last.gate.improvements})
    header = ["task"]
    for record in records:
        header += [record.report.agent.label, "pass^1"]
    header.append("flip")
    rows = []
    for task_id in task_ids:
        row = [task_id]
        for record, tasks in zip(records, by_run):
            task = tasks.get(task_id)
            row += [trial_letters(record, task), _pct(task.pass_hat_1)] if task else ["", ""]
        row.append(flips.get(task_id, ""))
        rows.append(row)
    return render_table(header, rows) + f"\n({LEGEND})"


def failure_lines(record: RunRecord, limit: int = 8) -> list[str]:
    """The first trials that did not pass, with why (the rest are in the reports)."""
    bad = [t for t in sorted(record.trials, key=lambda t: (t.task_id, t.trial_index)) if not t.outcome.passed]
    lines = [f"    {t.task_id} #{t.trial_index}: {outcome_label(t)}: {' '.join(t.outcome.reason.split())[:100]}"
             for t in bad[:limit]]
    if len(bad) > limit:
        lines.append(f"    … and {len(bad) - limit} more (see the report)")
    return lines


def _interval(report: SuiteReport) -> str:
    p = report.pass_hat_1
    if p.estimate is None:
        return "pass^1 -"
    ci = f" (95% CI {_pct1(p.low)}–{_pct1(p.high)}, clustered by task)" if p.low is not None else ""
    return f"pass^1 {_pct1(p.estimate)}{ci}, {p.clusters} tasks / {p.n} trials"


def stats_lines(record: RunRecord) -> list[str]:
    r = record.report
    k = max(r.pass_at_k, default=None)
    every = r.tasks_passing_every_trial
    lines = [f"{record.run_id} ({r.agent.label}" + (f", model {r.agent.model}" if r.agent.model else "") + "):",
             f"  {_interval(r)}"]
    if k:
        lines.append(f"  pass@{k} {_pct1(r.pass_at_k[k])}, pass^{k} {_pct1(r.pass_hat_k[k])}"
                     + f"; tasks passing every trial {_pct1(every.estimate)}"
                     + (f" (Wilson {_pct1(every.low)}–{_pct1(every.high)})" if every.low is not None else ""))
    lines.append(f"  safety failures {len(r.severe_failures)}; infra errors {_pct1(r.infra_error_rate)} "
                 f"(excluded from rates); outcomes {', '.join(f'{k} {v}' for k, v in r.outcome_counts.items())}")
    if r.steps.count:
        lines.append(f"  steps p50 {r.steps.p50:g} p90 {r.steps.p90:g}; tokens p50 {r.tokens.p50:g}; "
                     f"agent wall p50 {r.wall_seconds.p50:.1f}s p90 {r.wall_seconds.p90:.1f}s")
    failures = failure_lines(record)
    if failures:
        lines += ["  not passed:", *failures]
    return lines


def gate_lines(run_id: str, gate: GateResult, baseline_run_id: str | None) -> list[str]:
    against = f" against {baseline_run_id}" if baseline_run_id else ""
    head = f"gate {run_id}{against}: {gate.effective.value.upper()}"
    if gate.override is not None:
        head += f" (overridden from {gate.verdict.value} by {gate.override.approver}: {gate.override.reason})"
    lines = [head, *(f"  - {reason}" for reason in gate.reasons)]
    if gate.regressions:
        lines.append("  pass→fail: " + ", ".join(f"{f.task_id} ({f.worst_trial})" if f.worst_trial else f.task_id
                                                 for f in gate.regressions))
    if gate.improvements:
        lines.append("  fail→pass: " + ", ".join(f.task_id for f in gate.improvements))
    if gate.mcnemar_p is not None:
        detail = f"  McNemar exact p {gate.mcnemar_p:.3g} over {gate.paired_tasks} paired tasks"
        if gate.paired_delta is not None and gate.paired_se is not None:
            detail += f"; paired Δ pass^1 {gate.paired_delta:+.1%} ± {gate.paired_se:.1%} (SE)"
        if gate.minimum_detectable_effect is not None:
            detail += f"; minimum detectable effect {gate.minimum_detectable_effect:.1%}"
        lines.append(detail)
    return lines
