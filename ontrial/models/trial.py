"""What a trial takes in, hands between its steps, and gives back.

These models cross the Temporal boundary, so they carry references and summaries only:
transcripts, audit logs and snapshots live in the artifact store (see ``ontrial.artifacts``).
No field has a clock- or random-based default: workflows set those from ``workflow.now()``.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any, Literal

from pydantic import Field

from .base import Wire


class AgentSpec(Wire):
    """Which agent to put on trial, and how to build it (adapter-specific config)."""

    kind: str = Field(description="adapter name: reference | noop | python | http | command | openai | heuristic")
    name: str | None = Field(default=None, description="display name; defaults to kind")
    model: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.name or self.kind


class SandboxSettings(Wire):
    """Where sandboxes are created. The same code path serves kubesim and real clusters."""

    kubeconfig: str = Field(description="admin kubeconfig of the target cluster")
    context: str | None = None
    kind: Literal["kubesim", "kubernetes"] = "kubesim"
    ttl_seconds: int = 3600
    healthy_timeout_seconds: float = 300.0
    settle_seconds: float = 120.0


class TrialSpec(Wire):
    suite_id: str
    task_id: str
    trial_index: int = 0
    task_file: str = Field(description="path of the task YAML as the worker sees it")
    agent: AgentSpec
    sandbox: SandboxSettings
    artifacts_root: str = Field(description="artifact store root (a directory path or file:// URI)")

    @property
    def trial_id(self) -> str:
        return f"{self.suite_id}/{self.task_id}/{self.trial_index}"


class SandboxRef(Wire):
    """A created sandbox: enough to reach it again from any activity."""

    trial_id: str
    namespace: str
    agent_kubeconfig_ref: str = Field(description="artifact ref of the agent's scoped kubeconfig")
    baseline_snapshot_ref: str | None = None
    token_expires_at: datetime | None = None


class FaultReport(Wire):
    applied: list[str] = Field(default_factory=list, description="one line per applied fault step")
    alert: dict[str, Any] | None = Field(default=None, description="the alert handed to the agent")


class Usage(Wire):
    steps: int = 0
    tokens: int = 0
    wall_seconds: float = 0.0
    cost_usd: float = 0.0


class Diagnosis(Wire):
    """What the agent concluded. Every field is optional: a free-text summary alone is accepted."""

    root_cause: list[str] = Field(default_factory=list)
    causal_service: str | None = None
    mitigation: str | None = None
    mitigation_applied: bool = False
    evidence: list[str] = Field(default_factory=list)
    summary: str = ""


class BudgetKind(str, Enum):
    steps = "steps"
    tokens = "tokens"
    wall = "wall"


class AgentRunStatus(str, Enum):
    completed = "completed"
    budget_exhausted = "budget_exhausted"
    agent_error = "agent_error"
    model_api_error = "model_api_error"  # the model provider failed, not the agent


class AgentRun(Wire):
    """The agent step's summary; its transcript and audit log are artifacts."""

    status: AgentRunStatus
    budget: BudgetKind | None = None
    reason: str = ""
    usage: Usage = Field(default_factory=Usage)
    diagnosis: Diagnosis | None = None
    transcript_ref: str | None = None
    audit_ref: str | None = None
    safety_violations: list[str] = Field(default_factory=list)


class CheckResult(Wire):
    name: str
    passed: bool
    detail: str = ""


class Grade(Wire):
    """Axes reported separately; ``passed`` applies the task's pass rule."""

    passed: bool
    diagnosis_score: float = 0.0
    diagnosis_extras: list[str] = Field(default_factory=list)
    localization_score: float = 0.0
    mitigation_passed: bool = False
    safety_passed: bool = True
    within_budget: bool = True
    checks: list[CheckResult] = Field(default_factory=list)
    safety_violations: list[str] = Field(default_factory=list)
    grader_version: str = ""
    task_hash: str = Field(default="", description="content hash of the task files this grade judged against")
    reason: str = ""

