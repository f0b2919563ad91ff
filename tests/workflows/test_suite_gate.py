"""Two agents, one suite of 20 tasks × 5 trials each on kubesim: the second agent is gated against the
first (a run still going when the second finishes is waited for) and the gate names every flip."""

from __future__ import annotations

import asyncio
from pathlib import Path
from xml.etree import ElementTree as ET

from ontrial.models.suite import GateVerdict
from ontrial.outcomes import Outcome
from ontrial.results import ResultsStore
from trial_harness import child_starts, namespaces, result_within, suite_input, suite_tasks
from workflows import SuiteWorkflow

TASKS, TRIALS = 20, 5


async def test_a_regressed_agent_fails_the_gate_with_its_flips(temporal_env, task_queue, trial_cluster, tmp_path):
    tasks = suite_tasks(tmp_path / "tasks", TASKS)
    url = f"sqlite:///{tmp_path}/results.db"
    base = suite_input(trial_cluster, tmp_path / "artifacts", tasks, agent="reference", trials=TRIALS,
                       concurrency=6, results_url=url, name="web")
    cand = suite_input(trial_cluster, tmp_path / "artifacts", tasks, agent="noop", trials=TRIALS, concurrency=6,
                       results_url=url, name="web", baseline_run_id=base.spec.suite_id)
    client = temporal_env.client
    handles = [await client.start_workflow(SuiteWorkflow.run, s, id=s.spec.suite_id, task_queue=task_queue)
               for s in (base, cand)]
    base_outcome, cand_outcome = await asyncio.gather(*(result_within(h, 240) for h in handles))

    assert base_outcome.outcome_counts == {"passed": TASKS * TRIALS}
    assert base_outcome.gate.verdict is GateVerdict.passed  # no stored baseline yet: gated on safety only
    gate = cand_outcome.gate
    assert cand_outcome.baseline_run_id == base.spec.suite_id
    assert gate.verdict is GateVerdict.failed
    assert sorted(f.task_id for f in gate.regressions) == sorted(f"web-scaled-down-{i:02d}" for i in range(TASKS))
    assert all(f.worst_trial.startswith("trial 0: failed") for f in gate.regressions)
    assert gate.improvements == [] and gate.paired_tasks == TASKS
    assert gate.mcnemar_p == 2 * 0.5 ** TASKS and gate.paired_delta == -1.0

    store = ResultsStore(url)
    for suite in (base, cand):
        record = store.get(suite.spec.suite_id)
        ids = [t.trial_id for t in record.trials]
        assert len(ids) == len(set(ids)) == TASKS * TRIALS
        assert sorted(await child_starts(client, suite.spec.suite_id)) == sorted(ids)  # each started once
    noop = store.get(cand.spec.suite_id)
    assert {t.outcome.outcome for t in noop.trials} == {Outcome.failed}
    assert noop.report.pass_hat_1.estimate == 0.0 and noop.report.pass_hat_k[TRIALS] == 0.0
    junit = ET.fromstring(Path(cand_outcome.reports["junit"]).read_text())
    assert junit.get("failures") == str(TASKS)
    assert all("regression: pass → fail" in f.get("message") for f in junit.iter("failure"))
    markdown = Path(cand_outcome.reports["md"]).read_text()
    assert "## Gate: **fail**" in markdown and "regression `web-scaled-down-07`: pass → fail" in markdown
    managed = set(await namespaces(trial_cluster))
    assert not {t.sandbox_namespace for r in (store.get(base.spec.suite_id), noop) for t in r.trials} & managed
