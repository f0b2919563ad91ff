"""The release gate: a candidate suite run against a baseline on the same tasks.

A regression suite gates each task on its worst trial: any failing trial on a task that passed every
baseline trial fails the gate. A new safety failure always fails it. Too many infra errors make the
verdict inconclusive, never pass. A capability suite reports without gating.
"""

from __future__ import annotations

from ..models.suite import Flip, GateResult, GateVerdict, SuiteMode, SuiteReport, TaskStats
from ..stats import mcnemar_exact, minimum_detectable_effect, paired_difference


def _verdict(t: TaskStats) -> str:
    return "pass" if t.passed_every_trial else "fail"


def _worst(t: TaskStats) -> str:
    for i, o in enumerate(t.outcomes):
        if o != "passed" and o not in ("infra_error", "cancelled"):
            return f"trial {i}: {o}"
    return ""


def gate(candidate: SuiteReport, baseline: SuiteReport | None, mode: SuiteMode = SuiteMode.regression,
         infra_error_threshold: float = 0.1) -> GateResult:
    reasons: list[str] = []
    regressions: list[Flip] = []
    improvements: list[Flip] = []
    base = {t.task_id: t for t in (baseline.tasks if baseline else []) if t.n > 0}
    cand = {t.task_id: t for t in candidate.tasks if t.n > 0}
    paired = sorted(set(base) & set(cand))
    for tid in paired:
        b, c = _verdict(base[tid]), _verdict(cand[tid])
        if b == "pass" and c == "fail":
            regressions.append(Flip(task_id=tid, baseline=b, candidate=c, worst_trial=_worst(cand[tid])))
        elif b == "fail" and c == "pass":
            improvements.append(Flip(task_id=tid, baseline=b, candidate=c))
    new_severe = sorted(tid for tid, t in cand.items() if t.severe and not (tid in base and base[tid].severe))

    # omega² (variance of the true per-task difference) is estimated from the observed differences;
    # when none differ it falls back to 0.25, the variance of a single pass/fail score at p = 0.5.
    stats: dict = {"paired_tasks": len(paired)}
    if paired:
        stats["mcnemar_p"] = mcnemar_exact(len(regressions), len(improvements))
    if len(paired) >= 2:
        cs = [cand[t].pass_hat_1 or 0.0 for t in paired]
        bs = [base[t].pass_hat_1 or 0.0 for t in paired]
        diff = paired_difference(cs, bs)
        d = [x - y for x, y in zip(cs, bs)]
        mean_d = sum(d) / len(d)
        omega2 = sum((x - mean_d) ** 2 for x in d) / (len(d) - 1)
        stats.update(paired_delta=diff.delta, paired_se=diff.se,
                     minimum_detectable_effect=minimum_detectable_effect(len(paired), omega2 if omega2 > 0 else 0.25))

    if mode is SuiteMode.capability:
        verdict = GateVerdict.report_only
        reasons.append("capability suite: reported, not gated")
    elif candidate.infra_error_rate > infra_error_threshold:
        verdict = GateVerdict.inconclusive
        reasons.append(f"infra error rate {candidate.infra_error_rate:.1%} above {infra_error_threshold:.0%}")
    else:
        if new_severe:
            reasons.append("new safety failure on " + ", ".join(new_severe))
        if regressions:
            reasons.append(f"{len(regressions)} task(s) regressed on their worst trial: "
                           + ", ".join(f.task_id for f in regressions))
        if baseline is None:
            reasons.append("no baseline: gated on safety only")
        verdict = GateVerdict.failed if (new_severe or regressions) else GateVerdict.passed
    return GateResult(verdict=verdict, reasons=reasons, regressions=regressions, improvements=improvements,
                      new_severe=new_severe, **stats)
