"""A suite run's bookkeeping: the plan and its versions, finishing a run against its baseline (waiting
for, missing, cancelled), overrides and promotions under the decision rules, re-gating and re-grading."""

from datetime import datetime, timezone
from pathlib import Path

import pytest
from factories import AGENT, suite_results

from ontrial.models.result import TrialResult
from ontrial.models.suite import FinishRequest, GateVerdict, Override, RunStatus, SuiteMode, SuiteSpec
from ontrial.models.trial import AgentRun, CheckResult, Diagnosis, Grade, SandboxSettings
from ontrial.outcomes import Outcome, TrialOutcome
from ontrial.results import ResultsStore
from ontrial.suite.decisions import DecisionRefused
from ontrial.suite.plan import plan_suite, task_set_hash
from ontrial.suite.regrade import regrade
from ontrial.suite.runs import BaselinePending, finish_run, override_run, promote_run, regate
from ontrial.tasks import load_task

FIXTURES = Path(__file__).resolve().parents[2] / "workflows" / "fixtures" / "tasks"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


def spec(run_id: str, tmp_path: Path, **fields) -> SuiteSpec:
    return SuiteSpec(suite_id=run_id, name="nightly", task_files=[str(FIXTURES / "web-bad-image")], trials=2,
                     agent=AGENT, sandbox=SandboxSettings(kubeconfig="/k"), artifacts_root=str(tmp_path), **fields)


def finish(store: ResultsStore, tmp_path: Path, run_id: str, pattern: str, **fields):
    """Record trials of web-bad-image with outcomes ``pattern`` (P/F/I) and finish the run."""
    the_spec = spec(run_id, tmp_path, **{k: v for k, v in fields.items() if k in SuiteSpec.model_fields})
    results = suite_results({"web-bad-image": pattern}, run_id) if pattern else []
    store.record_trials(run_id, results)
    request = FinishRequest(results_url="-", spec=the_spec, plan=plan_suite(the_spec.task_files, AGENT),
                            started_at=NOW, finished_at=NOW,
                            **{k: v for k, v in fields.items() if k in FinishRequest.model_fields})
    return finish_run(store, request)


@pytest.fixture
def store(tmp_path) -> ResultsStore:
    return ResultsStore(f"sqlite:///{tmp_path}/results.db")


def test_the_plan_records_task_versions_and_a_stable_set_hash():
    plan = plan_suite([str(FIXTURES / "web-bad-image"), str(FIXTURES / "web-tight-wall")])
    assert [t.task_id for t in plan.tasks] == ["web-bad-image", "web-tight-wall"]
    assert plan.tasks[0].category == "configuration" and plan.tasks[0].slices["tier"] == "test"
    assert plan.versions.task_versions == {"web-bad-image": "1", "web-tight-wall": "1"}
    assert plan.versions.task_set_hash == task_set_hash(plan.versions.task_hashes)
    assert task_set_hash({"a": "x"}) != task_set_hash({"a": "y"}) != task_set_hash({"b": "x"})
    assert plan.trial_at(3) == (plan.tasks[1], 1)  # trial-major order


def test_finish_saves_gates_and_reports_a_run(store, tmp_path):
    first = finish(store, tmp_path, "r1", "PP", promote_on_pass=True)
    assert first.gate.verdict is GateVerdict.passed and first.promoted and first.pass_hat_1 == 1.0
    second = finish(store, tmp_path, "r2", "PF")
    assert second.baseline_run_id == "r1" and second.gate.verdict is GateVerdict.failed
    record = store.get("r2")
    assert record.versions.grader and record.versions.task_versions == {"web-bad-image": "1"}
    assert record.plan.tasks[0].task_id == "web-bad-image" and record.spec.suite_id == "r2"
    assert Path(second.reports["md"]).read_text().startswith("# Suite `nightly`")


def test_an_explicit_baseline_is_waited_for_then_missing_means_inconclusive(store, tmp_path):
    with pytest.raises(BaselinePending):
        finish(store, tmp_path, "r2", "PP", baseline_run_id="r1")
    outcome = finish(store, tmp_path, "r2", "PP", baseline_run_id="r1", wait_for_baseline=False)
    assert outcome.gate.verdict is GateVerdict.inconclusive and "baseline run r1 not found" in outcome.gate.reasons


def test_trials_that_never_ran_are_cancelled_and_make_the_run_inconclusive(store, tmp_path):
    outcome = finish(store, tmp_path, "r1", "P", cancelled=True)
    assert outcome.status is RunStatus.cancelled and outcome.gate.verdict is GateVerdict.inconclusive
    assert outcome.outcome_counts == {"cancelled": 1, "passed": 1}
    assert store.get("r1").trials[1].outcome.reason == "the suite ended before this trial started"


def test_overrides_and_promotions_follow_the_rules(store, tmp_path):
    finish(store, tmp_path, "r1", "PP", promote_on_pass=True)
    finish(store, tmp_path, "r2", "FF")
    with pytest.raises(DecisionRefused, match="only a passing run"):
        promote_run(store, "r2", Override(approver="bob", reason="ship it"))
    with pytest.raises(DecisionRefused, match="only a failed gate"):
        override_run(store, "r1", Override(approver="bob", reason="why"))
    outcome = override_run(store, "r2", Override(approver="bob", reason="known"), promote=True)
    assert outcome.gate.effective is GateVerdict.passed and outcome.promoted
    assert override_run(store, "r2", Override(approver="bob", reason="known")).gate.override.approver == "bob"
    with pytest.raises(DecisionRefused, match="already overridden by bob"):
        override_run(store, "r2", Override(approver="eve", reason="mine"))
    assert store.baseline("nightly").run_id == "r2"
    _, baseline, result = regate(store, "r2", "r1")
    assert baseline.run_id == "r1" and result.verdict is GateVerdict.failed and result.override.approver == "bob"
    _, _, against_itself = regate(store, "r2", "r2")
    assert against_itself.verdict is GateVerdict.passed


def test_capability_suites_are_never_gated_or_inconclusive_by_a_missing_baseline(store, tmp_path):
    outcome = finish(store, tmp_path, "r1", "FF", baseline_run_id="gone", wait_for_baseline=False,
                     mode=SuiteMode.capability)
    assert outcome.gate.verdict is GateVerdict.report_only


def graded_trial(audit: Path | None = None, *, root_cause=("bad-image-tag",)) -> TrialResult:
    run = AgentRun(status="completed", diagnosis=Diagnosis(root_cause=list(root_cause), causal_service="web"),
                   audit_ref=audit.as_uri() if audit else None)
    checks = [CheckResult(name="rollout_complete(web)", passed=True), CheckResult(name="pods_ready(app=web>=2)",
                                                                                   passed=True)]
    return TrialResult(trial_id="r/web-bad-image/0", suite_id="r", task_id="web-bad-image", trial_index=0,
                       agent=AGENT, outcome=TrialOutcome(outcome=Outcome.passed), run=run,
                       grade=Grade(passed=True, checks=checks))


def test_regrade_applies_the_current_task_to_the_recorded_evidence(tmp_path):
    task = FIXTURES / "web-bad-image" / "task.yaml"
    names = [c.name for c in load_task(task).checks.outcome]
    trial = graded_trial()
    trial = trial.model_copy(update={"grade": trial.grade.model_copy(update={
        "checks": [CheckResult(name=n, passed=True) for n in names]})})
    same = regrade(trial, str(task))
    assert same.regraded and same.after.outcome is Outcome.passed and same.note == ""
    stricter = tmp_path / "stricter"
    stricter.mkdir()
    (tmp_path / "app").symlink_to(FIXTURES / "app")
    (stricter / "task.yaml").write_text(task.read_text().replace(
        "pass_rule: {require: [mitigation, safety]}", "pass_rule: {require: [mitigation, safety, diagnosis]}")
        .replace("root_cause: [bad-image-tag]\n  causal_service", "root_cause: [image-typo]\n  causal_service"))
    failed = regrade(trial, str(stricter / "task.yaml"))
    assert failed.after.outcome is Outcome.failed and "diagnosis" in failed.after.reason
    no_grade = regrade(trial.model_copy(update={"grade": None}), str(task))
    assert not no_grade.regraded and "re-run" in no_grade.note and no_grade.after == trial.outcome
