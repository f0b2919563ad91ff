"""Turn a suite's trial results into per-task and suite statistics (the task is the unit of evidence)."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ..models.result import TrialResult
from ..models.suite import Distribution, RateWithInterval, SliceStats, SuiteReport, TaskStats
from ..models.trial import AgentSpec
from ..outcomes import Outcome
from ..stats import mean_ci, pass_at_k, pass_hat_k, wilson


@dataclass(frozen=True)
class TaskMeta:
    category: str = ""
    slices: dict[str, str] = field(default_factory=dict)


def _distribution(values: Sequence[float]) -> Distribution:
    if not values:
        return Distribution()
    xs = sorted(values)

    def q(p: float) -> float:
        return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]

    return Distribution(count=len(xs), mean=sum(xs) / len(xs), p50=q(0.5), p90=q(0.9), max=xs[-1])


def task_stats(task_id: str, results: Iterable[TrialResult], meta: TaskMeta | None = None) -> TaskStats:
    ordered = sorted(results, key=lambda r: r.trial_index)
    outcomes = [r.outcome for r in ordered]
    counted = [o for o in outcomes if o.counts]
    n, c = len(counted), sum(1 for o in counted if o.passed)
    ks = range(1, n + 1)
    meta = meta or TaskMeta()
    return TaskStats(
        task_id=task_id,
        category=meta.category,
        slices=dict(meta.slices),
        outcomes=[o.outcome.value for o in outcomes],
        n=n,
        c=c,
        infra_errors=sum(1 for o in outcomes if o.outcome is Outcome.infra_error),
        severe=sum(1 for o in outcomes if o.severe),
        pass_hat_1=(c / n) if n else None,
        pass_at_k={k: pass_at_k(n, c, k) for k in ks},
        pass_hat_k={k: pass_hat_k(n, c, k) for k in ks},
    )


def summarize(suite_id: str, agent: AgentSpec, trials_per_task: int, results: Sequence[TrialResult],
              meta: dict[str, TaskMeta] | None = None) -> SuiteReport:
    meta = meta or {}
    by_task: dict[str, list[TrialResult]] = defaultdict(list)
    for r in results:
        by_task[r.task_id].append(r)
    tasks = [task_stats(tid, rs, meta.get(tid)) for tid, rs in sorted(by_task.items())]
    scored = [t for t in tasks if t.n > 0]

    pass1 = RateWithInterval()
    if scored:
        clusters = [[1.0] * t.c + [0.0] * (t.n - t.c) for t in scored]
        flat = [s for cl in clusters for s in cl]
        if len(clusters) >= 2:
            ci = mean_ci(clusters)
            pass1 = RateWithInterval(estimate=ci.estimate, low=max(0.0, ci.low), high=min(1.0, ci.high), se=ci.se,
                                     n=ci.n, clusters=ci.clusters)
        else:
            pass1 = RateWithInterval(estimate=sum(flat) / len(flat), n=len(flat), clusters=1)
    every = RateWithInterval()
    if scored:
        w = wilson(sum(1 for t in scored if t.passed_every_trial), len(scored))
        every = RateWithInterval(estimate=w.estimate, low=w.low, high=w.high, n=w.n, clusters=w.n)

    max_k = min((t.n for t in scored), default=0)
    suite_at = {k: sum(t.pass_at_k[k] for t in scored) / len(scored) for k in range(1, max_k + 1)}
    suite_hat = {k: sum(t.pass_hat_k[k] for t in scored) / len(scored) for k in range(1, max_k + 1)}

    slice_groups: dict[tuple[str, str], list[TaskStats]] = defaultdict(list)
    for t in scored:
        if t.category:
            slice_groups[("category", t.category)].append(t)
        for key, value in t.slices.items():
            if key != "category":
                slice_groups[(key, str(value))].append(t)
    slices = [
        SliceStats(slice=k, value=v, tasks=len(ts), pass_hat_1=sum(t.pass_hat_1 or 0.0 for t in ts) / len(ts))
        for (k, v), ts in sorted(slice_groups.items())
    ]

    counted_runs = [r for r in results if r.outcome.counts and r.run is not None]
    counts = Counter(r.outcome.outcome.value for r in results)
    infra = counts.get(Outcome.infra_error.value, 0)
    return SuiteReport(
        suite_id=suite_id,
        agent=agent,
        trials_per_task=trials_per_task,
        tasks=tasks,
        pass_hat_1=pass1,
        pass_at_k=suite_at,
        pass_hat_k=suite_hat,
        tasks_passing_every_trial=every,
        slices=slices,
        steps=_distribution([r.run.usage.steps for r in counted_runs]),
        tokens=_distribution([r.run.usage.tokens for r in counted_runs]),
        wall_seconds=_distribution([r.run.usage.wall_seconds for r in counted_runs]),
        outcome_counts=dict(sorted(counts.items())),
        severe_failures=sorted(r.trial_id for r in results if r.outcome.severe),
        infra_error_rate=(infra / len(results)) if results else 0.0,
        started_at=min((r.started_at for r in results if r.started_at), default=None),
        finished_at=max((r.finished_at for r in results if r.finished_at), default=None),
    )
