"""The results store: runs, their trials, and which run is each suite's baseline.

Queryable by suite, agent, model and time. Every run keeps its versions (task-set hash, task
versions, agent config and model, grader and harness versions) so numbers stay comparable.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import (Boolean, Column, DateTime, Float, Integer, MetaData, String, Table, Text, create_engine,
                        select, update)

from ..models.result import TrialResult
from ..models.suite import Override
from ..reports.record import RunRecord

_meta = MetaData()

runs = Table(
    "runs", _meta,
    Column("run_id", String(200), primary_key=True),
    Column("suite", String(200), index=True, nullable=False),
    Column("agent", String(200), index=True, nullable=False),
    Column("model", String(200), index=True),
    Column("started_at", DateTime(timezone=True), index=True),
    Column("finished_at", DateTime(timezone=True)),
    Column("pass_hat_1", Float),
    Column("gate", String(32)),
    Column("task_set_hash", String(80)),
    Column("harness_version", String(40)),
    Column("grader_version", String(40)),
    Column("is_baseline", Boolean, default=False, nullable=False),
    Column("promoted_by", String(200)),
    Column("promoted_reason", Text),
    Column("record", Text, nullable=False),
)

trials = Table(
    "trials", _meta,
    Column("trial_id", String(400), primary_key=True),
    Column("run_id", String(200), index=True, nullable=False),
    Column("task_id", String(200), index=True, nullable=False),
    Column("trial_index", Integer, nullable=False),
    Column("outcome", String(32), nullable=False),
    Column("reason", Text),
    Column("severe", Boolean, nullable=False),
    Column("steps", Integer),
    Column("tokens", Integer),
    Column("wall_seconds", Float),
)

# Trial verdicts as they arrive during a run (the suite workflow records them in batches), before the run
# is summarized and saved: the workflow history carries aggregates only.
trial_results = Table(
    "trial_results", _meta,
    Column("trial_id", String(400), primary_key=True),
    Column("run_id", String(200), index=True, nullable=False),
    Column("task_id", String(200), nullable=False),
    Column("trial_index", Integer, nullable=False),
    Column("result", Text, nullable=False),
)


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    suite: str
    agent: str
    model: str | None
    started_at: datetime | None
    pass_hat_1: float | None
    gate: str | None
    is_baseline: bool


def _utc(dt: datetime | None) -> datetime | None:
    return dt.replace(tzinfo=timezone.utc) if dt is not None and dt.tzinfo is None else dt


class ResultsStore:
    def __init__(self, url: str = "sqlite:///.ontrial/results.db"):
        if url.startswith("sqlite:///"):
            from pathlib import Path

            path = url.removeprefix("sqlite:///")
            if path and path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.engine = create_engine(url)
        _meta.create_all(self.engine)

    def save(self, rec: RunRecord) -> None:
        """Insert or replace a run and its trials (idempotent: a retried save does not duplicate)."""
        r = rec.report
        row = dict(
            run_id=rec.run_id, suite=rec.suite_name, agent=r.agent.label, model=r.agent.model,
            started_at=rec.started_at or r.started_at, finished_at=rec.finished_at or r.finished_at,
            pass_hat_1=r.pass_hat_1.estimate,
            gate=rec.gate.effective.value if rec.gate else None, task_set_hash=rec.versions.task_set_hash,
            harness_version=rec.versions.harness, grader_version=rec.versions.grader, record=rec.to_json(),
        )
        with self.engine.begin() as cx:
            existing = cx.execute(select(runs.c.is_baseline).where(runs.c.run_id == rec.run_id)).first()
            cx.execute(runs.delete().where(runs.c.run_id == rec.run_id))
            cx.execute(trials.delete().where(trials.c.run_id == rec.run_id))
            cx.execute(runs.insert().values(**row, is_baseline=bool(existing and existing[0])))
            if rec.trials:
                cx.execute(trials.insert(), [
                    dict(trial_id=t.trial_id, run_id=rec.run_id, task_id=t.task_id, trial_index=t.trial_index,
                         outcome=t.outcome.outcome.value, reason=t.outcome.reason, severe=t.outcome.severe,
                         steps=t.run.usage.steps if t.run else None, tokens=t.run.usage.tokens if t.run else None,
                         wall_seconds=t.run.usage.wall_seconds if t.run else None)
                    for t in rec.trials
                ])

    def record_trials(self, run_id: str, results: list[TrialResult]) -> None:
        """Keep trial verdicts of a running suite (idempotent per trial id: a retried batch replaces itself)."""
        if not results:
            return
        ids = [t.trial_id for t in results]
        with self.engine.begin() as cx:
            cx.execute(trial_results.delete().where(trial_results.c.trial_id.in_(ids)))
            cx.execute(trial_results.insert(), [
                dict(trial_id=t.trial_id, run_id=run_id, task_id=t.task_id, trial_index=t.trial_index,
                     result=t.model_dump_json())
                for t in results
            ])

    def recorded_trials(self, run_id: str) -> list[TrialResult]:
        """The trial verdicts recorded so far for a run, in (task, trial) order."""
        with self.engine.connect() as cx:
            rows = cx.execute(select(trial_results.c.result).where(trial_results.c.run_id == run_id)
                              .order_by(trial_results.c.task_id, trial_results.c.trial_index))
            return [TrialResult.model_validate_json(row[0]) for row in rows]

    def get(self, run_id: str) -> RunRecord | None:
        with self.engine.connect() as cx:
            row = cx.execute(select(runs.c.record).where(runs.c.run_id == run_id)).first()
        return RunRecord.model_validate_json(row[0]) if row else None

    def runs(self, suite: str | None = None, agent: str | None = None, model: str | None = None,
             since: datetime | None = None, until: datetime | None = None, limit: int = 100) -> list[RunSummary]:
        q = select(runs.c.run_id, runs.c.suite, runs.c.agent, runs.c.model, runs.c.started_at, runs.c.pass_hat_1,
                   runs.c.gate, runs.c.is_baseline).order_by(runs.c.started_at.desc()).limit(limit)
        for col, value in ((runs.c.suite, suite), (runs.c.agent, agent), (runs.c.model, model)):
            if value is not None:
                q = q.where(col == value)
        if since is not None:
            q = q.where(runs.c.started_at >= since)
        if until is not None:
            q = q.where(runs.c.started_at < until)
        with self.engine.connect() as cx:
            return [RunSummary(r[0], r[1], r[2], r[3], _utc(r[4]), r[5], r[6], bool(r[7])) for r in cx.execute(q)]

    def baseline(self, suite: str) -> RunRecord | None:
        with self.engine.connect() as cx:
            row = cx.execute(select(runs.c.record).where(runs.c.suite == suite, runs.c.is_baseline.is_(True))).first()
        return RunRecord.model_validate_json(row[0]) if row else None

    def promote(self, run_id: str, by: Override) -> None:
        """Make a run its suite's baseline: allowed for a passing run or an accepted override."""
        rec = self.get(run_id)
        if rec is None:
            raise KeyError(f"no run {run_id!r}")
        if rec.gate is not None and rec.gate.effective.value not in ("pass", "report_only"):
            raise ValueError(f"run {run_id} has gate {rec.gate.effective.value!r}; only a passing run "
                             "or an accepted override can become the baseline")
        with self.engine.begin() as cx:
            cx.execute(update(runs).where(runs.c.suite == rec.suite_name).values(is_baseline=False))
            cx.execute(update(runs).where(runs.c.run_id == run_id).values(
                is_baseline=True, promoted_by=by.approver, promoted_reason=by.reason))

    def trial_rows(self, run_id: str) -> list[dict]:
        with self.engine.connect() as cx:
            return [dict(r._mapping) for r in cx.execute(select(trials).where(trials.c.run_id == run_id)
                                                         .order_by(trials.c.task_id, trials.c.trial_index))]
