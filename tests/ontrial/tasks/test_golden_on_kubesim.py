"""Every golden task round-trips on kubesim through the real trial steps: healthy baseline with
all outcome checks passing, the fault breaks at least one, the reference solution passes."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from ontrial.models.trial import SandboxSettings
from ontrial.tasks import load_tasks
from ontrial.tasks.validate import validate_on_cluster

TASKS = Path(__file__).resolve().parents[3] / "tasks"
GOLDEN = load_tasks(TASKS)


@pytest.fixture(scope="module")
def sim() -> Iterator[Any]:
    embedded = pytest.importorskip("kubesim.embedded", reason="kubesim is not importable")
    with embedded.start(time_scale=0) as server:
        yield server


@pytest.mark.parametrize("task", GOLDEN, ids=[t.id for t in GOLDEN])
async def test_golden_task_round_trip(sim, task, tmp_path):
    settings = SandboxSettings(kubeconfig=sim.kubeconfig_path, kind="kubesim")
    problems = await validate_on_cluster(task, settings, artifacts_root=str(tmp_path))
    assert [str(p) for p in problems] == []


async def test_a_fault_that_breaks_nothing_is_reported(sim, tmp_path):
    """A task whose 'fault' is harmless (an existing tag) must be caught: no check ever fails."""
    shutil.copytree(TASKS, tmp_path / "tasks")
    task_file = tmp_path / "tasks" / "bad-image-rollout" / "task.yaml"
    task_file.write_text(task_file.read_text().replace("image: ferrywise/berths:2.4.0",
                                                       "image: ferrywise/berths:2.3.0"))
    (task,) = load_tasks(task_file)
    settings = SandboxSettings(kubeconfig=sim.kubeconfig_path, kind="kubesim")
    problems = [str(p) for p in await validate_on_cluster(task, settings, artifacts_root=str(tmp_path / "a"))]
    assert f"{task_file}:19: fault.steps: every outcome check still passes after the fault" in problems
