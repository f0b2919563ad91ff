"""Where a trial is in its story, and which infra stage a failing step is blamed on."""

from __future__ import annotations

from enum import Enum

from temporalio import workflow
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    FailureError,
    RetryState,
    TimeoutError,
)

with workflow.unsafe.imports_passed_through():
    from ontrial.outcomes import InfraStage, TrialOutcome, infra


class TrialStage(str, Enum):
    pending = "pending"
    creating_sandbox = "creating_sandbox"
    injecting_fault = "injecting_fault"
    running_agent = "running_agent"
    collecting_artifacts = "collecting_artifacts"
    grading = "grading"
    tearing_down = "tearing_down"
    done = "done"


BLAME = {
    TrialStage.creating_sandbox: InfraStage.sandbox,
    TrialStage.injecting_fault: InfraStage.fault,
    TrialStage.running_agent: InfraStage.sandbox,  # the agent's own failures are results, not errors
    TrialStage.collecting_artifacts: InfraStage.sandbox,
    TrialStage.grading: InfraStage.grader,
    TrialStage.tearing_down: InfraStage.sandbox,
}


GAVE_UP = (RetryState.TIMEOUT, RetryState.MAXIMUM_ATTEMPTS_REACHED)


def is_cancellation(err: BaseException) -> bool:
    return isinstance(err, ActivityError) and isinstance(err.cause, CancelledError)


def failure_reason(err: FailureError) -> str:
    """One line saying why a step failed, from the innermost useful cause."""
    if isinstance(err, ActivityError) and err.cause:
        reason = failure_reason(err.cause)
        if err.retry_state in GAVE_UP and not isinstance(err.cause, TimeoutError):
            reason += " (retries exhausted)"
        return reason
    cause = err
    if isinstance(cause, TimeoutError):
        kind = cause.type.name.lower().replace("_", "-") if cause.type else "unknown"
        last = f": last error: {failure_reason(cause.cause)}" if isinstance(cause.cause, FailureError) else ""
        return f"{kind} timeout{last}"
    if isinstance(cause, ApplicationError):
        prefix = "configuration error: " if cause.type == "ConfigError" else ""
        return prefix + (cause.message or cause.type or "application error")
    return cause.message or type(cause).__name__


def infra_outcome(stage: TrialStage, err: FailureError) -> TrialOutcome:
    reason = failure_reason(err)
    if stage is TrialStage.running_agent and "heartbeat" in reason:
        reason = f"agent step lost (worker gone?), not re-run: {reason}"
    return infra(BLAME.get(stage, InfraStage.sandbox), f"{stage.value}: {reason}")
