"""TrialWorkflow: one agent, one task, one sandbox, from an empty namespace to a verdict.

It reads like the trial: create the sandbox, break the app, let the agent work, keep the
evidence, grade — and, whatever happened, tear the sandbox down. Infra steps are retried while
their errors are transient; the agent step runs once (an agent that may have acted is never run
again: see ``TrialOptions.agent_retry_policy``). How a trial ended is decided by
``ontrial.outcomes``; infra failures are blamed on the stage that failed, a cancel is
``cancelled``. The workflow always returns a TrialResult (a cancelled trial completes with a
``cancelled`` verdict), and its history carries references and summaries only.

Teardown sits in a cancellation-shielded ``finally``: it runs after an agent crash, a budget hit,
a cancel, and infra retries running out. It cannot run when the workflow is terminated, so trials
get no execution timeout and parents cancel (not terminate) them; the reaper covers the rest.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.collect_artifacts import collect_artifacts
    from activities.create_sandbox import create_sandbox
    from activities.grade import grade
    from activities.inject_fault import inject_fault
    from activities.run_agent import run_agent
    from activities.teardown import teardown
    from ontrial import __version__ as harness_version
    from ontrial.models.result import TrialResult, TrialVersions
    from ontrial.models.trial import AgentRun, FaultReport, Grade, SandboxRef, TrialSpec
    from ontrial.outcomes import TrialOutcome, cancelled, decide

    from .options import TrialInput, TrialOptions
    from .shield import finish_shielded
    from .stages import TrialStage, failure_reason, infra_outcome, is_cancellation

WAIT_FOR_CANCEL = workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED


class StepFailed(Exception):
    """An infra step gave up; carries the verdict it implies."""

    def __init__(self, outcome: TrialOutcome):
        super().__init__(outcome.reason)
        self.outcome = outcome


@workflow.defn(name="TrialWorkflow")
class TrialWorkflow:
    def __init__(self) -> None:
        self._stage = TrialStage.pending
        self._options = TrialOptions()

    @workflow.query
    def progress(self) -> TrialStage:
        return self._stage

    @workflow.run
    async def run(self, trial_input: TrialInput) -> TrialResult:
        spec, self._options = trial_input.spec, trial_input.options
        trial = _Trial(spec, started_at=workflow.now())
        try:
            trial.sandbox = await self._step(TrialStage.creating_sandbox, create_sandbox, spec)
            trial.fault = await self._step(TrialStage.injecting_fault, inject_fault, spec, trial.sandbox)
            trial.run = await self._run_agent(spec, trial.sandbox, trial.fault)
            trial.artifacts = await self._step(
                TrialStage.collecting_artifacts, collect_artifacts, spec, trial.sandbox, trial.run)
            trial.grade = await self._step(TrialStage.grading, grade, spec, trial.sandbox, trial.run)
            trial.outcome = decide(trial.run, trial.grade)
        except StepFailed as failed:
            trial.outcome = failed.outcome
        except asyncio.CancelledError:
            trial.outcome = cancelled(f"cancelled while {self._stage.value}")
        finally:
            if trial.sandbox is not None:
                trial.torn_down = await self._teardown(spec, trial.sandbox.namespace)
        self._stage = TrialStage.done
        return trial.result(finished_at=workflow.now())

    async def _step(self, stage: TrialStage, activity: Any, *args: Any) -> Any:
        """An infra step: retried with backoff while transient, bounded by the step timeout."""
        options = self._options
        return await self._execute(
            stage, activity, *args,
            schedule_to_close_timeout=options.infra_step_timeout,
            start_to_close_timeout=options.infra_attempt_timeout,
            heartbeat_timeout=options.infra_heartbeat_timeout,
            retry_policy=options.infra_retry_policy(),
        )

    async def _run_agent(self, spec: TrialSpec, sandbox: SandboxRef, fault: FaultReport) -> AgentRun:
        """The agent step: one attempt; the budgets are enforced inside, the timeout is a safety net."""
        options = self._options
        return await self._execute(
            TrialStage.running_agent, run_agent, spec, sandbox, fault,
            start_to_close_timeout=options.agent_timeout,
            heartbeat_timeout=options.agent_heartbeat_timeout,
            retry_policy=TrialOptions.agent_retry_policy(),
        )

    async def _execute(self, stage: TrialStage, activity: Any, *args: Any, **timeouts: Any) -> Any:
        """Run one step; a failure becomes StepFailed, a cancel CancelledError.

        A step that outran a cancel (it completed anyway) keeps its result, so a sandbox created
        meanwhile is still torn down; the cancel then takes effect before the next step starts.
        """
        if workflow.cancellation_reason() is not None:
            raise asyncio.CancelledError("cancel requested")
        self._stage = stage
        try:
            return await workflow.execute_activity(
                activity, args=list(args), cancellation_type=WAIT_FOR_CANCEL, summary=stage.value, **timeouts)
        except ActivityError as err:
            if is_cancellation(err) or workflow.cancellation_reason() is not None:
                raise asyncio.CancelledError(str(err)) from err
            raise StepFailed(infra_outcome(stage, err)) from err

    async def _teardown(self, spec: TrialSpec, namespace: str) -> bool:
        """Delete the sandbox, shielded from cancellation; False if it could not (the reaper will)."""
        self._stage = TrialStage.tearing_down
        options = self._options
        deleting = workflow.execute_activity(
            teardown, args=[spec, namespace],
            schedule_to_close_timeout=options.teardown_timeout,
            start_to_close_timeout=options.infra_attempt_timeout,
            heartbeat_timeout=options.infra_heartbeat_timeout,
            retry_policy=options.infra_retry_policy(),
            summary=TrialStage.tearing_down.value,
        )
        try:
            await finish_shielded(deleting)
        except ActivityError as err:
            workflow.logger.warning("teardown of %s failed, left to the reaper: %s", namespace, failure_reason(err))
            return False
        return True


@dataclass
class _Trial:
    """What the trial has produced so far; becomes the TrialResult."""

    spec: TrialSpec
    started_at: datetime
    sandbox: SandboxRef | None = None
    fault: FaultReport | None = None
    run: AgentRun | None = None
    artifacts: dict[str, str] = field(default_factory=dict)
    grade: Grade | None = None
    outcome: TrialOutcome | None = None
    torn_down: bool = False

    def result(self, finished_at: datetime) -> TrialResult:
        spec = self.spec
        return TrialResult(
            trial_id=spec.trial_id, suite_id=spec.suite_id, task_id=spec.task_id,
            trial_index=spec.trial_index, agent=spec.agent,
            outcome=self.outcome or cancelled("trial ended without a verdict"),
            sandbox_namespace=self.sandbox.namespace if self.sandbox else None,
            fault=self.fault, run=self.run, grade=self.grade, artifacts=self.artifacts,
            torn_down=self.torn_down, started_at=self.started_at, finished_at=finished_at,
            versions=TrialVersions(harness=harness_version,
                                   grader=self.grade.grader_version if self.grade else "",
                                   task_hash=self.grade.task_hash if self.grade else ""),
        )
