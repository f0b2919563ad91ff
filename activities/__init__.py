"""Temporal activities: one thin wrapper per step around ``ontrial`` (trial steps, suite bookkeeping).

The wrappers only add what Temporal needs: heartbeats, cancellation handling, and the mapping of
core errors to retryable / non-retryable failures (``activities.errors``).
"""

from .collect_artifacts import collect_artifacts
from .create_sandbox import create_sandbox
from .grade import grade
from .inject_fault import inject_fault
from .reap import reap_expired_sandboxes
from .regrade import regrade_trial
from .run_agent import run_agent
from .suite import SUITE_ACTIVITIES, apply_override, finish_suite, plan_suite, record_trials
from .teardown import teardown

TRIAL_ACTIVITIES = [create_sandbox, inject_fault, run_agent, collect_artifacts, grade, teardown]
#: Everything but the trial steps (which a worker may swap for ``activities.instant``).
SUPPORT_ACTIVITIES = [*SUITE_ACTIVITIES, regrade_trial, reap_expired_sandboxes]
ALL_ACTIVITIES = [*TRIAL_ACTIVITIES, *SUPPORT_ACTIVITIES]

__all__ = [
    "ALL_ACTIVITIES", "SUPPORT_ACTIVITIES", "TRIAL_ACTIVITIES", "apply_override", "collect_artifacts",
    "create_sandbox", "finish_suite", "grade", "inject_fault", "plan_suite", "reap_expired_sandboxes",
    "record_trials", "regrade_trial", "run_agent", "teardown",
]
