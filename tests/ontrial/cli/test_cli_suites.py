"""The suite commands as a user runs them against a results store: ``gate``, ``runs list``, ``report``,
``override``, ``baseline``, ``regrade``, ``rerun`` and ``schedule nightly`` — verdicts, exit codes
(0 pass, 1 gate failed, 2 bad input, 3 inconclusive) and one-line refusals."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from test_cli import TASKS, assert_one_line_error, ontrial

from ontrial.results import ResultsStore


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    """A directory whose results store holds a reference run and a noop run gated against it."""
    home = tmp_path_factory.mktemp("stored")
    proc = ontrial("run", str(TASKS / "web-scaled-down"), "--agent", "reference", "--agent", "noop", "--trials", "2",
                   "--concurrency", "2", "--artifacts", str(home / "artifacts"), "--run-id", "r", cwd=home)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return home


def test_gate_recomputes_from_the_store_with_any_baseline(stored):
    failed = ontrial("gate", "r-noop", cwd=stored)
    assert failed.returncode == 1 and "gate r-noop against r-reference: FAIL" in failed.stdout
    assert "pass→fail: web-scaled-down" in failed.stdout
    against_itself = ontrial("gate", "r-noop", "--baseline", "r-noop", cwd=stored)
    assert against_itself.returncode == 0 and ": PASS" in against_itself.stdout
    assert_one_line_error(ontrial("gate", "no-such-run", cwd=stored), "no-such-run")


def test_runs_list_filters_by_suite_agent_and_time(stored):
    listing = ontrial("runs", "list", "--suite", "web-scaled-down", cwd=stored)
    assert listing.returncode == 0
    names = [line.split()[0] for line in listing.stdout.splitlines()[2:]]
    assert sorted(names) == ["r-noop", "r-reference"]
    only_noop = ontrial("runs", "list", "--agent", "noop", "--since", "1h", cwd=stored)
    assert [line.split()[0] for line in only_noop.stdout.splitlines()[2:]] == ["r-noop"]
    future = ontrial("runs", "list", "--since", "2999-01-01", cwd=stored)
    assert future.stdout.splitlines()[2:] == []
    assert_one_line_error(ontrial("runs", "list", "--since", "last tuesday", cwd=stored), "--since")


def test_report_in_every_format(stored):
    junit = ontrial("report", "r-noop", "--format", "junit", cwd=stored)
    case = ET.fromstring(junit.stdout).find("testcase")
    assert case.get("name") == "web-scaled-down" and "regression" in case.find("failure").get("message")
    assert '"run_id": "r-noop"' in ontrial("report", "r-noop", "--format", "json", cwd=stored).stdout
    assert "## Gate: **fail**" in ontrial("report", "r-noop", cwd=stored).stdout


def test_override_then_promote_only_what_may_be_promoted(stored, tmp_path):
    refused = ontrial("baseline", "promote", "r-noop", "--by", "x", "--reason", "y", cwd=stored)
    assert_one_line_error(refused, "only a passing run or an accepted override")
    assert_one_line_error(ontrial("override", "r-reference", "--by", "a", "--reason", "b", cwd=stored),
                          "only a failed gate")
    assert_one_line_error(ontrial("override", "r-noop", "--by", " ", "--reason", "b", cwd=stored), "approver")
    accepted = ontrial("override", "r-noop", "--by", "alice", "--reason", "known fixture change", cwd=stored)
    assert accepted.returncode == 0, accepted.stderr
    assert "overridden from fail by alice" in accepted.stdout and "results store" in accepted.stderr
    assert ontrial("gate", "r-noop", cwd=stored).returncode == 0  # the override stands while the gate fails
    assert_one_line_error(ontrial("override", "r-noop", "--by", "bob", "--reason", "again", cwd=stored),
                          "already overridden by alice")
    assert ontrial("baseline", "promote", "r-reference", "--by", "ci", "--reason", "green", cwd=stored).returncode == 0
    assert ontrial("baseline", "show", "web-scaled-down", cwd=stored).stdout.startswith("r-reference")
    store = ResultsStore(f"sqlite:///{stored}/.ontrial/results.db")
    assert store.get("r-noop").gate.override.reason == "known fixture change"


def test_regrade_uses_the_stored_evidence_and_a_changed_task(stored, tmp_path):
    unchanged = ontrial("regrade", "r-reference", cwd=stored)
    assert unchanged.returncode == 0, unchanged.stdout + unchanged.stderr
    rows = [line.split()[1:3] for line in unchanged.stdout.splitlines()[2:4]]
    assert rows == [["passed", "passed"], ["passed", "passed"]]
    assert "saved as run r-reference-regrade-" in unchanged.stderr
    (tmp_path / "app").symlink_to(TASKS / "app")
    (tmp_path / "changed").mkdir()
    text = (TASKS / "web-scaled-down" / "task.yaml").read_text()
    (tmp_path / "changed" / "task.yaml").write_text(text.replace(
        "    - rollout_complete: {deployment: web}\n",
        "    - rollout_complete: {deployment: web}\n    - exists: {kind: Service, name: web}\n"))
    changed = ontrial("regrade", "r-reference", "--tasks", str(tmp_path / "changed"), cwd=stored)
    assert changed.returncode in (0, 1), changed.stdout + changed.stderr  # gated like the original run
    assert [line.split()[1:3] for line in changed.stdout.splitlines()[2:4]] == [["passed", "failed"]] * 2
    assert "checks added since the run, not evaluated: exists(" in changed.stdout


def test_rerun_starts_new_trials_for_the_same_spec(stored):
    proc = ontrial("rerun", "r-noop", "--trial", "r-noop/web-scaled-down/1", cwd=stored)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[2].split()[:4] == ["web-scaled-down", "1", "failed", "failed"]
    [derived] = [r for r in ResultsStore(f"sqlite:///{stored}/.ontrial/results.db").runs(suite="web-scaled-down:rerun")]
    assert derived.run_id.startswith("r-noop-rerun-") and derived.gate == "report_only"
    assert_one_line_error(ontrial("rerun", "r-noop", "--trial", "r-noop/nope/0", cwd=stored), "--trial r-noop/nope/0")


async def test_schedule_nightly_creates_then_updates_a_schedule(temporal_env, tmp_path):
    client = temporal_env.client
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    name = f"n{uuid.uuid4().hex[:6]}"
    args = ["schedule", "nightly", str(TASKS / "web-scaled-down"), "--temporal-address",
            client.service_client.config.target_host, "--kubeconfig", str(kubeconfig), "--suite", name,
            "--agent", "noop", "--trials", "3", "--task-queue", f"nobody-{name}"]
    created = ontrial(*args, "--cron", "0 2 * * *", cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    assert f"created schedule nightly-{name}" in created.stdout and "02:00 UTC" in created.stdout
    updated = ontrial(*args, "--cron", "30 3 * * 1-5", "--trigger", cwd=tmp_path)
    assert updated.returncode == 0 and f"updated schedule nightly-{name}" in updated.stdout
    assert "03:30 UTC" in updated.stdout
    described = await client.get_schedule_handle(f"nightly-{name}").describe()
    assert described.schedule.action.workflow == "SuiteWorkflow"
    started = []
    for _ in range(100):  # the triggered run (visibility lags a little)
        started = [w async for w in client.list_workflows(f'WorkflowType = "SuiteWorkflow" AND '
                                                          f'WorkflowId STARTS_WITH "nightly-{name}-"')]
        if started:
            break
        await asyncio.sleep(0.1)
    assert len(started) == 1
    await client.get_workflow_handle(started[0].id).terminate("test over")
    await client.get_schedule_handle(f"nightly-{name}").delete()
    assert_one_line_error(ontrial(*args, "--cron", "every night", cwd=tmp_path), "--cron")
