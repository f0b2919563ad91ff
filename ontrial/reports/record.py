"""Everything one suite run produced, with the versions needed to reproduce or compare it."""

from __future__ import annotations

from pydantic import Field

from ..models.base import Wire
from ..models.result import TrialResult
from ..models.suite import GateResult, SuiteReport


class RunVersions(Wire):
    harness: str
    grader: str = ""
    task_set_hash: str = ""
    task_versions: dict[str, str] = Field(default_factory=dict)


class RunRecord(Wire):
    run_id: str
    suite_name: str = "default"
    report: SuiteReport
    gate: GateResult | None = None
    baseline_run_id: str | None = None
    versions: RunVersions
    trials: list[TrialResult] = Field(default_factory=list)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)
