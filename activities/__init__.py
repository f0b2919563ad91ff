"""Temporal activities: one thin wrapper per trial step around ``ontrial.steps``.

The wrappers only add what Temporal needs: heartbeats, cancellation handling, and the mapping of
core errors to retryable / non-retryable failures (``activities.errors``).
"""

from .collect_artifacts import collect_artifacts
from .create_sandbox import create_sandbox
from .grade import grade
from .inject_fault import inject_fault
from .reap import reap_expired_sandboxes
from .run_agent import run_agent
from .teardown import teardown

TRIAL_ACTIVITIES = [create_sandbox, inject_fault, run_agent, collect_artifacts, grade, teardown]
ALL_ACTIVITIES = [*TRIAL_ACTIVITIES, reap_expired_sandboxes]

__all__ = [
    "ALL_ACTIVITIES", "TRIAL_ACTIVITIES", "collect_artifacts", "create_sandbox", "grade", "inject_fault",
    "reap_expired_sandboxes", "run_agent", "teardown",
]
