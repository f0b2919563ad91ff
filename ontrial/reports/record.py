"""Everything one suite run produced, with the versions needed to reproduce or compare it."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from ..models.base import Wire
from ..models.result import TrialResult
from ..models.suite import GateResult, RunStatus, RunVersions, SuiteMode, SuitePlan, SuiteReport, SuiteSpec

__all__ = ["RunRecord", "RunVersions"]


class RunRecord(Wire):
    run_id: str
    suite_name: str = "default"
    report: SuiteReport
    gate: GateResult | None = None
    baseline_run_id: str | None = None
    versions: RunVersions
    trials: list[TrialResult] = Field(default_factory=list)
    mode: SuiteMode = SuiteMode.regression
    status: RunStatus = RunStatus.completed
    started_at: datetime | None = Field(default=None, description="when the suite run started (workflow time)")
    finished_at: datetime | None = None
    spec: SuiteSpec | None = Field(default=None, description="what was asked: for re-runs and re-grades")
    plan: SuitePlan | None = Field(default=None, description="the resolved tasks (ids, files, slices)")
    derived_from: str | None = Field(default=None, description="the run this one re-ran or re-graded")

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)
