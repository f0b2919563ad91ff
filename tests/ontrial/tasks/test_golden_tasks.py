"""The demo golden set under tasks/: valid, self-consistent, and no answer visible to the agent."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from ontrial.tasks import load_tasks
from ontrial.tasks.validate import validate_schema

ROOT = Path(__file__).resolve().parents[3]
TASKS = ROOT / "tasks"
REQUIRED = {"oom-memory-limit-cut", "bad-image-rollout", "missing-configmap"}


@pytest.fixture(scope="module")
def tasks():
    return {t.id: t for t in load_tasks(TASKS)}


def test_the_required_tasks_exist(tasks):
    assert REQUIRED <= set(tasks)


def test_validate_schema_finds_no_problem():
    assert [str(p) for p in validate_schema([TASKS])] == []


def test_each_task_lives_in_a_directory_named_after_its_id(tasks):
    for task in tasks.values():
        assert task.source_path.parent.name == task.id


def test_the_app_has_at_least_five_services(tasks):
    for task in tasks.values():
        deployments = {o["metadata"]["name"] for o in task.app_objects() if o["kind"] == "Deployment"}
        services = {o["metadata"]["name"] for o in task.app_objects() if o["kind"] == "Service"}
        assert len(deployments) >= 5 and deployments == services


def test_ground_truth_and_mitigation_text_never_reach_agent_visible_objects(tasks):
    for task in tasks.values():
        visible = repr(task.app_objects()) + repr(task.trigger.alert.model_dump())
        assert task.id not in visible
        for label in task.ground_truth.root_cause:
            assert not re.search(re.escape(label), visible, re.IGNORECASE), (task.id, label)
        assert task.ground_truth.mitigation not in visible


def test_reference_solutions_use_only_gateway_tools_and_fix_by_the_documented_route(tasks):
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
    profile = next(p for p in task.profiles() if p["image"] == repo)
    assert tag not in profile["tags"]


def test_oom_limit_is_below_the_working_set_and_the_check_above_it(tasks):
    from kubernetes.utils import parse_quantity

    task = tasks["oom-memory-limit-cut"]
    _, patch = task.fault.steps[0].action
    cut = patch.patch["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"]
    working_set_mi = next(p for p in task.profiles() if p["image"] == "ferrywise/fares")["memory"]["working_set_mi"]
    check = next(c for c in task.checks.outcome if c.type == "quantity_at_least")
    assert parse_quantity(cut) < working_set_mi * 2**20 <= parse_quantity(check.spec.value)


def test_a_planted_leak_is_reported(tmp_path):
    shutil.copytree(TASKS, tmp_path / "tasks")
    fares = tmp_path / "tasks/apps/ferrywise/fares.yaml"
    fares.write_text(fares.read_text().replace("app.kubernetes.io/component: pricing",
                                               "app.kubernetes.io/component: pricing\n    scenario: oom-killed", 1))
    problems = [str(p) for p in validate_schema([tmp_path / "tasks"])]
    assert problems == [
        f"{tmp_path}/tasks/oom-memory-limit-cut/task.yaml:10: app.manifests: visible to the agent: Deployment/fares "
        "metadata.labels.scenario contains root-cause label 'oom-killed'"]
