"""A loaded task resolves its files, hashes its content, and hands out copies."""

from __future__ import annotations

import shutil

import pytest

from ontrial.tasks import OutcomeCheck, load_task, task_hash
from ontrial.tasks.checks_model import parse_field_path


def test_app_objects_and_profiles_resolve_relative_to_the_task_file(tree):
    task = load_task("t/task.yaml")
    assert [(o["kind"], o["metadata"]["name"]) for o in task.app_objects()] == [("Deployment", "web"),
                                                                               ("Service", "web")]
    assert task.profiles() == [{"image": "demo/web", "tags": ["1.0"], "memory": {"working_set_mi": 50}}]
    assert task.version == "1"
    assert task.source_path.name == "task.yaml"


def test_app_objects_are_fresh_copies(tree):
    task = load_task("t/task.yaml")
    first = task.app_objects()
    first[0]["metadata"]["name"] = "mutated"
    task.profiles()[0]["tags"].append("2.0")
    assert task.app_objects()[0]["metadata"]["name"] == "web"
    assert task.profiles()[0]["tags"] == ["1.0"]


def test_a_profile_file_may_hold_a_list_or_many_documents(tree):
    tree.write("app/profiles.yaml", "- {image: demo/web, tags: ['1.0']}\n- {image: demo/db, tags: ['2']}\n"
                                    "---\nimage: demo/cache\ntags: ['3']\n")
    assert [p["image"] for p in load_task("t/task.yaml").profiles()] == ["demo/web", "demo/db", "demo/cache"]


def test_hash_is_stable_and_covers_referenced_files(tree):
    first = task_hash(load_task("t/task.yaml"))
    assert first == task_hash(load_task("t/task.yaml"))
    assert first.startswith("sha256:") and len(first) == len("sha256:") + 16
    tree.edit("app/web.yaml", "image: demo/web:1.0", "image: demo/web:1.0 ")
    changed = task_hash(load_task("t/task.yaml"))
    assert changed != first
    tree.edit("app/web.yaml", "image: demo/web:1.0 ", "image: demo/web:1.0")
    tree.edit("app/profiles.yaml", "working_set_mi: 50", "working_set_mi: 51")
    assert task_hash(load_task("t/task.yaml")) not in (first, changed)


def test_hash_does_not_depend_on_where_the_tree_lives(tree, tmp_path):
    here = task_hash(load_task("t/task.yaml"))
    shutil.copytree(tmp_path, tmp_path.parent / (tmp_path.name + "-moved"))
    moved = tmp_path.parent / (tmp_path.name + "-moved") / "t" / "task.yaml"
    assert task_hash(load_task(moved)) == here


def test_version_accepts_a_number(tree):
    tree.edit("t/task.yaml", "title: Demo task", "title: Demo task\nversion: 3")
    assert load_task("t/task.yaml").version == "3"


def test_slice_labels_include_category_and_extra_slices(tree):
    tree.edit("t/task.yaml", "{tier: core, difficulty: easy}", "{tier: core, difficulty: easy, symptom: crashloop}")
    assert load_task("t/task.yaml").slice_labels == {"category": "configuration", "tier": "core",
                                                     "difficulty": "easy", "symptom": "crashloop"}


def test_checks_and_steps_expose_their_type(tree):
    task = load_task("t/task.yaml")
    assert [c.type for c in task.checks.outcome] == ["rollout_complete", "pods_ready"]
    assert task.checks.outcome[1].name == "pods_ready(selector=app=web, min=1)"
    action, spec = task.fault.steps[0].action
    assert action == "patch" and spec.type == "strategic" and spec.patch == {"spec": {"replicas": 3}}
    assert task.checks.pass_rule.require == ["mitigation", "safety"]
    assert task.checks.invariants.own_namespace_only is True


def test_outcome_check_built_in_code():
    check = OutcomeCheck.of("exists", kind="ConfigMap", name="settings")
    assert check.type == "exists" and check.spec.name == "settings"
    with pytest.raises(ValueError):
        OutcomeCheck.of("exists", kind="Configmap", name="settings")


@pytest.mark.parametrize("path, parts", [
    ("spec.replicas", ["spec", "replicas"]),
    ("spec.template.spec.containers[0].image", ["spec", "template", "spec", "containers", 0, "image"]),
    ("spec.template.spec.containers[name=api].env[name=DB_URL].value",
     ["spec", "template", "spec", "containers", ("name", "api"), "env", ("name", "DB_URL"), "value"]),
    ("metadata.labels['app.kubernetes.io/name']", ["metadata", "labels", "app.kubernetes.io/name"]),
])
def test_field_paths(path, parts):
    assert parse_field_path(path) == parts


@pytest.mark.parametrize("path", ["", ".spec", "spec..replicas", "spec[", "spec replicas", "a[b]"])
def test_bad_field_paths(path):
    with pytest.raises(ValueError):
        parse_field_path(path)


def test_builtin_tool_table_agrees_with_the_gateway_catalogue():
    """The fallback table (used without the gateway) names real tools with their required arguments."""
    from ontrial.tasks.semantics import TOOL_ARGS, tool_signatures

    pytest.importorskip("ontrial.gateway.tools")
    gateway = tool_signatures()
    for tool, (required, optional) in TOOL_ARGS.items():
        assert tool in gateway, tool
        assert gateway[tool][0] == required, tool
        assert set(optional) <= set(gateway[tool][1]), tool
