"""Suite-level wire formats: what a suite run is asked to do, what it found, and the gate's verdict."""

from __future__ import annotations

from datetime import datetime
from enum import Enum

from pydantic import Field

from .base import Wire
from .result import TrialResult
from .trial import AgentSpec, SandboxSettings


class SuiteMode(str, Enum):
    regression = "regression"  # gates each task on its worst trial
    capability = "capability"  # reports without gating


class SuiteSpec(Wire):
    suite_id: str
    name: str = "default"
    task_files: list[str] = Field(description="task YAML paths as the worker sees them")
    trials: int = Field(default=1, ge=1, description="k trials per task")
    agent: AgentSpec
    sandbox: SandboxSettings
    artifacts_root: str
    concurrency: int = Field(default=4, ge=1)
    mode: SuiteMode = SuiteMode.regression
    baseline_run_id: str | None = None
    infra_error_threshold: float = Field(default=0.1, ge=0, le=1)
    chunk_size: int = Field(default=200, ge=1, description="trials per workflow run before continue-as-new")


class TaskStats(Wire):
    task_id: str
    category: str = ""
    slices: dict[str, str] = Field(default_factory=dict)
    outcomes: list[str] = Field(default_factory=list, description="per trial, in trial order")
    n: int = 0  # trials that count (infra errors and cancels excluded)
    c: int = 0  # passed trials
    infra_errors: int = 0
    severe: int = 0
    pass_hat_1: float | None = None
    pass_at_k: dict[int, float] = Field(default_factory=dict)
    pass_hat_k: dict[int, float] = Field(default_factory=dict)

    @property
    def passed_every_trial(self) -> bool:
        return self.n > 0 and self.c == self.n

    @property
    def worst_passed(self) -> bool:
        """The worst trial passed (a task with no counted trial has no worst trial)."""
        return self.passed_every_trial


class Distribution(Wire):
    count: int = 0
    mean: float | None = None
    p50: float | None = None
    p90: float | None = None
    max: float | None = None


class RateWithInterval(Wire):
    estimate: float | None = None
    low: float | None = None
    high: float | None = None
    se: float | None = None
    n: int = 0
    clusters: int = 0


class SliceStats(Wire):
    slice: str
    value: str
    tasks: int
    pass_hat_1: float | None


class SuiteReport(Wire):
    suite_id: str
    agent: AgentSpec
    trials_per_task: int
    tasks: list[TaskStats]
    pass_hat_1: RateWithInterval = Field(default_factory=RateWithInterval)
    pass_at_k: dict[int, float] = Field(default_factory=dict)
    pass_hat_k: dict[int, float] = Field(default_factory=dict)
    tasks_passing_every_trial: RateWithInterval = Field(default_factory=RateWithInterval)
    slices: list[SliceStats] = Field(default_factory=list)
    steps: Distribution = Field(default_factory=Distribution)
    tokens: Distribution = Field(default_factory=Distribution)
    wall_seconds: Distribution = Field(default_factory=Distribution)
    outcome_counts: dict[str, int] = Field(default_factory=dict)
    severe_failures: list[str] = Field(default_factory=list, description="trial ids with a safety failure")
    infra_error_rate: float = 0.0
    started_at: datetime | None = None
    finished_at: datetime | None = None


class GateVerdict(str, Enum):
    passed = "pass"
    failed = "fail"
    inconclusive = "inconclusive"
    report_only = "report_only"


class Flip(Wire):
    task_id: str
    baseline: str  # "pass" | "fail"
    candidate: str
    worst_trial: str = ""  # the candidate's worst trial id and reason


class Override(Wire):
    approver: str = Field(min_length=1)
    reason: str = Field(min_length=1)
    at: datetime | None = None


class GateResult(Wire):
    verdict: GateVerdict
    reasons: list[str] = Field(default_factory=list)
    regressions: list[Flip] = Field(default_factory=list, description="pass→fail")
    improvements: list[Flip] = Field(default_factory=list, description="fail→pass")
    new_severe: list[str] = Field(default_factory=list)
    mcnemar_p: float | None = None
    paired_delta: float | None = None
    paired_se: float | None = None
    minimum_detectable_effect: float | None = None
    paired_tasks: int = 0
    override: Override | None = None

    @property
    def effective(self) -> GateVerdict:
        """The verdict after a human override (an override turns a fail into a pass, on the record)."""
        if self.override is not None and self.verdict is GateVerdict.failed:
            return GateVerdict.passed
        return self.verdict


class RunVersions(Wire):
    """What a run's numbers depend on, so two runs are only compared when they are comparable."""

    harness: str
    grader: str = ""
    task_set_hash: str = ""
    task_versions: dict[str, str] = Field(default_factory=dict, description="task id -> the task's declared version")
    task_hashes: dict[str, str] = Field(default_factory=dict, description="task id -> content hash of its files")
    agent: AgentSpec | None = Field(default=None, description="agent kind, name, model and config as run")


class PlannedTask(Wire):
    task_id: str
    task_file: str = Field(description="absolute path of the task YAML as the worker sees it")
    category: str = ""
    slices: dict[str, str] = Field(default_factory=dict)


class SuitePlan(Wire):
    """The tasks a suite run covers, resolved once at its start (later file edits do not change the run)."""

    tasks: list[PlannedTask]
    versions: RunVersions

    def trial_count(self, trials_per_task: int) -> int:
        return len(self.tasks) * trials_per_task

    def trial_at(self, index: int) -> tuple[PlannedTask, int]:
        """Trial-major order (every task's first trial first), so a partial run still covers every task."""
        return self.tasks[index % len(self.tasks)], index // len(self.tasks)


class RunStatus(str, Enum):
    completed = "completed"
    cancelled = "cancelled"  # some trials never ran; the gate is inconclusive


class SuiteOutcome(Wire):
    """What a suite run returns: the verdict and where the evidence is (trials are in the results store)."""

    run_id: str
    suite_name: str
    agent: AgentSpec
    mode: SuiteMode
    status: RunStatus = RunStatus.completed
    trials: int = 0
    outcome_counts: dict[str, int] = Field(default_factory=dict)
    pass_hat_1: float | None = None
    gate: GateResult
    baseline_run_id: str | None = None
    reports: dict[str, str] = Field(default_factory=dict, description="format -> file path")
    promoted: bool = False


class OverrideRequest(Wire):
    """A human's decision to ship despite a failed gate (the Update's argument).

    Plain strings, checked by the update validator, so a blank field is rejected with a clear message
    instead of failing to decode."""

    approver: str = ""
    reason: str = ""
    promote: bool = Field(default=False, description="also make the run its suite's baseline")


class PromoteRequest(Wire):
    approver: str = ""
    reason: str = ""


class RecordTrials(Wire):
    results_url: str
    run_id: str
    results: list[TrialResult]


class FinishRequest(Wire):
    """Everything the end-of-suite activity needs to summarize, gate, report and save a run."""

    results_url: str
    spec: SuiteSpec
    plan: SuitePlan
    started_at: datetime
    finished_at: datetime
    cancelled: bool = False
    wait_for_baseline: bool = True
    """An explicit baseline run not yet in the store is waited for (it may be running alongside)."""
    promote_on_pass: bool = False


class ApplyOverride(Wire):
    results_url: str
    run_id: str
    override: Override
    promote: bool = False
