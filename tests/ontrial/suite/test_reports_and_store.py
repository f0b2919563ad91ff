from xml.etree import ElementTree as ET

import pytest
from factories import AGENT, suite_results

from ontrial.models.suite import Override
from ontrial.reports import RunRecord, to_junit, to_markdown
from ontrial.reports.record import RunVersions
from ontrial.results import ResultsStore
from ontrial.suite.gate import gate
from ontrial.suite.summary import summarize


def record(run_id: str, pattern: dict[str, str], baseline: RunRecord | None = None) -> RunRecord:
    trials = suite_results(pattern, run_id)
    rep = summarize(run_id, AGENT, max(len(s) for s in pattern.values()), trials)
    g = gate(rep, baseline.report if baseline else None)
    return RunRecord(run_id=run_id, suite_name="nightly", report=rep, gate=g,
                     versions=RunVersions(harness="0.1.0", grader="1", task_set_hash="abc"), trials=trials)


def test_junit_has_a_case_per_task_with_reasons_and_flips():
    base = record("r1", {"a": "PP", "b": "PP", "c": "II"})
    xml = ET.fromstring(to_junit(record("r2", {"a": "PP", "b": "PF", "c": "II"}, base)))
    cases = {c.get("name"): c for c in xml.iter("testcase")}
    assert set(cases) == {"a", "b", "c"}
    failure = cases["b"].find("failure")
    assert "regression: pass → fail" in failure.get("message") and "trial 1: failed" in failure.text
    assert cases["c"].find("error") is not None and xml.get("failures") == "1" and xml.get("errors") == "1"


def test_markdown_summarises_gate_and_tasks():
    base = record("r1", {"a": "PP", "b": "PP"})
    md = to_markdown(record("r2", {"a": "PP", "b": "FF"}, base))
    assert "## Gate: **fail**" in md and "regression `b`: pass → fail" in md and "| b |" in md


def test_store_round_trip_queries_and_promotion(tmp_path):
    store = ResultsStore(f"sqlite:///{tmp_path}/results.db")
    r1 = record("r1", {"a": "PP", "b": "PP"})
    store.save(r1)
    store.save(r1)  # idempotent
    assert len(store.trial_rows("r1")) == 4
    store.promote("r1", Override(approver="ci", reason="first green run"))
    r2 = record("r2", {"a": "PP", "b": "PF"}, store.baseline("nightly"))
    store.save(r2)
    assert store.get("r2").gate.verdict.value == "fail"
    assert [r.run_id for r in store.runs(suite="nightly", agent="reference")] in (["r1", "r2"], ["r2", "r1"])
    with pytest.raises(ValueError, match="only a passing run"):
        store.promote("r2", Override(approver="bob", reason="why not"))
    store.save(r2.model_copy(update={"gate": r2.gate.model_copy(update={"override": Override(approver="bob",
                                                                                              reason="known flake")})}))
    store.promote("r2", Override(approver="bob", reason="accepted override"))
    assert store.baseline("nightly").run_id == "r2"
    assert [r.is_baseline for r in store.runs(suite="nightly") if r.run_id == "r1"] == [False]
