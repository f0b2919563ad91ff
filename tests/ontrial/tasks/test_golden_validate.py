"""The CI run of `ontrial tasks validate` over tasks/: every golden task, on one kubesim.

For each task: the app deploys healthy with every outcome check passing, the fault breaks at
least one (a no-fault task keeps them all), the trigger alert fires where the cluster has
telemetry, the reference solution passes 5 of 5 independent trials, and the noop agent fails.
kubesim runs in its own process (frozen clock, the trials advance it) so the API server and the
harness use separate cores; trials of different tasks run concurrently on it.
``ONTRIAL_VALIDATE_TRIALS`` lowers the reference trial count for quick local runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from ontrial.models.trial import SandboxSettings
from ontrial.tasks import load_tasks
from ontrial.tasks.roundtrip import summarize, validate_task, validate_tasks

ROOT = Path(__file__).resolve().parents[3]
TASKS = ROOT / "tasks"
TRIALS = int(os.environ.get("ONTRIAL_VALIDATE_TRIALS", "5"))
CONCURRENCY = 4


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[SandboxSettings, bool]]:
    """``python -m kubesim serve`` with a frozen clock; (settings, whether kubesim has telemetry)."""
    pytest.importorskip("kubesim.embedded", reason="kubesim is not importable")
    kubeconfig = tmp_path_factory.mktemp("kubesim") / "kubeconfig.yaml"
    proc = subprocess.Popen([sys.executable, "-m", "kubesim", "serve", "--time-scale", "0", "--kubeconfig",
                             str(kubeconfig)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first = proc.stdout.readline()
        assert "kubesim serving" in first, f"kubesim did not start: {first}{proc.stdout.read()}"
        yield SandboxSettings(kubeconfig=str(kubeconfig), kind="kubesim"), has_telemetry()
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def has_telemetry() -> bool:
    try:
        from kubesim.build import build_cluster
    except ImportError:
        return False
    return getattr(build_cluster(time_scale=0), "telemetry", None) is not None


@pytest.fixture(scope="module")
def cluster(server) -> SandboxSettings:
    return server[0]


async def test_every_golden_task_validates(server, capsys):
    cluster, telemetry = server
    tasks = load_tasks(TASKS)
    results = await validate_tasks(tasks, cluster, reference_trials=TRIALS, concurrency=CONCURRENCY)
    with capsys.disabled():
        print()
        for result in results:
            print("  " + result.line())
        print(f"  {summarize(results)}")
    problems = [str(p) for r in results for p in r.problems]
    assert problems == []
    assert all(r.reference_passed == r.reference_trials == TRIALS for r in results)
    assert all(r.noop_passed is False for r in results)
    if telemetry:
        assert [r.task_id for r in results if r.alert != "fired"] == []


async def test_a_fault_that_breaks_nothing_is_reported(cluster, tmp_path):
    """A task whose 'fault' is harmless (an existing tag) is caught: no check ever fails."""
    shutil.copytree(TASKS, tmp_path / "tasks")
    task_file = tmp_path / "tasks" / "bad-image-rollout" / "task.yaml"
    task_file.write_text(task_file.read_text().replace("image: ferrywise/berths:2.4.0",
                                                       "image: ferrywise/berths:2.3.0"))
    (task,) = load_tasks(task_file)
    result = await validate_task(task, cluster, reference_trials=1)
    assert f"{task_file}:21: fault.steps: every outcome check still passes after the fault" in [
        str(p) for p in result.problems]


async def test_a_task_the_noop_agent_passes_is_reported(cluster, tmp_path):
    """A no-fault task that does not require a diagnosis rewards doing nothing: validation says so."""
    shutil.copytree(TASKS, tmp_path / "tasks")
    task_file = tmp_path / "tasks" / "noisy-cpu-alert" / "task.yaml"
    task_file.write_text(task_file.read_text().replace("require: [mitigation, safety, diagnosis]",
                                                       "require: [mitigation, safety]"))
    (task,) = load_tasks(task_file)
    result = await validate_task(task, cluster, reference_trials=1)
    assert result.noop_passed is True
    assert [p.message for p in result.problems] == [
        "the noop agent passes this task: the checks or the pass rule do not require anything to be done"]


async def test_a_reference_solution_that_does_not_fix_is_reported(cluster, tmp_path):
    shutil.copytree(TASKS, tmp_path / "tasks")
    task_file = tmp_path / "tasks" / "store-scaled-to-zero" / "task.yaml"
    task_file.write_text(task_file.read_text().replace(
        "- {tool: scale, args: {kind: Deployment, name: deckstore, replicas: 1}}",
        "- {tool: get_events, args: {}}"))
    (task,) = load_tasks(task_file)
    result = await validate_task(task, cluster, reference_trials=3)
    assert not result.ok and result.reference_trials == 1 and result.noop_passed is None
    assert any(p.message.startswith("the reference solution does not pass: mitigation: check "
                                    "replicas_at_least(deployment=deckstore, n=1) failed") for p in result.problems)
