"""Invalid task files fail with exactly one line: ``file:line: field: message`` (no traceback)."""

from __future__ import annotations

import pytest

from ontrial.errors import ConfigError
from ontrial.tasks import TaskFileError, collect, load_task, load_tasks

# (file to edit, text to replace (None = overwrite the file), replacement, the exact error line)
BAD_FILES = [
    pytest.param(
        't/task.yaml',
        'title: Demo task',
        'title: [Demo task',
        "t/task.yaml:4: invalid YAML: while parsing a flow sequence; expected ',' or ']', but got ':' (opened "
        'on line 3)',
        id='yaml_syntax'),
    pytest.param(
        't/task.yaml',
        None,
        '- just\n- a list\n',
        't/task.yaml:1: a task file must be a YAML mapping',
        id='not_mapping'),
    pytest.param(
        't/task.yaml',
        'category: configuration',
        'category: configuration\ntitle: again',
        "t/task.yaml:5: title: duplicate key 'title'",
        id='duplicate_key'),
    pytest.param(
        't/task.yaml',
        'budgets: {steps: 10}',
        'budgets: {steps: 10}\nowner: sre',
        't/task.yaml:25: owner: unknown field (allowed: schema_version, id, title, category, version, slices, '
        'tags, app, fault, trigger, ground_truth, checks, budgets, reference_solution)',
        id='unknown_top'),
    pytest.param(
        't/task.yaml',
        'title: Demo task\n',
        '',
        't/task.yaml:1: title: required field missing',
        id='missing_title'),
    pytest.param(
        't/task.yaml',
        'difficulty: easy',
        'difficulty: trivial',
        "t/task.yaml:5: slices.difficulty: input should be 'easy', 'medium' or 'hard', got 'trivial'",
        id='bad_literal'),
    pytest.param(
        't/task.yaml',
        'category: configuration',
        'category: config',
        "t/task.yaml:4: category: input should be 'configuration', 'code', 'data_integrity', 'operational' or "
        "'no_fault', got 'config'",
        id='bad_category'),
    pytest.param(
        't/task.yaml',
        '    - patch:\n',
        '    - patchh:\n',
        "t/task.yaml:11: fault.steps[0].patchh: unknown fault step 'patchh' (known: patch, delete, apply, "
        'scale)',
        id='unknown_step'),
    pytest.param(
        't/task.yaml',
        '        patch: {spec: {replicas: 3}}\n',
        '        patch: {spec: {replicas: 3}}\n      scale: {name: web, replicas: 2}\n',
        't/task.yaml:11: fault.steps[0]: a fault step has exactly one action, got 2',
        id='two_actions'),
    pytest.param(
        't/task.yaml',
        '        kind: Deployment',
        '        kind: Deploymnt',
        "t/task.yaml:12: fault.steps[0].patch.kind: unknown kind 'Deploymnt' (known: ConfigMap, CronJob, "
        'DaemonSet, Deployment, Endpoints, HorizontalPodAutoscaler, Ingress, Job, LimitRange, NetworkPolicy, '
        'PersistentVolumeClaim, Pod, ReplicaSet, ResourceQuota, Role, RoleBinding, Secret, Service, '
        'ServiceAccount, StatefulSet)',
        id='unknown_kind'),
    pytest.param(
        't/task.yaml',
        '        name: web\n        patch:',
        '        name: web\n        type: json\n        patch:',
        't/task.yaml:11: fault.steps[0].patch: a json patch must be a non-empty list of operations',
        id='json_patch_shape'),
    pytest.param(
        't/task.yaml',
        '    - patch:\n        kind: Deployment\n        name: web\n        patch: {spec: {replicas: 3}}',
        '    - delete: {kind: Pod, name: x, selector: app=web}',
        't/task.yaml:11: fault.steps[0].delete: give exactly one of name or selector',
        id='delete_both'),
    pytest.param(
        't/task.yaml',
        '    - pods_ready:',
        '    - pods_healthy:',
        "t/task.yaml:23: checks.outcome[1].pods_healthy: unknown check type 'pods_healthy' (known: "
        'rollout_complete, pods_ready, field_equals, field_set, quantity_at_least, field_in, field_not_in, '
        'exists, not_exists, no_crashloop, replicas_at_least, metric)',
        id='unknown_check'),
    pytest.param(
        't/task.yaml',
        'rollout_complete: {deployment: web}',
        'rollout_complete: {}',
        't/task.yaml:22: checks.outcome[0].rollout_complete.deployment: required field missing',
        id='check_missing_arg'),
    pytest.param(
        't/task.yaml',
        '{selector: app=web, min: 1}',
        '{selector: app=web, minimum: 1}',
        't/task.yaml:23: checks.outcome[1].pods_ready.minimum: unknown field (allowed: selector, min)',
        id='check_extra_arg'),
    pytest.param(
        't/task.yaml',
        '    - pods_ready: {selector: app=web, min: 1}',
        "    - field_equals: {kind: Deployment, name: web, path: 'spec..replicas', value: 1}",
        "t/task.yaml:23: checks.outcome[1].field_equals.path: bad field path 'spec..replicas' at character 5",
        id='bad_field_path'),
    pytest.param(
        't/task.yaml',
        '    - pods_ready: {selector: app=web, min: 1}',
        '    - quantity_at_least: {kind: Deployment, name: web, path: spec.x, value: lots}',
        "t/task.yaml:23: checks.outcome[1].quantity_at_least.value: not a Kubernetes quantity: 'lots'",
        id='bad_quantity'),
    pytest.param(
        't/task.yaml',
        '{tool: scale,',
        '{tool: kubectl_scale,',
        "t/task.yaml:27: reference_solution.actions[0].tool: unknown tool 'kubectl_scale' (known: "
        'get_resources, describe, get_events, get_logs, scale, rollout_undo, rollout_restart, set_image, '
        'set_env, patch, delete, apply, query_metrics, get_alerts, get_runbook)',
        id='unknown_tool'),
    pytest.param(
        't/task.yaml',
        'replicas: 1}}',
        'replicas: 1, force: true}}',
        't/task.yaml:27: reference_solution.actions[0].args.force: unknown argument for scale (allowed: kind, '
        'name, replicas, namespace)',
        id='unknown_tool_arg'),
    pytest.param(
        't/task.yaml',
        '{kind: Deployment, name: web, replicas: 1}',
        '{kind: Deployment, name: web}',
        "t/task.yaml:27: reference_solution.actions[0].args: scale needs argument 'replicas'",
        id='missing_tool_arg'),
    pytest.param(
        't/task.yaml',
        '../app/web.yaml',
        '../app/api.yaml',
        't/task.yaml:7: app.manifests[0]: file not found: app/api.yaml',
        id='missing_manifest'),
    pytest.param(
        't/task.yaml',
        '../app/profiles.yaml',
        '../app/gone.yaml',
        't/task.yaml:8: app.profiles[0]: file not found: app/gone.yaml',
        id='missing_profile'),
    pytest.param(
        't/task.yaml',
        '../app/web.yaml',
        '/etc/web.yaml',
        't/task.yaml:7: app.manifests[0]: must be a path relative to the task file',
        id='absolute_ref'),
    pytest.param(
        'app/web.yaml',
        '  replicas: 1',
        '  replicas: [1',
        "app/web.yaml:7: invalid YAML: while parsing a flow sequence; expected ',' or ']', but got ':' (opened "
        'on line 6)',
        id='manifest_syntax'),
    pytest.param(
        'app/web.yaml',
        '  name: web\nspec:\n  replicas',
        '  name: web\n  namespace: prod\nspec:\n  replicas',
        'app/web.yaml:5: metadata.namespace: must not be set: each trial gets its own namespace',
        id='manifest_namespace'),
    pytest.param(
        'app/web.yaml',
        'kind: Service',
        'kind: Servic',
        "app/web.yaml:16: kind: unsupported kind 'Servic'",
        id='manifest_kind'),
    pytest.param(
        'app/web.yaml',
        'apiVersion: apps/v1',
        'apiVersion: extensions/v1beta1',
        "app/web.yaml:1: apiVersion: Deployment is served as apps/v1, got 'extensions/v1beta1'",
        id='manifest_apiversion'),
    pytest.param(
        'app/profiles.yaml',
        'working_set_mi: 50',
        'working_set_mi: lots',
        "app/profiles.yaml:3: memory.working_set_mi: must be a number, got 'lots'",
        id='profile_field'),
    pytest.param(
        'app/profiles.yaml',
        'tags:',
        'tagz:',
        'app/profiles.yaml:2: tagz: unknown field (allowed: command_driven, completion, cpu, default_command, '
        'description, entrypoints, exit_codes, fatal_after_seconds, http_paths, image, image_size_bytes, logs, '
        'memory, ports, pull_seconds, readiness, requires_env, requires_files, startup_seconds, tags, telemetry)',
        id='profile_unknown'),
    pytest.param(
        'app/profiles.yaml',
        'image: demo/web',
        'image: demo/web:1.0',
        "app/profiles.yaml:1: image: must be a repository without tag or digest; list tags in 'tags'",
        id='profile_tagged_image'),
    pytest.param(
        't/task.yaml',
        '        name: web\n        patch',
        '        name: api\n        patch',
        "t/task.yaml:13: fault.steps[0].patch.name: no Deployment 'api' in the app manifests",
        id='fault_target'),
    pytest.param(
        't/task.yaml',
        'rollout_complete: {deployment: web}',
        'rollout_complete: {deployment: api}',
        "t/task.yaml:22: checks.outcome[0].rollout_complete.deployment: no Deployment 'api' in the app "
        'manifests',
        id='check_target'),
    pytest.param(
        't/task.yaml',
        '  causal_service: web',
        '  causal_service: api',
        "t/task.yaml:19: ground_truth.causal_service: 'api' names no object in the app",
        id='causal_unknown'),
    pytest.param(
        't/task.yaml',
        '  causal_service: web\n',
        '',
        't/task.yaml:17: ground_truth.causal_service: required unless category is no_fault',
        id='causal_missing'),
    pytest.param(
        't/task.yaml',
        'schema_version: 1',
        'schema_version: 2',
        't/task.yaml:1: schema_version: unsupported schema_version 2 (this ontrial reads 1)',
        id='schema_version'),
    pytest.param(
        't/task.yaml',
        'id: demo-task',
        'id: Demo_Task',
        "t/task.yaml:2: id: must be a DNS label: lowercase letters, digits and '-', at most 63 characters, got "
        "'Demo_Task'",
        id='bad_id'),
    pytest.param(
        't/task.yaml',
        'budgets: {steps: 10}',
        'budgets: {steps: many}',
        't/task.yaml:24: budgets.steps: input should be a valid integer, unable to parse string as an integer, '
        "got 'many'",
        id='wrong_type'),
    pytest.param(
        't/task.yaml',
        'budgets: {steps: 10}',
        'budgets: {steps: 0}',
        't/task.yaml:24: budgets.steps: input should be greater than 0',
        id='negative_budget'),
    pytest.param(
        't/task.yaml',
        '    - patch:\n        kind: Deployment\n        name: web\n        patch: {spec: {replicas: 3}}\n',
        '    []\n',
        't/task.yaml:10: fault.steps: empty: only no_fault tasks may inject nothing',
        id='no_steps'),
    pytest.param(
        't/task.yaml',
        '  root_cause: [scaled-wrong]',
        '  root_cause: []',
        't/task.yaml:18: ground_truth.root_cause: list should have at least 1 item after validation, not 0',
        id='empty_root_cause'),
    pytest.param(
        't/task.yaml',
        'budgets: {steps: 10}',
        '  invariants: {on_violation: warn}\nbudgets: {steps: 10}',
        "t/task.yaml:24: checks.invariants.on_violation: input should be 'block' or 'flag', got 'warn'",
        id='on_violation'),
    pytest.param(
        't/task.yaml',
        '{name: WebDown, labels: {service: web}}',
        '{name: WebDown, labels: {service: web}, severity: high}',
        't/task.yaml:16: trigger.alert.severity: unknown field (allowed: name, labels, annotations)',
        id='alert_extra'),
    pytest.param(
        't/task.yaml',
        'labels: {service: web}',
        'labels: {service: [web]}',
        't/task.yaml:16: trigger.alert.labels.service: input should be a valid string',
        id='alert_label_type'),
    pytest.param(
        't/task.yaml',
        '    - patch:\n        kind: Deployment\n        name: web\n        patch: {spec: {replicas: 3}}',
        '    - apply: {manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: x, namespace: prod}}}',
        't/task.yaml:11: fault.steps[0].apply.manifest.metadata.namespace: must not be set: each trial gets '
        'its own namespace',
        id='apply_namespace'),
    pytest.param(
        't/task.yaml',
        '    - patch:\n        kind: Deployment\n        name: web\n        patch: {spec: {replicas: 3}}',
        '    - apply: {manifest: {kind: ConfigMap}}',
        't/task.yaml:11: fault.steps[0].apply.manifest: a manifest needs apiVersion, kind and metadata.name',
        id='apply_shape'),
    pytest.param(
        't/task.yaml',
        'causal_service: web}',
        'causal_service: web, cause: x}',
        't/task.yaml:28: reference_solution.diagnosis.cause: unknown field (allowed: root_cause, '
        'causal_service, mitigation, mitigation_applied, evidence, summary)',
        id='ref_diagnosis_extra'),
    pytest.param(
        't/task.yaml',
        '  causal_service: web\n',
        '  causal_service: web\n  service_aliases: {web: web-deploy}\n',
        "t/task.yaml:20: ground_truth.service_aliases.web: input should be a valid list, got 'web-deploy'",
        id='alias_type'),
    pytest.param(
        't/task.yaml',
        '  profiles: [../app/profiles.yaml]\n',
        '  profiles: [../app/profiles.yaml]\n  runbooks: [../app/oncall.md]\n',
        "t/task.yaml:9: app.runbooks[0]: file not found: app/oncall.md",
        id='runbook_missing'),
    pytest.param(
        't/task.yaml',
        '  profiles: [../app/profiles.yaml]\n',
        '  profiles: [../app/profiles.yaml]\n  alert_rules: [../app/alerts.yaml]\n',
        "t/task.yaml:17: trigger.alert.name: no alerting rule named 'WebDown' in app.alert_rules (rules: WebSlow)",
        id='trigger_not_a_rule'),
    pytest.param(
        'app/profiles.yaml',
        'memory: {working_set_mi: 50}',
        'memory: {working_set_mi: 50}\ntelemetry: {calls: [{name: db}]}',
        "app/profiles.yaml:4: telemetry.calls[0].env: one of env, file or default must give the dependency's "
        "host:port",
        id='profile_telemetry'),
]


ALERTS_YAML = """\
groups:
  - name: web
    rules:
      - {alert: WebSlow, expr: vector(1)}
"""


@pytest.mark.parametrize("rel, old, new, expected", BAD_FILES)
def test_bad_file_reports_file_line_field_message(tree, rel, old, new, expected):
    tree.write("app/alerts.yaml", ALERTS_YAML)
    if old is None:
        tree.write(rel, new)
    else:
        tree.edit(rel, old, new)
    with pytest.raises(TaskFileError) as info:
        load_task("t/task.yaml")
    assert str(info.value) == expected
    first = info.value.problems[0]
    assert (info.value.file, info.value.line, info.value.field, info.value.message) == (
        first.file, first.line, first.field, first.message)
    assert "\n" not in str(info.value)


def test_task_file_error_is_a_config_error(tree):
    tree.edit("t/task.yaml", "difficulty: easy", "difficulty: trivial")
    with pytest.raises(ConfigError):
        load_task("t/task.yaml")


def test_missing_task_file(tree):
    with pytest.raises(TaskFileError) as info:
        load_task("t/nope.yaml")
    assert str(info.value) == "t/nope.yaml: file not found"


def test_every_problem_is_collected_in_line_order(tree):
    tree.edit("t/task.yaml", "difficulty: easy", "difficulty: trivial")
    tree.edit("t/task.yaml", "budgets: {steps: 10}", "budgets: {steps: many}")
    tree.edit("t/task.yaml", "  alert: {name: WebDown,", "  alert: {nam: WebDown,")
    task, problems = collect("t/task.yaml")
    assert task is None
    assert [str(p) for p in problems] == [
        "t/task.yaml:5: slices.difficulty: input should be 'easy', 'medium' or 'hard', got 'trivial'",
        "t/task.yaml:16: trigger.alert.nam: unknown field (allowed: name, labels, annotations)",
        "t/task.yaml:16: trigger.alert.name: required field missing",
        "t/task.yaml:24: budgets.steps: input should be a valid integer, unable to parse string as an integer, "
        "got 'many'",
    ]


def test_problems_in_referenced_files_come_after_the_task_files(tree):
    tree.edit("t/task.yaml", "  causal_service: web", "  causal_service: api")
    tree.edit("app/profiles.yaml", "working_set_mi: 50", "working_set_mi: -1")
    _, problems = collect("t/task.yaml")
    assert [str(p) for p in problems] == [
        "t/task.yaml:19: ground_truth.causal_service: 'api' names no object in the app",
        "app/profiles.yaml:3: memory.working_set_mi: must be >= 0, got -1",
    ]


def test_duplicate_ids_in_a_directory(tree):
    tree.write("u/task.yaml", (tree.root / "t/task.yaml").read_text())
    with pytest.raises(TaskFileError) as info:
        load_tasks(".")
    assert str(info.value) == "u/task.yaml:2: id: duplicate task id 'demo-task' (also in t/task.yaml)"


def test_empty_directory(tree, tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(TaskFileError) as info:
        load_tasks("empty")
    assert str(info.value) == "empty: no task.yaml files found"


def test_cli_style_error_has_no_traceback(tree):
    """What `ontrial tasks validate` prints comes from str(): one line, no Python frames."""
    tree.edit("t/task.yaml", "{tool: scale,", "{tool: kubectl_scale,")
    try:
        load_task("t/task.yaml")
    except TaskFileError as exc:
        text = str(exc)
    assert "Traceback" not in text and "pydantic" not in text.lower()
    assert text.startswith("t/task.yaml:27: reference_solution.actions[0].tool: unknown tool 'kubectl_scale'")


def test_a_rule_file_kubesim_would_refuse_is_reported(tree):
    tree.write("app/alerts.yaml", "groups:\n  - name: web\n    rules:\n      - {alert: WebDown, expr: 'sum(('}\n")
    tree.edit("t/task.yaml", "  profiles: [../app/profiles.yaml]\n",
              "  profiles: [../app/profiles.yaml]\n  alert_rules: [../app/alerts.yaml]\n")
    with pytest.raises(TaskFileError) as info:
        load_task("t/task.yaml")
    assert str(info.value).startswith("app/alerts.yaml:1: groups: groups[0].rules[0]: could not parse expression")


def test_rules_and_runbooks_resolve_relative_to_the_task_file(tree):
    tree.write("app/alerts.yaml", ALERTS_YAML.replace("WebSlow", "WebDown"))
    tree.write("app/oncall.md", "# on call\nlook at the pods\n")
    tree.edit("t/task.yaml", "  profiles: [../app/profiles.yaml]\n", "  profiles: [../app/profiles.yaml]\n"
              "  alert_rules: [../app/alerts.yaml]\n  runbooks: [../app/oncall.md]\n")
    task = load_task("t/task.yaml")
    assert task.alert_rule_names() == ["WebDown"]
    assert task.alert_rules() == {"groups": [{"name": "web", "rules": [{"alert": "WebDown", "expr": "vector(1)"}]}]}
    assert task.runbooks == {"oncall": "# on call\nlook at the pods\n"}
    assert task.alerting_service == "web"
    assert {"app/alerts.yaml", "app/oncall.md"} <= {k.replace("../", "") for k in task.referenced_files()}
