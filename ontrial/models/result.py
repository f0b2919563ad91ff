"""A trial's verdict as the workflow returns it."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from ..outcomes import TrialOutcome
from .base import Wire
from .trial import AgentRun, AgentSpec, FaultReport, Grade


class TrialVersions(Wire):
    harness: str
    grader: str = ""
    task_hash: str = ""
    task_version: str = ""


class TrialResult(Wire):
    """One trial's verdict: the history keeps this, not the transcript."""

    trial_id: str
    suite_id: str
    task_id: str
    trial_index: int
    agent: AgentSpec
    outcome: TrialOutcome
    sandbox_namespace: str | None = None
    fault: FaultReport | None = None
    run: AgentRun | None = None
    grade: Grade | None = None
    artifacts: dict[str, str] = Field(default_factory=dict, description="artifact name -> ref")
    torn_down: bool = False
    started_at: datetime | None = None
    finished_at: datetime | None = None
    versions: TrialVersions | None = None
