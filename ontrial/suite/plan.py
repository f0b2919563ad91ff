"""Resolve a suite's task paths into a plan: task ids, files, slices, and the versions the run depends on.

Done once when a suite run starts, so the run's numbers belong to the task files as they were then.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from .. import __version__ as harness_version
from ..errors import ConfigError
from ..graders import GRADER_VERSION
from ..models.suite import PlannedTask, RunVersions, SuitePlan
from ..models.trial import AgentSpec
from ..tasks import Task, load_tasks, task_hash


def task_set_hash(hashes: dict[str, str]) -> str:
    """One hash over every (task id, content hash): equal iff the two runs saw the same task files."""
    digest = hashlib.sha256()
    for task_id, content in sorted(hashes.items()):
        digest.update(f"{task_id}\0{content}\n".encode())
    return "sha256:" + digest.hexdigest()[:16]


def load_suite_tasks(paths: Iterable[str]) -> list[Task]:
    """Every task under ``paths`` (files or directories); a task id may appear once."""
    tasks: list[Task] = []
    seen: dict[str, str] = {}
    for path in paths:
        if not Path(path).exists():
            raise ConfigError(f"{path}: no such task file or directory")
        for task in load_tasks(path):
            source = str(task.source_path)
            if task.id in seen and seen[task.id] != source:
                raise ConfigError(f"{source}: duplicate task id {task.id!r} (also in {seen[task.id]})")
            if task.id not in seen:
                seen[task.id] = source
                tasks.append(task)
    if not tasks:
        raise ConfigError("the suite has no tasks")
    return tasks


def plan_for(tasks: Sequence[Task], agent: AgentSpec | None = None) -> SuitePlan:
    hashes = {task.id: task_hash(task) for task in tasks}
    planned = [PlannedTask(task_id=task.id, task_file=str(Path(str(task.source_path)).resolve()),
                           category=str(task.category),
                           slices={k: v for k, v in task.slice_labels.items() if k != "category"})
               for task in tasks]
    versions = RunVersions(harness=harness_version, grader=GRADER_VERSION, task_set_hash=task_set_hash(hashes),
                           task_versions={task.id: task.version for task in tasks}, task_hashes=hashes, agent=agent)
    return SuitePlan(tasks=planned, versions=versions)


def plan_suite(paths: Iterable[str], agent: AgentSpec | None = None) -> SuitePlan:
    """Load the suite's tasks and resolve them into a plan (raises ConfigError / TaskFileError)."""
    return plan_for(load_suite_tasks(paths), agent)
