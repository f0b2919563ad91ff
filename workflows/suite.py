"""SuiteWorkflow: tasks × k TrialWorkflows as children, then a verdict against the baseline.

A run of the workflow plans the suite (an activity loads the task files), starts trials in trial-major
order under a concurrency bound, records their verdicts in the results store in batches, and — before
its history grows large — drains and continues as new, carrying aggregates only. The last run finishes
the suite in one activity (summary, baseline, gate, reports, saved run). A regression suite whose gate
failed may then wait for a human override (an Update carrying who and why) for ``decision_window``.

Children get deterministic ids (``<run id>/<task>/<trial>``), so a replayed or restarted parent never
starts a trial twice, and ``ParentClosePolicy.REQUEST_CANCEL``, so a parent that closes early still
lets each trial tear its sandbox down. A cancelled suite stops starting trials, cancels the running
ones, and still finishes: trials that never ran are reported ``cancelled`` and the gate is inconclusive.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, ChildWorkflowError, WorkflowAlreadyStartedError

with workflow.unsafe.imports_passed_through():
    from activities.suite import apply_override, finish_suite, plan_suite, record_trials
    from ontrial.models.result import TrialResult, TrialVersions
    from ontrial.models.suite import (
        ApplyOverride,
        FinishRequest,
        GateResult,
        GateVerdict,
        Override,
        OverrideRequest,
        RecordTrials,
        RunStatus,
        SuiteOutcome,
        SuitePlan,
        SuiteSpec,
    )
    from ontrial.models.trial import TrialSpec
    from ontrial.outcomes import InfraStage, TrialOutcome, cancelled, infra
    from ontrial.suite.decisions import DecisionRefused, check_override

    from .options import TrialInput
    from .shield import finish_shielded
    from .stages import failure_reason
    from .suite_models import MAX_CONCURRENCY, SuiteInput, SuiteProgress, SuiteState, SuiteStatus
    from .trial import TrialWorkflow

STORE_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=30))
STORE_TIMEOUTS = {"start_to_close_timeout": timedelta(minutes=5), "schedule_to_close_timeout": timedelta(hours=1)}


@workflow.defn(name="SuiteWorkflow")
class SuiteWorkflow:
    def __init__(self) -> None:
        self._status = SuiteStatus.planning
        self._input: SuiteInput | None = None
        self._state: SuiteState | None = None
        self._running = 0
        self._unrecorded: list[TrialResult] = []
        self._recording: list[asyncio.Task[int]] = []
        self._outcome: SuiteOutcome | None = None
        self._deciding = False

    # -- queries ----------------------------------------------------------------------------------------
    @workflow.query
    def progress(self) -> SuiteProgress:
        state = self._state
        if state is None:
            return SuiteProgress(status=self._status)
        spec = self._spec
        return SuiteProgress(status=self._status, total=state.plan.trial_count(spec.trials),
                             done=sum(state.by_outcome.values()), running=self._running,
                             by_outcome=dict(state.by_outcome), run_number=state.run_number,
                             gate=self._outcome.gate.effective.value if self._outcome else None)

    @workflow.query
    def outcome(self) -> SuiteOutcome | None:
        """The verdict once the suite has finished (also while it waits for a decision)."""
        return self._outcome

    # -- the run ----------------------------------------------------------------------------------------
    @workflow.run
    async def run(self, suite: SuiteInput) -> SuiteOutcome:
        run_id = workflow.info().workflow_id
        if suite.spec.suite_id != run_id:  # the run id is the workflow id (schedules append a timestamp)
            suite = suite.model_copy(update={"spec": suite.spec.model_copy(update={"suite_id": run_id})})
        self._input = suite
        self._state = suite.state or await self._plan()
        if self._state is None:
            return self._unplanned()
        total = self._state.plan.trial_count(self._spec.trials)
        if not self._state.cancelled:
            self._status = SuiteStatus.running
            end = min(total, self._state.next_index + self._spec.chunk_size)
            await self._run_trials(end)
            if not self._state.cancelled and self._state.next_index < total:
                try:
                    await workflow.wait_condition(workflow.all_handlers_finished)
                except asyncio.CancelledError:
                    self._cancelled()
                else:
                    workflow.continue_as_new(suite.model_copy(update={"state": self._carried()}))
        self._status = SuiteStatus.finishing
        outcome, _ = await finish_shielded(self._finish())
        self._outcome = outcome
        if outcome.gate.verdict is GateVerdict.failed and suite.decision_window > timedelta(0) \
                and not self._state.cancelled:
            await self._await_decision(suite.decision_window)
        self._status = SuiteStatus.done
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self._outcome

    @property
    def _spec(self) -> SuiteSpec:
        assert self._input is not None
        return self._input.spec

    async def _plan(self) -> SuiteState | None:
        started = workflow.now()
        try:
            plan: SuitePlan = await workflow.execute_activity(
                plan_suite, self._spec, start_to_close_timeout=timedelta(minutes=5),
                schedule_to_close_timeout=timedelta(minutes=30), retry_policy=STORE_RETRY, summary="plan")
        except asyncio.CancelledError:
            return None
        return SuiteState(plan=plan, started_at=started)

    def _unplanned(self) -> SuiteOutcome:
        spec = self._spec
        self._status = SuiteStatus.done
        gate = GateResult(verdict=GateVerdict.inconclusive, reasons=["cancelled before any trial was planned"])
        self._outcome = SuiteOutcome(run_id=spec.suite_id, suite_name=spec.name, agent=spec.agent, mode=spec.mode,
                                     status=RunStatus.cancelled, gate=gate)
        return self._outcome

    def _carried(self) -> SuiteState:
        state = self._state
        assert state is not None
        return state.model_copy(update={
            "run_number": state.run_number + 1,
            "history_lengths": [*state.history_lengths, workflow.info().get_current_history_length()]})

    def _should_pause(self) -> bool:
        """Stop starting trials: the history is getting large (ours or the server's judgement)."""
        assert self._input is not None
        info = workflow.info()
        return info.get_current_history_length() >= self._input.history_limit or info.is_continue_as_new_suggested()

    async def _run_trials(self, end: int) -> None:
        """Start trials [next_index, end) under the concurrency bound; return when every started one is
        done and recorded. A cancel stops the starts, cancels the running trials and waits for their
        verdicts (each trial tears its sandbox down first)."""
        state = self._state
        assert state is not None
        slots = asyncio.Semaphore(min(self._spec.concurrency, MAX_CONCURRENCY))
        started: list[asyncio.Task[None]] = []
        index = state.next_index
        try:
            while index < end:
                await slots.acquire()
                if self._should_pause() and started:
                    slots.release()
                    break
                started.append(asyncio.ensure_future(self._trial(index, slots)))
                index += 1
            await asyncio.shield(asyncio.gather(*started))
        except asyncio.CancelledError:
            self._cancelled()
            for trial in started:
                trial.cancel()
            await finish_shielded(asyncio.gather(*started, return_exceptions=True))
        assert self._state is not None
        self._state = self._state.model_copy(update={"next_index": index})
        _, cancel_seen = await finish_shielded(self._record_all())
        if cancel_seen:
            self._cancelled()

    def _cancelled(self) -> None:
        """Start no more trials; the suite finishes with what it has (the rest are reported cancelled)."""
        assert self._state is not None
        self._state = self._state.model_copy(update={"cancelled": True})

    async def _trial(self, index: int, slots: asyncio.Semaphore) -> None:
        state = self._state
        assert state is not None
        task, trial = state.plan.trial_at(index)
        spec = self._spec
        trial_spec = TrialSpec(suite_id=spec.suite_id, task_id=task.task_id, trial_index=trial,
                               task_file=task.task_file, agent=spec.agent, sandbox=spec.sandbox,
                               artifacts_root=spec.artifacts_root)
        assert self._input is not None
        self._running += 1
        try:
            result: TrialResult = await workflow.execute_child_workflow(
                TrialWorkflow.run, TrialInput(spec=trial_spec, options=self._input.trial_options),
                id=trial_spec.trial_id, parent_close_policy=workflow.ParentClosePolicy.REQUEST_CANCEL,
                static_summary=f"{task.task_id} #{trial} ({spec.agent.label})")
        except asyncio.CancelledError:
            result = _unrun(trial_spec, cancelled("suite cancelled before the trial finished"))
        except WorkflowAlreadyStartedError:
            result = _unrun(trial_spec, infra(InfraStage.sandbox, f"trial {trial_spec.trial_id} is already running"))
        except ChildWorkflowError as err:  # terminated, or failed on a bug: no verdict from the trial itself
            reason = f"trial workflow did not complete: {err.cause or err}"
            result = _unrun(trial_spec, infra(InfraStage.sandbox, reason))
        finally:
            self._running -= 1
            slots.release()
        self._count(self._versioned(result))

    def _versioned(self, result: TrialResult) -> TrialResult:
        versions = self._state.plan.versions if self._state else None
        if versions is None:
            return result
        base = result.versions or TrialVersions(harness=versions.harness)
        return result.model_copy(update={"versions": base.model_copy(update={
            "task_hash": versions.task_hashes.get(result.task_id, ""),
            "task_version": versions.task_versions.get(result.task_id, "")})})

    def _count(self, result: TrialResult) -> None:
        state = self._state
        assert state is not None and self._input is not None
        name = result.outcome.outcome.value
        counts = {**state.by_outcome, name: state.by_outcome.get(name, 0) + 1}
        self._state = state.model_copy(update={"by_outcome": counts})
        self._unrecorded.append(result)
        if len(self._unrecorded) >= self._input.record_batch:
            self._flush()

    def _flush(self) -> None:
        """Send the unrecorded verdicts to the results store (one activity per batch, not awaited here)."""
        assert self._input is not None
        batch, self._unrecorded = self._unrecorded, []
        if batch:
            self._recording.append(asyncio.ensure_future(workflow.execute_activity(
                record_trials, RecordTrials(results_url=self._input.results_url, run_id=self._spec.suite_id,
                                            results=batch),
                retry_policy=STORE_RETRY, summary=f"record {len(batch)} trials", **STORE_TIMEOUTS)))

    async def _record_all(self) -> None:
        """Flush the rest and wait until every batch is in the store."""
        self._flush()
        pending, self._recording = self._recording, []
        await asyncio.gather(*pending)

    async def _finish(self) -> SuiteOutcome:
        suite, state = self._input, self._state
        assert suite is not None and state is not None
        request = FinishRequest(results_url=suite.results_url, spec=suite.spec, plan=state.plan,
                                started_at=state.started_at, finished_at=workflow.now(), cancelled=state.cancelled,
                                promote_on_pass=suite.promote_on_pass)
        waits = bool(suite.spec.baseline_run_id) and suite.baseline_wait > timedelta(0)
        try:
            return await workflow.execute_activity(
                finish_suite, request.model_copy(update={"wait_for_baseline": waits}),
                start_to_close_timeout=timedelta(minutes=10),
                schedule_to_close_timeout=(suite.baseline_wait if waits else timedelta(0)) + timedelta(minutes=30),
                retry_policy=STORE_RETRY, summary="finish")
        except ActivityError as err:
            if not waits:
                raise
            workflow.logger.warning("baseline never arrived, gating without it: %s", failure_reason(err))
            return await workflow.execute_activity(
                finish_suite, request.model_copy(update={"wait_for_baseline": False}),
                retry_policy=STORE_RETRY, summary="finish", **STORE_TIMEOUTS)

    async def _await_decision(self, window: timedelta) -> None:
        self._status = SuiteStatus.awaiting_decision
        try:
            await workflow.wait_condition(lambda: self._decided, timeout=window)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            pass

    @property
    def _decided(self) -> bool:
        return self._outcome is not None and self._outcome.gate.override is not None

    # -- the override Update ----------------------------------------------------------------------------
    @workflow.update
    async def override(self, request: OverrideRequest) -> SuiteOutcome:
        """Ship despite a failed gate: recorded with who, why and when (and the run promoted if asked)."""
        if self._deciding:
            raise ApplicationError("another decision is being recorded", type="DecisionRefused", non_retryable=True)
        assert self._input is not None
        self._deciding = True
        decision = Override(approver=request.approver.strip(), reason=request.reason.strip(), at=workflow.now())
        try:
            self._outcome = await workflow.execute_activity(
                apply_override, ApplyOverride(results_url=self._input.results_url, run_id=self._spec.suite_id,
                                              override=decision, promote=request.promote),
                retry_policy=RetryPolicy(maximum_interval=timedelta(seconds=30),
                                         non_retryable_error_types=["DecisionRefused"]),
                summary="override", **STORE_TIMEOUTS)
        except ActivityError as err:
            raise ApplicationError(failure_reason(err), type="DecisionRefused", non_retryable=True) from err
        finally:
            self._deciding = False
        return self._outcome

    @override.validator
    def _check_override(self, request: OverrideRequest) -> None:
        if self._status is not SuiteStatus.awaiting_decision or self._outcome is None:
            raise DecisionRefused(f"the run is {self._status.value}: an override is taken once the gate has failed, "
                                  "while the run waits for a decision")
        if self._deciding:
            raise DecisionRefused("another decision is being recorded")
        check_override(self._outcome.run_id, self._outcome.gate, request.approver, request.reason)


def _unrun(spec: TrialSpec, outcome: TrialOutcome) -> TrialResult:
    """The verdict for a trial whose workflow produced none."""
    return TrialResult(trial_id=spec.trial_id, suite_id=spec.suite_id, task_id=spec.task_id,
                       trial_index=spec.trial_index, agent=spec.agent, outcome=outcome)
