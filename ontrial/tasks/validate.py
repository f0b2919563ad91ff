"""`ontrial tasks validate`: everything that can be checked about a task without a cluster, then
(optionally) the cluster round trip: healthy baseline → fault makes the checks fail → the
reference solution makes them pass.

``validate_schema`` is pure (reads files only). Beyond the loader it checks that nothing an agent
can see gives the answer away, that the reference diagnosis earns full marks, and that every
image the app runs has a workload profile.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..graders.diagnosis import mentions, normalize_label, score_diagnosis
from ..graders.localization import score_localization
from .loader import collect_many
from .model import Task
from .problems import TaskProblem
from .yamlpos import format_path, load_located

if TYPE_CHECKING:
    from ..models.trial import SandboxSettings

MIN_LEAK_LABEL = 5  # shorter labels ("oom") are ordinary words in logs and names


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
    return [*_leaks(task), *_reference_scores(task), *_images(task)]


# -- answer leaks --------------------------------------------------------------------------------

def _strings(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield path + (str(key),), str(key)
            yield from _strings(item, path + (str(key),))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, path + (index,))
    elif isinstance(value, str):
        yield path, value


def _visible(task: Task) -> Iterator[tuple[tuple, str, str]]:
    """(task-file path, where, text) for every string an agent can observe."""
    for obj in task.app_objects():
        name = f"{obj.get('kind')}/{(obj.get('metadata') or {}).get('name')}"
        for inner, text in _strings(obj):
            yield ("app", "manifests"), f"{name} {format_path(inner)}", text
    for index, step in enumerate(task.fault.steps):
        action, spec = step.action
        for inner, text in _strings(spec.model_dump()):
            yield ("fault", "steps", index, action), format_path(inner), text
    for inner, text in _strings(task.trigger.alert.model_dump()):
        yield ("trigger", "alert") + inner, format_path(inner), text


def _leaks(task: Task) -> list[tuple[tuple, str]]:
    labels = [l for l in task.ground_truth.root_cause if len(normalize_label(l)) >= MIN_LEAK_LABEL]
    out = []
    for path, where, text in _visible(task):
        if mentions(text, task.id):
            out.append((path, f"visible to the agent: {where} contains the task id"))
            continue
        hit = next((l for l in labels if mentions(text, l)), None)
        if hit:
            out.append((path, f"visible to the agent: {where} contains root-cause label {hit!r}"))
    return out


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


# -- the cluster round trip ----------------------------------------------------------------------

async def validate_on_cluster(task: Task, settings: SandboxSettings, *, artifacts_root: str | None = None,
                              suite_id: str = "validate") -> list[TaskProblem]:
    """Run the task for real with the reference agent, through the same trial steps as a suite:

    the app deploys and becomes healthy with every outcome check passing → after the fault at
    least one check fails → after the reference solution the trial passes. Returns what broke;
    cluster trouble (unreachable API, transient errors) raises InfraError as in a trial.
    """
    from .. import steps
    from ..errors import InfraError
    from ..models.trial import AgentRun, AgentRunStatus, AgentSpec, TrialSpec

    where = str(task.source_path)

    def problem(path: tuple, message: str) -> TaskProblem:
        return TaskProblem(where, _line(task, path), format_path(path), message)

    if task.reference_solution is None:
        return [problem(("reference_solution",), "required to validate the task on a cluster")]
    with tempfile.TemporaryDirectory(prefix="ontrial-validate-") as scratch:
        spec = TrialSpec(suite_id=suite_id, task_id=task.id, task_file=str(Path(where).resolve()),
                         agent=AgentSpec(kind="reference"), sandbox=settings,
                         artifacts_root=artifacts_root or scratch)
        try:
            sandbox = await steps.create_sandbox(spec)
        except InfraError as exc:
            if exc.transient:
                raise
            return [problem(("app",), f"the app did not become healthy: {exc}")]
        try:
            return await _round_trip(spec, sandbox, problem, AgentRun(status=AgentRunStatus.completed))
        finally:
            await steps.teardown(spec, sandbox.namespace)


async def _round_trip(spec: Any, sandbox: Any, problem: Any, idle: Any) -> list[TaskProblem]:
    from .. import steps
    from ..models.trial import AgentRunStatus

    baseline = await steps.grade(spec, sandbox, idle)
    out = [problem(("checks", "outcome"), f"fails on the healthy app: {c.name}: {c.detail}")
           for c in baseline.checks if not c.passed]
    fault = await steps.inject_fault(spec, sandbox)
    faulted = await steps.grade(spec, sandbox, idle)
    if faulted.checks and faulted.mitigation_passed:
        out.append(problem(("fault", "steps"), "every outcome check still passes after the fault"))
    run = await steps.run_agent(spec, sandbox, fault, heartbeat=lambda _: None)
    if run.status is not AgentRunStatus.completed:
        out.append(problem(("reference_solution",), f"the reference agent ended {run.status.value}: {run.reason}"))
    final = await steps.grade(spec, sandbox, run)
    if not final.passed:
        out.append(problem(("reference_solution",), f"the reference solution does not pass: {final.reason}"))
    return out
