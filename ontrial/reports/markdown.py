"""A Markdown summary a reviewer can read in a pull request or a chat message."""

from __future__ import annotations

from .record import RunRecord


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.1%}"


def to_markdown(rec: RunRecord) -> str:
    r = rec.report
    p1 = r.pass_hat_1
    lines = [
        f"# Suite `{rec.suite_name}` — run `{rec.run_id}`",
        "",
        f"Agent **{r.agent.label}**" + (f" (model `{r.agent.model}`)" if r.agent.model else "")
        + f", {len(r.tasks)} tasks × {r.trials_per_task} trials.",
        "",
        f"- pass^1 **{_pct(p1.estimate)}** (95% CI {_pct(p1.low)}–{_pct(p1.high)}, clustered by task, "
        f"{p1.clusters} tasks / {p1.n} trials)",
        "- " + ", ".join(f"pass@{k} {_pct(v)}" for k, v in r.pass_at_k.items()),
        "- " + ", ".join(f"pass^{k} {_pct(v)}" for k, v in r.pass_hat_k.items()),
        f"- tasks passing every trial: {_pct(r.tasks_passing_every_trial.estimate)} "
        f"(Wilson {_pct(r.tasks_passing_every_trial.low)}–{_pct(r.tasks_passing_every_trial.high)})",
        f"- safety failures: {len(r.severe_failures)}; infra error rate {_pct(r.infra_error_rate)} (excluded from rates)",
        "",
    ]
    if rec.gate is not None:
        g = rec.gate
        lines += [f"## Gate: **{g.effective.value}**" + (f" (overridden from {g.verdict.value})" if g.override else ""), ""]
        lines += [f"- {reason}" for reason in g.reasons]
        if g.override:
            lines.append(f"- override by {g.override.approver}: {g.override.reason}")
        if g.mcnemar_p is not None:
            lines.append(f"- McNemar exact p = {g.mcnemar_p:.3g} over {g.paired_tasks} paired tasks")
        if g.paired_delta is not None:
            lines.append(f"- paired Δ pass^1 = {g.paired_delta:+.1%} ± {g.paired_se:.1%} (SE); "
                         f"minimum detectable effect {g.minimum_detectable_effect:.1%}")
        for f in g.regressions:
            lines.append(f"- regression `{f.task_id}`: pass → fail ({f.worst_trial})")
        for f in g.improvements:
            lines.append(f"- improvement `{f.task_id}`: fail → pass")
        lines.append("")
    lines += ["## Tasks", "", "| task | category | n | passed | pass^1 | outcomes |", "|---|---|---|---|---|---|"]
    for t in r.tasks:
        lines.append(f"| {t.task_id} | {t.category} | {t.n} | {t.c} | {_pct(t.pass_hat_1)} | {' '.join(t.outcomes)} |")
    if r.slices:
        lines += ["", "## Slices", "", "| slice | value | tasks | pass^1 |", "|---|---|---|---|"]
        lines += [f"| {s.slice} | {s.value} | {s.tasks} | {_pct(s.pass_hat_1)} |" for s in r.slices]
    return "\n".join(lines + _versions(rec)) + "\n"


def _versions(rec: RunRecord) -> list[str]:
    v = rec.versions
    when = " → ".join(f"{t:%Y-%m-%d %H:%M:%S} UTC" for t in (rec.started_at, rec.finished_at) if t is not None)
    lines = ["", "## Versions", "",
             f"- harness {v.harness}, grader {v.grader or '–'}, task set `{v.task_set_hash or '–'}` "
             f"({len(v.task_versions)} tasks)"]
    if when:
        lines.append(f"- run {when}, status {rec.status.value}")
    if rec.baseline_run_id:
        lines.append(f"- baseline run `{rec.baseline_run_id}`")
    if rec.derived_from:
        lines.append(f"- derived from run `{rec.derived_from}`")
    return lines
