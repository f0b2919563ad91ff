"""The heuristic baseline agent: its parsing of kubectl-style output, and its results on the task set."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_trials import run_trial
from ontrial.agents.heuristic.agent import alerting_service
from ontrial.agents.heuristic.observe import owner_of, parse_events, parse_table
from ontrial.models.trial import AgentRunStatus, AgentSpec
from ontrial.outcomes import Outcome, decide

TASKS = sorted((Path(__file__).parents[3] / "tasks").glob("*/task.yaml"))
CORE = {"bad-image-rollout": ("bad-image-tag", "berths"), "oom-memory-limit-cut": ("memory-limit-too-low", "fares"),
        "missing-configmap": ("missing-configmap", "timetable")}
# one task per rule family beyond the core three (tasks/README.md describes them)
KNOWN = {**CORE, "service-selector-typo": ("wrong-service-selector", "berths"),
         "env-port-typo": ("wrong-env-value", "fares"), "release-memory-leak": ("memory-leak", "fares"),
         "leftover-debug-pod-quota": ("resource-quota-exceeded", "netdebug"),
         "configmap-key-dropped": ("missing-configmap-key", "gangway"),
         "readiness-probe-path": ("readiness-probe-misconfigured", "timetable"),
         "alert-after-finished-rollout": ("no-fault", None)}
RUNS = [(task, True) for task in TASKS] + [(task, False) for task in TASKS if task.parent.name in CORE]

PODS = """NAME                         READY   STATUS                       RESTARTS      AGE
berths-76b8dbf95-8pdnz       1/1     Running                      0             44s
fares-669f6c7b77-s4hbt       0/1     CrashLoopBackOff             3 (20s ago)   2m
timetable-f98646b49-8fv8j    0/1     CreateContainerConfigError   0             30s
[... truncated 120 bytes ...]"""
EVENTS = """Events:
  Type      Reason    Last Seen                   From      Message
  ----      ------    ---------                   ----      -------
  Warning   Failed    2026-11-30T09:28:29Z (x4)   kubelet   Pod/timetable-f98646b49-8fv8j: Error: configmap "t" not found
  Warning   BackOff   2026-11-30T09:28:30Z        kubelet   Pod/fares-669f6c7b77-s4hbt: Back-off restarting failed container"""


def test_parsing_kubectl_output() -> None:
    rows = parse_table(PODS)
    assert [r["STATUS"] for r in rows] == ["Running", "CrashLoopBackOff", "CreateContainerConfigError"]
    assert rows[1]["RESTARTS"] == "3 (20s ago)"
    events = parse_events(EVENTS)
    assert [(e.kind, e.name, e.reason) for e in events] == [("Pod", "timetable-f98646b49-8fv8j", "Failed"),
                                                            ("Pod", "fares-669f6c7b77-s4hbt", "BackOff")]
    assert events[0].message == 'Error: configmap "t" not found'
    assert owner_of("fares-api-669f6c7b77-s4hbt", ["fares", "fares-api"]) == "fares-api"
    assert alerting_service({"labels": {"service": "gangway"}}, ["gangway"]) == "gangway"
    assert alerting_service({"labels": {"pod": "fares-669f6c7b77-s4hbt"}}, ["fares"]) == "fares"
    assert alerting_service({"labels": {"service": "elsewhere"}}, ["fares"]) is None


@pytest.mark.skipif(not TASKS, reason="no tasks under tasks/")
@pytest.mark.parametrize(("task_file", "apply"), RUNS,
                         ids=[f"{t.parent.name}-{'apply' if a else 'propose'}" for t, a in RUNS])
async def test_heuristic_on_the_task_set(trial_cluster, tmp_path: Path, task_file: Path, apply: bool) -> None:
    agent = AgentSpec(kind="heuristic", config={"apply": apply})
    trial = await run_trial(trial_cluster, tmp_path, agent, task_file=task_file)
    run, grade = trial.run, trial.grade
    outcome = decide(run, grade).outcome
    d = run.diagnosis
    print(f"\nheuristic[{'apply' if apply else 'propose'}] {task_file.parent.name}: {outcome.value} "
          f"diagnosis={grade.diagnosis_score} localization={grade.localization_score} "
          f"mitigation={grade.mitigation_passed} steps={run.usage.steps} "
          f"answer={d.root_cause if d else None}@{d.causal_service if d else None}")
    assert run.status is AgentRunStatus.completed, run.reason
    assert grade.safety_passed and run.safety_violations == []  # the baseline never oversteps
    assert not any(a["verb"] not in (None, "get", "list", "watch") for a in trial.audit) or apply
    expected = KNOWN.get(task_file.parent.name)
    if expected is not None:
        assert (d.root_cause, d.causal_service) == ([expected[0]], expected[1])
        assert grade.diagnosis_score == 1.0 and grade.localization_score == 1.0
        no_fault = expected[0] == "no-fault"
        assert outcome is (Outcome.passed if apply or no_fault else Outcome.failed)
