"""`validate_schema`: loader problems plus leaks, reference consistency and image coverage."""

from __future__ import annotations

from ontrial.tasks.validate import validate_schema


def test_valid_tree_has_no_problems(tree):
    assert validate_schema(["t/task.yaml"]) == []


def test_loader_problems_are_returned_not_raised(tree):
    tree.edit("t/task.yaml", "difficulty: easy", "difficulty: trivial")
    assert [str(p) for p in validate_schema(["t"])] == [
        "t/task.yaml:5: slices.difficulty: input should be 'easy', 'medium' or 'hard', got 'trivial'"]


def test_reference_diagnosis_must_score_full_marks(tree):
    tree.edit("t/task.yaml", "diagnosis: {root_cause: [scaled-wrong], causal_service: web}",
              "diagnosis: {root_cause: [scaled-wrong, dns-failure], causal_service: db}")
    assert [str(p) for p in validate_schema(["t"])] == [
        "t/task.yaml:28: reference_solution.diagnosis.root_cause: the reference diagnosis scores 0.5 against "
        "ground_truth.root_cause",
        "t/task.yaml:28: reference_solution.diagnosis.causal_service: the reference diagnosis does not name "
        "ground_truth.causal_service",
    ]


def test_task_id_in_an_alert_is_a_leak(tree):
    tree.edit("t/task.yaml", "labels: {service: web}", "labels: {service: web, runbook: demo-task}")
    assert [str(p) for p in validate_schema(["t"])] == [
        "t/task.yaml:16: trigger.alert.labels.runbook: visible to the agent: contains the task id"]


def test_root_cause_label_in_a_fault_patch_is_a_leak(tree):
    tree.edit("t/task.yaml", "patch: {spec: {replicas: 3}}",
              "patch: {metadata: {annotations: {note: Scaled Wrong}}, spec: {replicas: 3}}")
    assert [str(p) for p in validate_schema(["t"])] == [
        "t/task.yaml:14: fault.steps[0].patch.patch.metadata.annotations.note: visible to the agent: contains "
        "root-cause label 'scaled-wrong'"]


def test_every_app_image_needs_a_profile(tree):
    tree.edit("app/web.yaml", "image: demo/web:1.0", "image: demo/web:1.1")
    assert [str(p) for p in validate_schema(["t"])] == [
        "t/task.yaml:8: app.profiles: image demo/web:1.1 of Deployment/web has no workload profile with that tag"]


def test_duplicate_ids_across_paths(tree):
    tree.write("u/task.yaml", (tree.root / "t/task.yaml").read_text())
    assert [str(p) for p in validate_schema(["t", "u"])] == [
        "u/task.yaml:2: id: duplicate task id 'demo-task' (also in t/task.yaml)"]
