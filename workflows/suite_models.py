"""The suite workflow's input, the aggregates it carries across continue-as-new, and its progress.

Kept out of the workflow module and imported passed-through: pydantic model classes are costly to
build, and a workflow module is re-imported for every workflow instance in the sandbox.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import Enum

from pydantic import Field

from ontrial.models.base import Wire
from ontrial.models.suite import SuitePlan, SuiteSpec

from .options import TrialOptions

#: Trials running at once per suite. Well below the server's 2,000 pending children per workflow, and
#: small enough that draining a run before continue-as-new adds a bounded number of events.
MAX_CONCURRENCY = 500


class SuiteStatus(str, Enum):
    planning = "planning"
    running = "running"
    finishing = "finishing"
    awaiting_decision = "awaiting_decision"  # the gate failed; an override Update may still arrive
    done = "done"


class SuiteState(Wire):
    """What one run of the suite workflow hands the next: aggregates only, never per-trial results."""

    plan: SuitePlan
    started_at: datetime
    next_index: int = Field(default=0, description="trials before this index (trial-major order) are done")
    by_outcome: dict[str, int] = Field(default_factory=dict)
    run_number: int = 1
    history_lengths: list[int] = Field(default_factory=list, description="events of each earlier run")
    cancelled: bool = False


class SuiteInput(Wire):
    """SuiteWorkflow's one argument. The workflow id is the run id (``spec.suite_id`` is set from it)."""

    spec: SuiteSpec
    results_url: str = Field(description="results store (SQLAlchemy URL) as the worker reaches it")
    trial_options: TrialOptions = Field(default_factory=TrialOptions)
    decision_window: timedelta = Field(default=timedelta(0),
                                       description="how long a failed gate waits for an override Update")
    baseline_wait: timedelta = Field(default=timedelta(hours=6),
                                     description="how long to wait for an explicit baseline run still running")
    promote_on_pass: bool = False
    record_batch: int = Field(default=25, ge=1, description="trial verdicts per record_trials activity")
    history_limit: int = Field(default=5_000, ge=50,
                               description="stop starting trials past this many events, then continue-as-new")
    state: SuiteState | None = None


class SuiteProgress(Wire):
    status: SuiteStatus = SuiteStatus.planning
    total: int = 0
    done: int = 0
    running: int = 0
    by_outcome: dict[str, int] = Field(default_factory=dict)
    run_number: int = 1
    gate: str | None = None


__all__ = ["MAX_CONCURRENCY", "SuiteInput", "SuiteProgress", "SuiteState", "SuiteStatus"]
