"""`ontrial tasks validate`: everything that can be checked about a task without a cluster; the
cluster part lives in ``ontrial.tasks.roundtrip`` (re-exported here).

``validate_schema`` is pure (reads files only). Beyond the loader it checks that nothing an agent
can see gives the answer away (``ontrial.tasks.scan``), that a fault task's checks would catch a
deleted or scaled-to-zero service, that the reference diagnosis earns full marks, and that every
image the app runs has a workload profile.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..graders.diagnosis import score_diagnosis
from ..graders.localization import score_localization
from .loader import collect_many
from .model import Task
from .problems import TaskProblem
from .roundtrip import TaskValidation, validate_on_cluster, validate_task, validate_tasks
from .scan import scan_task
from .yamlpos import format_path, load_located

__all__ = ["TaskValidation", "lint_task", "validate_on_cluster", "validate_schema", "validate_task", "validate_tasks"]


def validate_schema(paths: Iterable[str | os.PathLike[str]]) -> list[TaskProblem]:
    """Every problem in the given task files/directories; an empty list means all valid."""
    problems: list[TaskProblem] = []
    seen: dict[str, Path | None] = {}
    for path in paths:
        tasks, found = collect_many(path)
        problems += found
        for task in tasks:
            where = str(task.source_path)
            if task.id in seen:
                problems.append(TaskProblem(where, _line(task, ("id",)), "id",
                                            f"duplicate task id {task.id!r} (also in {seen[task.id]})"))
                continue
            seen[task.id] = task.source_path
            problems += [TaskProblem(where, _line(task, p), format_path(p), m) for p, m in lint_task(task)]
    return problems


def _line(task: Task, path: tuple) -> int | None:
    try:
        return load_located(task.source_path.read_text(encoding="utf-8")).line_of(path)
    except Exception:  # the file loaded a moment ago; a race here only loses the line number
        return None


def lint_task(task: Task) -> list[tuple[tuple, str]]:
    """Findings about a loaded task: answer leaks, reference consistency, image coverage."""
    return [*_leaks(task), *_liveness_checks(task), *_reference_scores(task), *_images(task)]


# -- answer leaks --------------------------------------------------------------------------------

def _leaks(task: Task) -> list[tuple[tuple, str]]:
    """Contamination (``ontrial.tasks.scan``) as lint findings; text outside the task file names its file."""
    out = []
    for finding in scan_task(task):
        if finding.file == str(task.source_path):
            out.append((finding.path, f"visible to the agent: contains {finding.what}"))
        else:
            out.append((finding.path, f"visible to the agent: {finding.file}: {finding.field} contains {finding.what}"))
    return out


def _liveness_checks(task: Task) -> list[tuple[tuple, str]]:
    """A fault task must judge the service alive, or deleting it / scaling it to zero would pass."""
    if task.category == "no_fault":
        return []
    kinds = {c.type for c in task.checks.outcome}
    if kinds & {"rollout_complete", "replicas_at_least"} or any(
            c.type == "pods_ready" and c.spec.min >= 1 for c in task.checks.outcome):
        return []
    return [(("checks", "outcome"), "no rollout_complete, replicas_at_least or pods_ready check: deleting the "
                                    "service or scaling it to zero would pass")]


# -- reference consistency and image coverage ----------------------------------------------------

def _reference_scores(task: Task) -> list[tuple[tuple, str]]:
    ref = task.reference_solution
    if ref is None:
        return []
    out = []
    diagnosis = score_diagnosis(task.ground_truth.root_cause, ref.diagnosis)
    if diagnosis.score < 1.0:
        out.append((("reference_solution", "diagnosis", "root_cause"),
                    f"the reference diagnosis scores {diagnosis.score:g} against ground_truth.root_cause"))
    if score_localization(task.ground_truth, ref.diagnosis).score < 1.0:
        out.append((("reference_solution", "diagnosis", "causal_service"),
                    "the reference diagnosis does not name ground_truth.causal_service"))
    return out


def _images(task: Task) -> list[tuple[tuple, str]]:
    """Every container image of the app must resolve in kubesim's registry (builtin + task profiles)."""
    try:
        from kubesim.workloads.profiles import ProfileRegistry
    except ImportError:
        return []
    try:
        registry = ProfileRegistry.builtin()
    except (OSError, ValueError):  # no built-in catalogue available: judge by the task's profiles alone
        registry = ProfileRegistry()
    for profile in task.profiles():
        registry.register(profile)
    out = []
    for obj in task.app_objects():
        for image in _container_images(obj):
            if registry.lookup(image) is None:
                out.append((("app", "profiles"), f"image {image} of {obj['kind']}/{obj['metadata']['name']} "
                                                 "has no workload profile with that tag"))
    return out


def _container_images(obj: dict[str, Any]) -> list[str]:
    spec = obj.get("spec") or {}
    if obj.get("kind") == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec") or {})
    pod_spec = spec if obj.get("kind") == "Pod" else ((spec.get("template") or {}).get("spec") or {})
    containers = [*(pod_spec.get("initContainers") or []), *(pod_spec.get("containers") or [])]
    return [c["image"] for c in containers if isinstance(c, dict) and isinstance(c.get("image"), str)]
