"""RunTrialsWorkflow: k trials of each task for one agent, as child TrialWorkflows.

Children get deterministic ids (``suite/task/trial``, the TrialSpec.trial_id), so a trial is
never started twice under one suite, and ``ParentClosePolicy.REQUEST_CANCEL``, so a parent that
closes early still lets each running trial tear its sandbox down. Concurrency is bounded with a
semaphore (deterministic in workflows). Every planned trial yields a TrialResult: trials that
never started because the suite was cancelled are reported ``cancelled``.
"""

from __future__ import annotations

import asyncio

from pydantic import Field
from temporalio import workflow
from temporalio.exceptions import ChildWorkflowError, WorkflowAlreadyStartedError

with workflow.unsafe.imports_passed_through():
    from ontrial.models.base import Wire
    from ontrial.models.result import TrialResult
    from ontrial.models.trial import AgentSpec, SandboxSettings, TrialSpec
    from ontrial.outcomes import InfraStage, TrialOutcome, cancelled, infra

    from .options import TrialInput, TrialOptions
    from .trial import TrialWorkflow


class TaskRef(Wire):
    task_id: str
    task_file: str = Field(description="path of the task YAML as the worker sees it")


class RunTrialsInput(Wire):
    suite_id: str
    tasks: list[TaskRef]
    agent: AgentSpec
    trials: int = Field(default=1, ge=1)
    concurrency: int = Field(default=4, ge=1)
    sandbox: SandboxSettings
    artifacts_root: str
    trial_options: TrialOptions = Field(default_factory=TrialOptions)

    def trial_specs(self) -> list[TrialSpec]:
        """Trial-major order (all tasks' first trials first), so partial results cover every task."""
        return [
            TrialSpec(suite_id=self.suite_id, task_id=task.task_id, trial_index=index, task_file=task.task_file,
                      agent=self.agent, sandbox=self.sandbox, artifacts_root=self.artifacts_root)
            for index in range(self.trials) for task in self.tasks
        ]


class SuiteProgress(Wire):
    total: int = 0
    done: int = 0
    running: int = 0
    by_outcome: dict[str, int] = Field(default_factory=dict)


class RunTrialsResult(Wire):
    suite_id: str
    agent: AgentSpec
    results: list[TrialResult]


@workflow.defn(name="RunTrialsWorkflow")
class RunTrialsWorkflow:
    def __init__(self) -> None:
        self._total = 0
        self._running = 0
        self._by_outcome: dict[str, int] = {}

    @workflow.query
    def progress(self) -> SuiteProgress:
        return SuiteProgress(total=self._total, done=sum(self._by_outcome.values()),
                             running=self._running, by_outcome=dict(self._by_outcome))

    @workflow.run
    async def run(self, suite: RunTrialsInput) -> RunTrialsResult:
        specs = suite.trial_specs()
        self._total = len(specs)
        slots = asyncio.Semaphore(suite.concurrency)
        trials = [asyncio.ensure_future(self._trial(spec, suite.trial_options, slots)) for spec in specs]
        gathering = asyncio.gather(*trials)
        while True:
            try:
                results = await asyncio.shield(gathering)
                break
            except asyncio.CancelledError:  # reached only this task: pass it on, keep collecting verdicts
                for trial in trials:
                    trial.cancel()
        return RunTrialsResult(suite_id=suite.suite_id, agent=suite.agent, results=list(results))

    async def _trial(self, spec: TrialSpec, options: TrialOptions, slots: asyncio.Semaphore) -> TrialResult:
        try:
            async with slots:
                self._running += 1
                try:
                    result = await workflow.execute_child_workflow(
                        TrialWorkflow.run, TrialInput(spec=spec, options=options), id=spec.trial_id,
                        parent_close_policy=workflow.ParentClosePolicy.REQUEST_CANCEL,
                        static_summary=f"{spec.task_id} #{spec.trial_index} ({spec.agent.label})",
                    )
                finally:
                    self._running -= 1
        except asyncio.CancelledError:
            result = _unrun(spec, cancelled("suite cancelled before the trial finished"))
        except WorkflowAlreadyStartedError:
            result = _unrun(spec, infra(InfraStage.sandbox, f"a trial {spec.trial_id} is already running"))
        except ChildWorkflowError as err:  # terminated, or failed on a bug: no verdict from the trial itself
            result = _unrun(spec, infra(InfraStage.sandbox, f"trial workflow did not complete: {err.cause or err}"))
        self._by_outcome[result.outcome.outcome.value] = self._by_outcome.get(result.outcome.outcome.value, 0) + 1
        return result


def _unrun(spec: TrialSpec, outcome: TrialOutcome) -> TrialResult:
    """The verdict for a trial whose workflow produced none."""
    return TrialResult(trial_id=spec.trial_id, suite_id=spec.suite_id, task_id=spec.task_id,
                       trial_index=spec.trial_index, agent=spec.agent, outcome=outcome)
