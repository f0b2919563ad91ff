"""The HTTP API's request bodies and settings (see ``worker.api``)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

WORKFLOW_ID_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AgentBody(Body):
    kind: str = Field(min_length=1)
    name: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)


class AliasChanged(Body):
    """A model alias (``prod-chat``) now points at a new model version: gate that version."""

    alias: str = Field(min_length=1, max_length=100)
    model_version: str = Field(min_length=1, max_length=200)
    suite: str | None = Field(default=None, max_length=200, description="baseline lineage (default: the alias)")
    tasks: str | None = Field(default=None, description="task file or directory as the worker sees it")
    agent: AgentBody | None = None
    trials: int | None = Field(default=None, ge=1, le=100)
    concurrency: int | None = Field(default=None, ge=1, le=500)
    mode: Literal["regression", "capability"] = "regression"
    baseline_run_id: str | None = None

    @field_validator("alias", "model_version")
    @classmethod
    def _visible(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()

    def workflow_id(self) -> str:
        """``gate-<alias>-<model version>``: the same webhook (retried, duplicated) names the same run.

        Characters unsafe in a URL path become ``-``; if that changed anything, a short hash of the
        original pair keeps two different versions from sharing a run."""
        raw = f"{self.alias}-{self.model_version}"
        safe = WORKFLOW_ID_UNSAFE.sub("-", raw)
        if safe != raw:
            safe += "-" + hashlib.sha256(f"{self.alias}\0{self.model_version}".encode()).hexdigest()[:8]
        return f"gate-{safe}"


class OverrideBody(Body):
    approver: str = Field(min_length=1, max_length=200)
    reason: str = Field(min_length=1, max_length=2000)
    promote: bool = False

    @field_validator("approver", "reason")
    @classmethod
    def _visible(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()


@dataclass(frozen=True)
class ApiSettings:
    """Where gate runs started by the API run, and their defaults (paths as the workers see them)."""

    task_queue: str = "ontrial"
    tasks: str | None = None
    kubeconfig: str | None = None
    sandbox_kind: str = "kubernetes"
    artifacts: str = ".artifacts"
    results_url: str = "sqlite:///.ontrial/results.db"
    agent: str = "reference"
    trials: int = 5
    concurrency: int = 4
    decision_window: timedelta = timedelta(hours=24)
    promote_on_pass: bool = False
