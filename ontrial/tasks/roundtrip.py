"""`ontrial tasks validate` on a cluster: prove each task behaves as its file claims.

For one task, through the same trial steps a suite runs:

1. the round trip — the app deploys healthy with every outcome check passing; after the fault
   at least one check fails (a no-fault task: they all keep passing) and, where the cluster has
   telemetry and the task alerting rules, the trigger alert fires within its bound; the
   reference solution then makes the trial pass;
2. the reference agent passes ``reference_trials`` independent trials (the round trip is the first);
3. the noop agent's trial fails (it fixes nothing and concludes nothing).

Tasks may run concurrently on one kubesim: each trial has its own namespace, and the shared
simulated clock only ever makes more time pass for a trial than it asked for, which a sound task
tolerates (that is part of what the repeated reference trials check).
"""

from __future__ import annotations

import asyncio
import secrets
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..models.trial import AgentRun, AgentRunStatus, AgentSpec, Grade, SandboxSettings, TrialSpec
from .alertwatch import AlertWatch
from .model import Task
from .problems import TaskProblem
from .yamlpos import format_path, load_located

FAULTED_SETTLE_SECONDS = 30.0  # the faulted state never converges: do not wait the full settle window
REFERENCE_TRIALS = 5


@dataclass(frozen=True)
class TaskValidation:
    """What validating one task on a cluster found. ``problems`` empty means the task is sound."""

    task_id: str
    category: str
    problems: tuple[TaskProblem, ...] = ()
    reference_passed: int = 0
    reference_trials: int = 0
    noop_passed: bool | None = None  # None: the noop trial did not run
    alert: str = "not checked"  # "fired" | "did not fire" | "not checked (<why>)"
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    def line(self) -> str:
        """One line for a progress listing: ``id: ok (reference 5/5, noop failed, alert fired, 7.1s)``."""
        noop = {None: "noop not run", True: "noop PASSED", False: "noop failed"}[self.noop_passed]
        state = "ok" if self.ok else f"{len(self.problems)} problem(s)"
        return (f"{self.task_id}: {state} (reference {self.reference_passed}/{self.reference_trials}, {noop}, "
                f"alert {self.alert}, {self.seconds:.1f}s)")


@dataclass
class _Context:
    task: Task
    settings: SandboxSettings
    artifacts_root: str
    suite_id: str
    problems: list[TaskProblem] = field(default_factory=list)

    def problem(self, path: tuple, message: str) -> TaskProblem:
        where = str(self.task.source_path)
        found = TaskProblem(where, _line(self.task, path), format_path(path), message)
        self.problems.append(found)
        return found

    def spec(self, agent: str, index: int, settle: float | None = None) -> TrialSpec:
        sandbox = self.settings if settle is None else self.settings.model_copy(update={"settle_seconds": settle})
        return TrialSpec(suite_id=self.suite_id, task_id=self.task.id, trial_index=index,
                         task_file=str(Path(str(self.task.source_path)).resolve()), agent=AgentSpec(kind=agent),
                         sandbox=sandbox, artifacts_root=self.artifacts_root)


def _line(task: Task, path: tuple) -> int | None:
    try:
        return load_located(Path(str(task.source_path)).read_text(encoding="utf-8")).line_of(path)
    except Exception:  # noqa: BLE001 - the file loaded a moment ago; a race here only loses the line
        return None


def _idle() -> AgentRun:
    return AgentRun(status=AgentRunStatus.completed)


# -- the round trip ---------------------------------------------------------------------------------

async def _round_trip(ctx: _Context, watch_alerts: bool) -> tuple[bool, str]:
    """Trial 0 with the reference agent; returns (passed, alert verdict)."""
    from .. import steps
    from ..errors import InfraError

    spec = ctx.spec("reference", 0)
    try:
        sandbox = await steps.create_sandbox(spec)
    except InfraError as exc:
        if exc.transient:
            raise
        ctx.problem(("app",), f"the app did not become healthy: {exc}")
        return False, "not checked (no sandbox)"
    try:
        watch = await AlertWatch.start(ctx.task, spec, sandbox.namespace) if watch_alerts else None
        alert = "not checked (disabled)" if watch is None else watch.unavailable or ""
        baseline = await steps.grade(spec, sandbox, _idle())
        for check in baseline.checks:
            if not check.passed:
                ctx.problem(("checks", "outcome"), f"fails on the healthy app: {check.name}: {check.detail}")
        fault = await steps.inject_fault(spec, sandbox, await_trigger=False)
        faulted = await steps.grade(ctx.spec("reference", 0, FAULTED_SETTLE_SECONDS), sandbox, _idle())
        if ctx.task.category == "no_fault":
            for check in faulted.checks:
                if not check.passed:
                    ctx.problem(("fault", "steps"), f"a no-fault task broke the app: {check.name}: {check.detail}")
        elif faulted.checks and faulted.mitigation_passed:
            ctx.problem(("fault", "steps"), "every outcome check still passes after the fault")
        if watch is not None and not watch.unavailable:
            fired = await watch.wait_firing()
            alert = "fired" if fired else "did not fire"
            if not fired:
                ctx.problem(("trigger", "alert", "name"), f"alert {ctx.task.trigger.alert.name} did not fire within "
                            f"{ctx.task.trigger.fire_within_seconds:g}s of the fault" + watch.seen_note())
        run = await steps.run_agent(spec, sandbox, fault, heartbeat=lambda _: None)
        if run.status is not AgentRunStatus.completed:
            ctx.problem(("reference_solution",), f"the reference agent ended {run.status.value}: {run.reason}")
        final = await steps.grade(spec, sandbox, run)
        if not final.passed:
            ctx.problem(("reference_solution",), f"the reference solution does not pass: {final.reason}")
        return final.passed, alert
    finally:
        await steps.teardown(spec, sandbox.namespace)


# -- plain trials -------------------------------------------------------------------------------------

async def run_trial(spec: TrialSpec) -> Grade:
    """One whole trial through the plain steps (create → inject → agent → grade → teardown)."""
    from .. import steps

    sandbox = await steps.create_sandbox(spec)
    try:
        fault = await steps.inject_fault(spec, sandbox, await_trigger=False)
        run = await steps.run_agent(spec, sandbox, fault, heartbeat=lambda _: None)
        return await steps.grade(spec, sandbox, run)
    finally:
        await steps.teardown(spec, sandbox.namespace)


# -- one task, many tasks -----------------------------------------------------------------------------

async def validate_task(task: Task, settings: SandboxSettings, *, reference_trials: int = REFERENCE_TRIALS,
                        noop: bool = True, watch_alerts: bool = True, artifacts_root: str | None = None,
                        slots: asyncio.Semaphore | None = None) -> TaskValidation:
    """Validate one loaded task on the cluster ``settings`` points at (see the module docstring).

    ``slots`` bounds how many trials run at once across concurrent calls. Cluster trouble raises
    InfraError as in a trial; everything wrong with the task is a problem in the result."""
    slots = slots or asyncio.Semaphore(1)
    started = time.monotonic()
    if task.reference_solution is None:
        where = str(task.source_path)
        return TaskValidation(task.id, task.category, (TaskProblem(
            where, _line(task, ("reference_solution",)), "reference_solution",
            "required to validate the task on a cluster"),), seconds=0.0)
    with tempfile.TemporaryDirectory(prefix="ontrial-validate-") as scratch:
        ctx = _Context(task, settings, artifacts_root or scratch, f"validate-{secrets.token_hex(4)}")
        async with slots:
            passed, alert = await _round_trip(ctx, watch_alerts)
        reference_passed, trials, noop_passed = int(passed), 1, None
        if passed:
            extra = [ctx.spec("reference", i) for i in range(1, reference_trials)]
            jobs = [*extra, *([ctx.spec("noop", reference_trials)] if noop else [])]

            async def one(spec: TrialSpec) -> Grade:
                async with slots:
                    return await run_trial(spec)

            grades = await asyncio.gather(*(one(s) for s in jobs))
            for spec, result in zip(jobs, grades):
                if spec.agent.kind == "noop":
                    noop_passed = result.passed
                    if result.passed:
                        ctx.problem(("checks",), "the noop agent passes this task: the checks or the pass rule "
                                    "do not require anything to be done")
                    continue
                trials += 1
                reference_passed += int(result.passed)
                if not result.passed:
                    ctx.problem(("reference_solution",), f"reference trial {spec.trial_index} failed: {result.reason}")
    return TaskValidation(task.id, task.category, tuple(ctx.problems), reference_passed, trials, noop_passed,
                          alert, round(time.monotonic() - started, 2))


async def validate_tasks(tasks: Iterable[Task], settings: SandboxSettings, *,
                         reference_trials: int = REFERENCE_TRIALS, noop: bool = True, watch_alerts: bool = True,
                         concurrency: int = 4, artifacts_root: str | None = None,
                         on_result: Callable[[TaskValidation], Awaitable[None] | None] | None = None,
                         ) -> list[TaskValidation]:
    """Validate many tasks on one cluster, at most ``concurrency`` trials at a time; results in input
    order. ``on_result`` is called as each task finishes (e.g. to print ``TaskValidation.line()``)."""
    slots = asyncio.Semaphore(max(1, concurrency))

    async def one(task: Task) -> TaskValidation:
        # one shared root: trial directories under it are opaque, a per-task subdirectory would not be
        result = await validate_task(task, settings, reference_trials=reference_trials, noop=noop,
                                     watch_alerts=watch_alerts, artifacts_root=artifacts_root, slots=slots)
        if on_result is not None:
            maybe = on_result(result)
            if asyncio.iscoroutine(maybe):
                await maybe
        return result

    return list(await asyncio.gather(*(one(t) for t in tasks)))


async def validate_on_cluster(task: Task, settings: SandboxSettings, *, artifacts_root: str | None = None,
                              suite_id: str = "validate") -> list[TaskProblem]:
    """The round trip alone (no repeated trials, no noop trial): what broke, as problems."""
    with tempfile.TemporaryDirectory(prefix="ontrial-validate-") as scratch:
        ctx = _Context(task, settings, artifacts_root or scratch, suite_id)
        if task.reference_solution is None:
            return [ctx.problem(("reference_solution",), "required to validate the task on a cluster")]
        await _round_trip(ctx, watch_alerts=True)
        return ctx.problems


def summarize(results: Iterable[TaskValidation]) -> dict[str, Any]:
    """Totals for a report: tasks, sound tasks, reference passes, noop passes, alerts fired."""
    results = list(results)
    return {"tasks": len(results), "ok": sum(r.ok for r in results),
            "reference": f"{sum(r.reference_passed for r in results)}/{sum(r.reference_trials for r in results)}",
            "noop_passed": sum(bool(r.noop_passed) for r in results),
            "alerts_fired": sum(r.alert == "fired" for r in results),
            "alerts_checked": sum(r.alert in ("fired", "did not fire") for r in results)}
