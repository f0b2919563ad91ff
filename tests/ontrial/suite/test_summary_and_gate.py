from factories import AGENT, suite_results

from ontrial.models.suite import GateVerdict, Override, SuiteMode
from ontrial.suite.gate import gate
from ontrial.suite.summary import TaskMeta, summarize


def test_summary_uses_each_tasks_own_n_and_excludes_infra_errors():
    rep = summarize("s1", AGENT, 4, suite_results({"a": "PPPP", "b": "PPPF", "c": "FFFF", "d": "PPFF", "e": "PFFI"}))
    by = {t.task_id: t for t in rep.tasks}
    assert (by["e"].n, by["e"].c, by["e"].infra_errors) == (3, 1, 1)
    assert max(rep.pass_hat_k) == 3  # the smallest task n bounds k
    assert rep.infra_error_rate == 1 / 20
    assert rep.outcome_counts == {"failed": 9, "infra_error": 1, "passed": 10}
    assert rep.pass_hat_1.clusters == 5 and rep.pass_hat_1.n == 19
    assert rep.pass_hat_1.low < rep.pass_hat_1.estimate < rep.pass_hat_1.high
    assert rep.tasks_passing_every_trial.estimate == 1 / 5


def test_slices_and_severe_failures_are_reported_apart():
    meta = {"a": TaskMeta("configuration", {"tier": "backend"}), "b": TaskMeta("no_fault", {"tier": "edge"})}
    rep = summarize("s1", AGENT, 2, suite_results({"a": "PS", "b": "PP"}), meta)
    assert rep.severe_failures == ["s1/a/1"]
    assert {(s.slice, s.value): s.pass_hat_1 for s in rep.slices} == {
        ("category", "configuration"): 0.5, ("category", "no_fault"): 1.0, ("tier", "backend"): 0.5,
        ("tier", "edge"): 1.0}


def test_gate_fails_on_a_worst_trial_regression_and_lists_flips():
    base = summarize("b", AGENT, 3, suite_results({"a": "PPP", "b": "PPP", "c": "FFF", "d": "PPP"}, "b"))
    cand = summarize("c", AGENT, 3, suite_results({"a": "PPP", "b": "PPF", "c": "PPP", "d": "PPP"}, "c"))
    g = gate(cand, base)
    assert g.verdict is GateVerdict.failed
    assert [f.task_id for f in g.regressions] == ["b"] and g.regressions[0].worst_trial == "trial 2: failed"
    assert [f.task_id for f in g.improvements] == ["c"]
    assert g.mcnemar_p == 1.0 and g.paired_tasks == 4


def test_gate_passes_without_regressions_and_override_is_on_the_record():
    base = summarize("b", AGENT, 2, suite_results({"a": "PP", "b": "FF"}, "b"))
    cand = summarize("c", AGENT, 2, suite_results({"a": "PP", "b": "PF"}, "c"))
    assert gate(cand, base).verdict is GateVerdict.passed
    failing = gate(summarize("c", AGENT, 2, suite_results({"a": "PF", "b": "FF"}, "c")), base)
    assert failing.verdict is GateVerdict.failed
    overridden = failing.model_copy(update={"override": Override(approver="alice", reason="flaky infra")})
    assert overridden.effective is GateVerdict.passed and overridden.verdict is GateVerdict.failed


def test_new_safety_failure_always_fails_and_infra_makes_it_inconclusive():
    base = summarize("b", AGENT, 2, suite_results({"a": "PP", "b": "PP"}, "b"))
    assert gate(summarize("c", AGENT, 2, suite_results({"a": "PP", "b": "PS"}, "c")), None).new_severe == ["b"]
    assert gate(summarize("c", AGENT, 2, suite_results({"a": "PP", "b": "PS"}, "c")), base).verdict is GateVerdict.failed
    g = gate(summarize("c", AGENT, 2, suite_results({"a": "PI", "b": "II"}, "c")), base)
    assert g.verdict is GateVerdict.inconclusive


def test_capability_suites_report_without_gating():
    base = summarize("b", AGENT, 1, suite_results({"a": "P"}, "b"))
    g = gate(summarize("c", AGENT, 1, suite_results({"a": "F"}, "c")), base, mode=SuiteMode.capability)
    assert g.verdict is GateVerdict.report_only and g.regressions
