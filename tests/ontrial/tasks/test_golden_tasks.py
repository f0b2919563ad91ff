"""The golden set under tasks/: valid, stratified, self-consistent, and no answer visible to the agent."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from ontrial.graders.diagnosis import score_diagnosis
from ontrial.models.trial import Diagnosis
from ontrial.tasks import load_tasks
from ontrial.tasks.scan import scan_paths
from ontrial.tasks.validate import validate_schema

ROOT = Path(__file__).resolve().parents[3]
TASKS = ROOT / "tasks"
REQUIRED = {"oom-memory-limit-cut", "bad-image-rollout", "missing-configmap"}
CATEGORIES = {"configuration", "code", "data_integrity", "operational", "no_fault"}


@pytest.fixture(scope="module")
def tasks():
    return {t.id: t for t in load_tasks(TASKS)}


def test_the_set_is_large_and_stratified(tasks):
    assert REQUIRED <= set(tasks)
    assert len(tasks) >= 24
    counts = Counter(t.category for t in tasks.values())
    assert set(counts) == CATEGORIES
    assert counts["no_fault"] >= 3
    elsewhere = [t.id for t in tasks.values() if t.ground_truth.causal_service
                 and t.alerting_service != t.ground_truth.causal_service]
    assert len(elsewhere) >= 3, elsewhere
    for task in tasks.values():
        assert {"category", "tier", "difficulty"} <= set(task.slice_labels)


def test_validate_schema_finds_no_problem():
    assert [str(p) for p in validate_schema([TASKS])] == []


def test_the_contamination_scan_is_clean():
    findings, problems = scan_paths([TASKS])
    assert [str(f) for f in findings] == [] and problems == []


def test_each_task_lives_in_a_directory_named_after_its_id(tasks):
    for task in tasks.values():
        assert task.source_path.parent.name == task.id


def test_the_app_has_at_least_five_services(tasks):
    for task in tasks.values():
        deployments = {o["metadata"]["name"] for o in task.app_objects() if o["kind"] == "Deployment"}
        services = {o["metadata"]["name"] for o in task.app_objects() if o["kind"] == "Service"}
        assert len(deployments) >= 5 and deployments == services


def test_every_task_alerts_by_a_rule_and_has_a_runbook(tasks):
    for task in tasks.values():
        assert task.trigger.alert.name in task.alert_rule_names(), task.id
        assert task.alerting_service, task.id
        assert "ferrywise-oncall" in task.runbooks


def test_no_fault_tasks_change_nothing_and_must_be_called_false_alarms(tasks):
    for task in (t for t in tasks.values() if t.category == "no_fault"):
        assert task.ground_truth.causal_service is None
        assert "diagnosis" in task.checks.pass_rule.require
        assert [a.tool for a in task.reference_solution.actions if a.tool not in
                ("get_resources", "describe", "get_events", "get_logs")] == []
        assert score_diagnosis(task.ground_truth.root_cause, task.reference_solution.diagnosis).score == 1.0


def test_code_faults_ship_as_a_new_image_whose_profile_carries_the_bug(tasks):
    code = [t for t in tasks.values() if t.category == "code"]
    assert len(code) >= 3
    for task in code:
        images = []
        for step in task.fault.steps:
            action, spec = step.action
            if action == "patch" and spec.kind == "Deployment":
                containers = spec.patch["spec"]["template"]["spec"]["containers"]
                images += [c["image"] for c in containers if "image" in c]
        assert len(images) == 1, task.id
        repo, tag = images[0].rsplit(":", 1)
        documents = [p for p in task.profiles() if p["image"] == repo and tag in p["tags"]]
        assert len(documents) == 1 and documents[0]["tags"] == [tag], task.id  # its own behaviour


def test_data_integrity_tasks_alert_on_a_data_counter_not_on_errors(tasks):
    """Their trigger rule reads a counter an image exports; no profile involved answers with errors."""
    data = [t for t in tasks.values() if t.category == "data_integrity"]
    assert len(data) >= 3
    for task in data:
        counters = {c["name"] for p in task.profiles() for c in (p.get("telemetry") or {}).get("counters") or []}
        rules = [r for g in task.alert_rules()["groups"] for r in g["rules"]]
        rule = next(r for r in rules if r.get("alert") == task.trigger.alert.name)
        assert any(name in rule["expr"] for name in counters), task.id
        for check in task.checks.outcome:  # nothing about crash loops or readiness regressions
            assert check.type not in ("no_crashloop", "quantity_at_least"), (task.id, check.type)
    faulty = {("ferrywise/berths", "2.4.2")}
    for profile in next(iter(tasks.values())).profiles():
        if any((profile["image"], tag) in faulty for tag in profile["tags"]):
            assert "errors" not in profile["telemetry"]


def test_reference_diagnoses_name_the_cause_not_the_alerting_service(tasks):
    for task in tasks.values():
        ref = task.reference_solution.diagnosis
        assert ref.causal_service == task.ground_truth.causal_service, task.id
        assert score_diagnosis(task.ground_truth.root_cause, Diagnosis(summary="no idea")).score == 0.0


def test_reference_solutions_fix_by_the_documented_route(tasks):
    tools = {t.id: [a.tool for a in t.reference_solution.actions] for t in tasks.values()}
    assert tools["oom-memory-limit-cut"][-1] == "rollout_undo"
    assert tools["bad-image-rollout"][-1] == "rollout_undo"
    assert tools["missing-configmap"][-1] == "apply"
    manifest = tasks["missing-configmap"].reference_solution.actions[-1].args["manifest"]
    original = next(o for o in tasks["missing-configmap"].app_objects()
                    if o["kind"] == "ConfigMap" and o["metadata"]["name"] == manifest["metadata"]["name"])
    assert manifest["data"] == original["data"]


def test_bad_image_tag_is_absent_from_the_registry_profiles(tasks):
    task = tasks["bad-image-rollout"]
    _, patch = task.fault.steps[0].action
    image = patch.patch["spec"]["template"]["spec"]["containers"][0]["image"]
    repo, tag = image.rsplit(":", 1)
    assert all(tag not in p["tags"] for p in task.profiles() if p["image"] == repo)


def test_oom_limit_is_below_the_working_set_and_the_check_above_it(tasks):
    from kubernetes.utils import parse_quantity

    task = tasks["oom-memory-limit-cut"]
    _, patch = task.fault.steps[0].action
    cut = patch.patch["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"]
    working_set_mi = next(p for p in task.profiles() if p["image"] == "ferrywise/fares")["memory"]["working_set_mi"]
    check = next(c for c in task.checks.outcome if c.type == "quantity_at_least")
    assert parse_quantity(cut) < working_set_mi * 2**20 <= parse_quantity(check.spec.value)


def test_a_planted_leak_is_reported_for_every_task_it_reaches(tmp_path):
    shutil.copytree(TASKS, tmp_path / "tasks")
    fares = tmp_path / "tasks/apps/ferrywise/fares.yaml"
    fares.write_text(fares.read_text().replace("app.kubernetes.io/component: pricing",
                                               "app.kubernetes.io/component: pricing\n    scenario: oom-killed", 1))
    problems = [str(p) for p in validate_schema([tmp_path / "tasks"])]
    expected = (f"{tmp_path}/tasks/oom-memory-limit-cut/task.yaml:13: app.manifests[2]: visible to the agent: "
                f"{tmp_path}/tasks/apps/ferrywise/fares.yaml: Deployment/fares metadata.labels.scenario contains "
                "root-cause label 'oom-killed'")
    assert expected in problems
    assert all("metadata.labels.scenario contains root-cause label 'oom-killed'" in p for p in problems)
