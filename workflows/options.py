"""Timeouts and retry policies of a trial: one model, so a suite (or a test) can tune them.

The defaults suit a real cluster. Infra steps are retried with backoff while the error is
transient, bounded by ``infra_step_timeout`` (schedule-to-close: all attempts and backoff).
The agent step is never retried (see ``agent_retry_policy``).
"""

from __future__ import annotations

from datetime import timedelta

from pydantic import Field
from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from ontrial.models.base import Wire
    from ontrial.models.trial import TrialSpec

#: Error types (ApplicationError.type) never retried; see ``activities.errors``.
NON_RETRYABLE_ERROR_TYPES = ["ConfigError"]


class TrialOptions(Wire):
    infra_step_timeout: timedelta = timedelta(minutes=15)
    """Schedule-to-close of create_sandbox / inject_fault / collect_artifacts / grade: all attempts."""
    infra_attempt_timeout: timedelta = timedelta(minutes=8)
    """Start-to-close of one attempt (sandbox creation waits for a healthy baseline, grade for settling)."""
    infra_heartbeat_timeout: timedelta = timedelta(seconds=60)
    infra_initial_backoff: timedelta = timedelta(seconds=1)
    infra_max_backoff: timedelta = timedelta(seconds=30)
    agent_timeout: timedelta = timedelta(hours=2)
    """Safety net above the task's wall budget, which the harness enforces inside the step."""
    agent_heartbeat_timeout: timedelta = timedelta(seconds=60)
    teardown_timeout: timedelta = timedelta(minutes=30)
    """Schedule-to-close of teardown; after that the reaper owns the namespace."""

    def infra_retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            initial_interval=self.infra_initial_backoff,
            backoff_coefficient=2.0,
            maximum_interval=self.infra_max_backoff,
            non_retryable_error_types=NON_RETRYABLE_ERROR_TYPES,
        )

    @staticmethod
    def agent_retry_policy() -> RetryPolicy:
        """One attempt, always.

        A retry is only safe if the first attempt provably never touched the sandbox, and a
        heartbeat cannot prove that (heartbeats are throttled, so the last one the server saw
        may predate the agent's first action). An agent step lost to a dead worker therefore
        ends the trial as an infra error instead of silently running the agent twice.
        """
        return RetryPolicy(maximum_attempts=1)


class TrialInput(Wire):
    """TrialWorkflow's one argument (a single model, so fields can be added without breaking starts)."""

    spec: TrialSpec
    options: TrialOptions = Field(default_factory=TrialOptions)
