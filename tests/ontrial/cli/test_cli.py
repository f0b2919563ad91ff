"""The ``ontrial`` command as a user runs it: verdict tables, gates, exit codes, one-line input errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
TASKS = ROOT / "tests" / "workflows" / "fixtures" / "tasks"


def ontrial(*args: str, cwd: Path, timeout: float = 240, env: dict[str, str] | None = None):
    return subprocess.run([sys.executable, "-m", "ontrial.cli.main", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0]


def test_run_on_a_local_stack_gates_the_second_agent_against_the_first(tmp_path):
    proc = ontrial("run", str(TASKS / "web-bad-image"), "--agent", "reference", "--agent", "noop", "--trials", "2",
                   "--concurrency", "2", "--artifacts", str(tmp_path / "artifacts"), "--run-id", "cli-test",
                   cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the noop agent regressed: the gate failed
    rows = [line.split() for line in proc.stdout.splitlines()]
    assert ["web-bad-image", "PP", "100%", "FF", "0%", "pass→fail"] in rows
    assert "gate cli-test-reference: PASS" in proc.stdout
    assert "gate cli-test-noop against cli-test-reference: FAIL" in proc.stdout
    assert "pass→fail: web-bad-image (trial 0: failed" in proc.stdout
    assert "pass^1 100.0%" in proc.stdout and "pass^1 0.0%" in proc.stdout
    assert "4/4 trials (100%)" in proc.stderr and "[####" in proc.stderr  # the progress bar
    for run in ("cli-test-reference", "cli-test-noop"):
        reports = tmp_path / "artifacts" / "runs" / run
        assert {p.name for p in reports.iterdir()} >= {"report.json", "report.md", "report.junit.xml"}
    assert (tmp_path / ".ontrial" / "results.db").is_file()


def test_run_on_given_temporal_and_cluster_is_inconclusive_on_infra_errors(temporal_env, trial_cluster, tmp_path):
    address = temporal_env.client.service_client.config.target_host
    proc = ontrial("run", str(TASKS / "web-never-healthy"), "--temporal-address", address,
                   "--kubeconfig", trial_cluster.kubeconfig_path, "--sandbox-kind", "kubesim",
                   "--task-queue", f"cli-{tmp_path.name}",
                   "--artifacts", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "web-never-healthy  I " in proc.stdout
    assert "INCONCLUSIVE" in proc.stdout and "infra error rate 100.0% above 10%" in proc.stdout


def test_run_with_a_broken_task_file_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "app").symlink_to(TASKS / "app")  # the task's ../app references still resolve
    task = tmp_path / "broken" / "task.yaml"
    task.parent.mkdir()
    task.write_text((TASKS / "web-bad-image" / "task.yaml").read_text().replace("budgets: {steps: 8",
                                                                                 "budgets: {steps: many"))
    proc = ontrial("run", str(task), cwd=tmp_path)
    assert_one_line_error(proc, "task.yaml:", "budgets.steps")


@pytest.mark.parametrize("args, needle", [
    (["run", "does/not/exist"], "does/not/exist"),
    (["run", str(TASKS / "web-bad-image"), "--agent", "nosuch"], "--agent nosuch"),
    (["run", str(TASKS / "web-bad-image"), "--trials", "0"], "--trials"),
    (["run", str(TASKS / "web-bad-image"), "--kubeconfig", "/no/such/kubeconfig"], "/no/such/kubeconfig"),
    (["reap"], "--kubeconfig"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, needle):
    assert_one_line_error(ontrial(*args, cwd=tmp_path, env={"ONTRIAL_KUBECONFIG": ""}), needle)


def test_tasks_validate(tmp_path):
    good = ontrial("tasks", "validate", str(TASKS / "web-bad-image"), str(TASKS / "web-tight-wall"), cwd=tmp_path)
    assert good.returncode == 0 and "2 task(s) valid" in good.stdout
    bad = ontrial("tasks", "validate", str(TASKS / "web-never-healthy"), cwd=tmp_path)
    assert bad.returncode == 2
    assert "web-never-healthy/task.yaml:" in bad.stderr and "trialapp/web:0.9" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_tasks_scan_names_each_leak_and_passes_the_golden_set(tmp_path):
    leaky = ontrial("tasks", "scan", str(ROOT / "tests" / "ontrial" / "tasks" / "fixtures" / "contaminated"),
                    cwd=tmp_path)
    assert leaky.returncode == 2 and "Traceback" not in leaky.stderr
    lines = leaky.stdout.splitlines()
    assert len(lines) == 7, leaky.stdout
    assert any("app/runbook.md: line 4: contains mitigation phrase 'roll the checkout deployment'" in line
               for line in lines)
    assert "7 finding(s)" in leaky.stderr
    clean = ontrial("tasks", "scan", str(ROOT / "tasks"), cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert clean.stdout.startswith("ok:")


def test_reap_deletes_nothing_fresh(trial_cluster, tmp_path):
    proc = ontrial("reap", "--kubeconfig", trial_cluster.kubeconfig_path, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "expired namespace(s)" in proc.stderr


def test_tasks_validate_on_a_cluster_runs_the_round_trip(trial_cluster, tmp_path):
    proc = ontrial("tasks", "validate", str(TASKS / "web-bad-image"), "--on-cluster", "--reference-trials", "2",
                   "--kubeconfig", trial_cluster.kubeconfig_path, "--sandbox-kind", "kubesim", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "web-bad-image: ok (reference 2/2, noop failed" in proc.stdout
