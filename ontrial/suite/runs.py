"""A suite run's bookkeeping against the results store: finish (summarize, gate, report, save), override, promote.

The Temporal activities are thin wrappers over these; the CLI calls them directly for runs whose workflow
is gone. Every function is idempotent: a retried finish or override rewrites the same record.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from ..artifacts import artifact_store_for
from ..models.result import TrialResult
from ..models.suite import (
    FinishRequest,
    GateResult,
    GateVerdict,
    Override,
    RunStatus,
    SuiteOutcome,
    SuitePlan,
)
from ..models.trial import AgentSpec
from ..outcomes import cancelled
from ..reports import RunRecord, to_junit, to_markdown
from ..results import ResultsStore
from .decisions import check_override, check_promotion
from .gate import gate
from .summary import TaskMeta, summarize

REPORT_FILES = {"json": "report.json", "md": "report.md", "junit": "report.junit.xml"}


class BaselinePending(Exception):
    """The run named as baseline is not in the store yet (it may still be running)."""


class RunNotFound(LookupError):
    pass


def reports_dir(artifacts_root: str, run_id: str) -> Path:
    return artifact_store_for(artifacts_root).root / "runs" / run_id


def write_reports(record: RunRecord, directory: Path) -> dict[str, str]:
    """JSON (everything), Markdown (for people), JUnit XML (a test case per task, for CI)."""
    directory.mkdir(parents=True, exist_ok=True)
    texts = {"json": record.to_json(), "md": to_markdown(record), "junit": to_junit(record)}
    paths = {}
    for fmt, text in texts.items():
        path = directory / REPORT_FILES[fmt]
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        paths[fmt] = str(path)
    return paths


def complete_trials(plan: SuitePlan, trials_per_task: int, run_id: str, agent: AgentSpec,
                    recorded: list[TrialResult]) -> list[TrialResult]:
    """One verdict per planned trial: recorded ones, and ``cancelled`` for trials that never ran."""
    by_id = {t.trial_id: t for t in recorded}
    complete = []
    for index in range(plan.trial_count(trials_per_task)):
        task, trial = plan.trial_at(index)
        trial_id = f"{run_id}/{task.task_id}/{trial}"
        complete.append(by_id.get(trial_id) or TrialResult(
            trial_id=trial_id, suite_id=run_id, task_id=task.task_id, trial_index=trial, agent=agent,
            outcome=cancelled("the suite ended before this trial started")))
    return complete


def _meta(plan: SuitePlan) -> dict[str, TaskMeta]:
    return {t.task_id: TaskMeta(category=t.category, slices=dict(t.slices)) for t in plan.tasks}


def _inconclusive(result: GateResult, reason: str) -> GateResult:
    if result.verdict is GateVerdict.report_only:
        return result.model_copy(update={"reasons": [*result.reasons, reason]})
    return result.model_copy(update={"verdict": GateVerdict.inconclusive, "reasons": [*result.reasons, reason]})


def _baseline(store: ResultsStore, request: FinishRequest) -> tuple[RunRecord | None, str | None]:
    """The baseline record and, when it is missing, why."""
    spec = request.spec
    if spec.baseline_run_id:
        found = store.get(spec.baseline_run_id)
        if found is None:
            if request.wait_for_baseline:
                raise BaselinePending(f"baseline run {spec.baseline_run_id} is not in the results store yet")
            return None, f"baseline run {spec.baseline_run_id} not found"
        return found, None
    found = store.baseline(spec.name)
    if found is not None and found.run_id == spec.suite_id:
        return None, None  # a re-finished run that was promoted meanwhile is not its own baseline
    return found, None


def finish_run(store: ResultsStore, request: FinishRequest) -> SuiteOutcome:
    """Summarize the recorded trials, gate against the baseline, write the reports and save the run."""
    spec, plan = request.spec, request.plan
    trials = complete_trials(plan, spec.trials, spec.suite_id, spec.agent, store.recorded_trials(spec.suite_id))
    report = summarize(spec.suite_id, spec.agent, spec.trials, trials, _meta(plan))
    baseline, missing = _baseline(store, request)
    verdict = gate(report, baseline.report if baseline else None, spec.mode, spec.infra_error_threshold)
    if missing:
        verdict = _inconclusive(verdict, missing)
    unrun = report.outcome_counts.get("cancelled", 0)
    if unrun:
        verdict = _inconclusive(verdict, f"{unrun} trial(s) cancelled: the run is incomplete")
    status = RunStatus.cancelled if request.cancelled or unrun else RunStatus.completed
    record = RunRecord(
        run_id=spec.suite_id, suite_name=spec.name, report=report, gate=verdict,
        baseline_run_id=baseline.run_id if baseline else spec.baseline_run_id, versions=plan.versions,
        trials=trials, mode=spec.mode, status=status, started_at=request.started_at,
        finished_at=request.finished_at, spec=spec, plan=plan)
    store.save(record)
    promoted = False
    if request.promote_on_pass and verdict.effective is GateVerdict.passed and status is RunStatus.completed:
        store.promote(spec.suite_id, Override(approver="ontrial", reason="promote_on_pass: the gate passed",
                                              at=request.finished_at))
        promoted = True
    paths = write_reports(record, reports_dir(spec.artifacts_root, spec.suite_id))
    return outcome_of(record, paths, promoted)


def outcome_of(record: RunRecord, reports: dict[str, str], promoted: bool = False) -> SuiteOutcome:
    assert record.gate is not None
    return SuiteOutcome(
        run_id=record.run_id, suite_name=record.suite_name, agent=record.report.agent, mode=record.mode,
        status=record.status, trials=len(record.trials), outcome_counts=record.report.outcome_counts,
        pass_hat_1=record.report.pass_hat_1.estimate, gate=record.gate, baseline_run_id=record.baseline_run_id,
        reports=reports, promoted=promoted)


def load_run(store: ResultsStore, run_id: str) -> RunRecord:
    record = store.get(run_id)
    if record is None:
        raise RunNotFound(f"no run {run_id!r} in the results store")
    return record


def override_run(store: ResultsStore, run_id: str, override: Override, *, promote: bool = False) -> SuiteOutcome:
    """Record an override of a failed gate (who, why, when), rewrite the reports, optionally promote."""
    record = load_run(store, run_id)
    already = record.gate is not None and record.gate.override is not None and \
        (record.gate.override.approver, record.gate.override.reason) == (override.approver, override.reason)
    if not already:  # (a retried call finds its own override recorded)
        check_override(record.run_id, record.gate, override.approver, override.reason)
        assert record.gate is not None
        stamped = override if override.at else override.model_copy(update={"at": datetime.now(timezone.utc)})
        record = record.model_copy(update={"gate": record.gate.model_copy(update={"override": stamped})})
        store.save(record)
    if promote:
        promote_run(store, run_id, override)
    paths = _rewrite_reports(record)
    return outcome_of(record, paths, promoted=promote)


def promote_run(store: ResultsStore, run_id: str, by: Override) -> None:
    record = load_run(store, run_id)
    check_promotion(record.run_id, record.gate, record.status, by.approver, by.reason)
    store.promote(run_id, by)


def _rewrite_reports(record: RunRecord) -> dict[str, str]:
    if record.spec is None:
        return {}
    return write_reports(record, reports_dir(record.spec.artifacts_root, record.run_id))


def regate(store: ResultsStore, run_id: str, baseline_run_id: str | None = None) -> tuple[RunRecord, RunRecord | None,
                                                                                           GateResult]:
    """Recompute a stored run's gate, against ``baseline_run_id``, else the run's recorded baseline, else the
    suite's current baseline. A recorded override is kept while the gate still fails."""
    record = load_run(store, run_id)
    baseline_id = baseline_run_id or record.baseline_run_id
    baseline = load_run(store, baseline_id) if baseline_id else store.baseline(record.suite_name)
    if baseline is not None and baseline.run_id == record.run_id:
        baseline = None
    spec = record.spec
    mode = record.mode if spec is None else spec.mode
    threshold = 0.1 if spec is None else spec.infra_error_threshold
    result = gate(record.report, baseline.report if baseline else None, mode, threshold)
    unrun = record.report.outcome_counts.get("cancelled", 0)
    if unrun:
        result = _inconclusive(result, f"{unrun} trial(s) cancelled: the run is incomplete")
    previous = record.gate.override if record.gate else None
    if previous is not None and result.verdict is GateVerdict.failed:
        result = result.model_copy(update={"override": previous})
    return record, baseline, result
