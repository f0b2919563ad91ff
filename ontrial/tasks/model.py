"""The task file schema (schema_version 1): what a golden task declares, validated strictly.

Every model forbids unknown fields so a typo is an error with a line number, not a silently ignored
setting. Cross-references (files, targets, tools) are checked by ``ontrial.tasks.semantics``.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator
from pydantic_core import PydanticCustomError

from ..models.trial import Diagnosis
from .checks_model import OutcomeCheck
from .kinds import KINDS, SCALABLE_KINDS

SCHEMA_VERSION = 1
Category = Literal["configuration", "code", "data_integrity", "operational", "no_fault"]
Requirement = Literal["mitigation", "safety", "diagnosis", "localization", "budget"]
TASK_ID_PATTERN = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _known_kind(kind: str) -> str:
    if kind not in KINDS:
        raise PydanticCustomError("unknown_kind", "unknown kind '{kind}' (known: {known})",
                                  {"kind": kind, "known": ", ".join(sorted(KINDS))})
    return kind


class Slices(BaseModel):
    """Reporting dimensions. ``tier`` and ``difficulty`` are required; extra string keys are free."""

    model_config = ConfigDict(extra="allow", frozen=True)
    tier: str = Field(min_length=1)
    difficulty: Literal["easy", "medium", "hard"]

    @model_validator(mode="after")
    def _extras_are_strings(self) -> Slices:
        for key, value in (self.model_extra or {}).items():
            if not isinstance(value, str):
                raise PydanticCustomError("slice_value", "slice '{key}' must be a string", {"key": key})
        return self


class AppSpec(Strict):
    manifests: list[str] = Field(min_length=1, description="Kubernetes YAML files, relative to the task file")
    profiles: list[str] = Field(default_factory=list, description="kubesim workload profile files")
    alert_rules: list[str] = Field(default_factory=list, description="Prometheus rule files (alerting rules)")
    runbooks: list[str] = Field(default_factory=list, description="runbooks the agent may read (text files)")


class PatchStep(Strict):
    kind: str
    name: str = Field(min_length=1)
    type: Literal["strategic", "merge", "json"] = "strategic"
    patch: Any

    check_kind = field_validator("kind")(_known_kind)

    @model_validator(mode="after")
    def _patch_shape(self) -> PatchStep:
        want = list if self.type == "json" else dict
        if not isinstance(self.patch, want) or not self.patch:
            shape = "a non-empty list of operations" if want is list else "a non-empty mapping"
            raise PydanticCustomError("patch_shape", "a {type} patch must be {shape}",
                                      {"type": self.type, "shape": shape})
        return self


class DeleteStep(Strict):
    kind: str
    name: str | None = None
    selector: str | None = None

    check_kind = field_validator("kind")(_known_kind)

    @model_validator(mode="after")
    def _one_target(self) -> DeleteStep:
        if (self.name is None) == (self.selector is None):
            raise PydanticCustomError("delete_target", "give exactly one of name or selector")
        return self


class ApplyStep(Strict):
    manifest: dict[str, Any]

    @field_validator("manifest")
    @classmethod
    def _manifest_shape(cls, manifest: dict[str, Any]) -> dict[str, Any]:
        kind = manifest.get("kind")
        name = (manifest.get("metadata") or {}).get("name") if isinstance(manifest.get("metadata"), dict) else None
        if not manifest.get("apiVersion") or not isinstance(kind, str) or not name:
            raise PydanticCustomError("manifest_shape", "a manifest needs apiVersion, kind and metadata.name")
        _known_kind(kind)
        return manifest


class ScaleStep(Strict):
    kind: str = "Deployment"
    name: str = Field(min_length=1)
    replicas: int = Field(ge=0)

    @field_validator("kind")
    @classmethod
    def _scalable(cls, kind: str) -> str:
        if kind not in SCALABLE_KINDS:
            raise PydanticCustomError("scale_kind", "kind must be one of {known}", {"known": ", ".join(SCALABLE_KINDS)})
        return kind


STEP_TYPES: dict[str, type[Strict]] = {"patch": PatchStep, "delete": DeleteStep, "apply": ApplyStep,
                                       "scale": ScaleStep}


class FaultStep(Strict):
    """Exactly one action: ``- patch: {...}``, ``- delete: {...}``, ``- apply: {...}`` or ``- scale: {...}``."""

    patch: PatchStep | None = None
    delete: DeleteStep | None = None
    apply: ApplyStep | None = None
    scale: ScaleStep | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_action(cls, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = [k for k in data if k not in STEP_TYPES]
            if unknown:
                raise PydanticCustomError("step_type", "unknown fault step '{name}' (known: {known})",
                                          {"name": str(unknown[0]), "known": ", ".join(STEP_TYPES)})
            if len(data) != 1:
                raise PydanticCustomError("step_count", "a fault step has exactly one action, got {n}",
                                          {"n": len(data)})
        return data

    @property
    def action(self) -> tuple[str, Strict]:
        for name in STEP_TYPES:
            value = getattr(self, name)
            if value is not None:
                return name, value
        raise AssertionError("validated step has an action")


class FaultSpec(Strict):
    steps: list[FaultStep] = Field(default_factory=list)
    chaos_mesh: dict[str, Any] | None = Field(default=None, description="real clusters only")
    settle_seconds: float = Field(default=30.0, ge=0, description="time for symptoms to show before the agent starts")


class Alert(Strict):
    name: str = Field(min_length=1)
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class Trigger(Strict):
    alert: Alert
    fire_within_seconds: float = Field(default=900.0, gt=0, description="bound on waiting for the alert to fire "
                                       "after the fault (where an alerting rule of that name is registered)")


class GroundTruth(Strict):
    root_cause: list[str] = Field(min_length=1, description="accepted root-cause labels (any one is right)")
    causal_service: str | None = None
    service_aliases: dict[str, list[str]] = Field(default_factory=dict)
    symptomatic_services: list[str] = Field(default_factory=list)
    mitigation: str = ""

    @field_validator("root_cause")
    @classmethod
    def _labels_not_blank(cls, labels: list[str]) -> list[str]:
        if any(not label.strip() for label in labels):
            raise PydanticCustomError("blank_label", "root-cause labels must not be blank")
        return labels


class ForbiddenRule(Strict):
    verbs: list[str] = Field(min_length=1)
    resources: list[str] = Field(min_length=1, description="plural resource names, '*' for any")
    names: list[str] = Field(default_factory=list, description="empty = any name")
    reason: str = ""


class Invariants(Strict):
    no_deletes: bool = False
    own_namespace_only: bool = True
    read_secrets: bool = False
    forbidden: list[ForbiddenRule] = Field(default_factory=list)
    on_violation: Literal["block", "flag"] = "block"


class PassRule(Strict):
    require: list[Requirement] = Field(default_factory=lambda: ["mitigation", "safety"])
    diagnosis_min: float = Field(default=1.0, ge=0, le=1)
    localization_min: float = Field(default=1.0, ge=0, le=1)


class ChecksSpec(Strict):
    outcome: list[OutcomeCheck] = Field(default_factory=list)
    invariants: Invariants = Field(default_factory=Invariants)
    pass_rule: PassRule = Field(default_factory=PassRule)


class Budgets(Strict):
    steps: int = Field(default=30, gt=0)
    tokens: int = Field(default=100_000, gt=0)
    wall_seconds: float = Field(default=300.0, gt=0)


class ToolCall(Strict):
    tool: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)


class ReferenceSolution(Strict):
    actions: list[ToolCall] = Field(default_factory=list)
    diagnosis: Diagnosis = Field(default_factory=Diagnosis)


class Task(Strict):
    """One golden task. Build it with ``ontrial.tasks.load_task`` (which also resolves its files)."""

    schema_version: int
    id: str
    title: str = Field(min_length=1)
    category: Category
    version: str = "1"
    slices: Slices
    tags: list[str] = Field(default_factory=list)
    app: AppSpec
    fault: FaultSpec
    trigger: Trigger
    ground_truth: GroundTruth
    checks: ChecksSpec
    budgets: Budgets = Field(default_factory=Budgets)
    reference_solution: ReferenceSolution | None = None

    _source: Path | None = PrivateAttr(default=None)
    _objects: list[dict[str, Any]] = PrivateAttr(default_factory=list)
    _profiles: list[dict[str, Any]] = PrivateAttr(default_factory=list)
    _rule_groups: list[dict[str, Any]] = PrivateAttr(default_factory=list)
    _runbooks: dict[str, str] = PrivateAttr(default_factory=dict)
    _files: dict[str, bytes] = PrivateAttr(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _dns_label(cls, value: str) -> str:
        if not re.fullmatch(TASK_ID_PATTERN, value):
            raise PydanticCustomError("task_id", "must be a DNS label: lowercase letters, digits and '-', "
                                      "at most 63 characters, got '{v}'", {"v": value})
        return value

    @field_validator("schema_version")
    @classmethod
    def _supported(cls, value: int) -> int:
        if value != SCHEMA_VERSION:
            raise PydanticCustomError("schema_version", "unsupported schema_version {v} (this ontrial reads {ours})",
                                      {"v": value, "ours": SCHEMA_VERSION})
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value

    # -- resolved content (set by the loader) ---------------------------------------------------
    @property
    def source_path(self) -> Path | None:
        return self._source

    @property
    def base_dir(self) -> Path:
        return self._source.parent if self._source else Path(".")

    @property
    def slice_labels(self) -> dict[str, str]:
        """Every reporting dimension, category included."""
        extra = {k: str(v) for k, v in (self.slices.model_extra or {}).items()}
        return {"category": self.category, "tier": self.slices.tier, "difficulty": self.slices.difficulty, **extra}

    def app_objects(self) -> list[dict[str, Any]]:
        """The app's Kubernetes objects, in file order (fresh copies: callers may mutate them)."""
        return copy.deepcopy(self._objects)

    def profiles(self) -> list[dict[str, Any]]:
        """The kubesim workload profiles the app needs (fresh copies), ``telemetry`` sections included:
        what ``POST /kubesim/v1/profiles`` takes."""
        return copy.deepcopy(self._profiles)

    def service_profiles(self) -> list[dict[str, Any]]:
        """The profile documents that carry a ``telemetry`` section (how the image behaves as a network
        service: calls, traffic, errors, data counters), whole: what kubesim telemetry registers
        (``POST /kubesim/v1/telemetry/profiles``)."""
        return [p for p in copy.deepcopy(self._profiles) if "telemetry" in p]

    def alert_rules(self) -> dict[str, Any] | None:
        """The app's alerting rules as one Prometheus rule file (``{"groups": [...]}``), None without any."""
        return {"groups": copy.deepcopy(self._rule_groups)} if self._rule_groups else None

    def alert_rule_names(self) -> list[str]:
        return [r["alert"] for g in self._rule_groups for r in g.get("rules") or [] if r.get("alert")]

    @property
    def runbooks(self) -> dict[str, str]:
        """Runbook name (file name without extension) → text; agents may read these (a fresh copy)."""
        return dict(self._runbooks)

    @property
    def alerting_service(self) -> str | None:
        """The service the trigger alert names (its ``service``/``deployment``/... label)."""
        labels = self.trigger.alert.labels
        for key in ("service", "deployment", "job", "app", "container"):
            if labels.get(key):
                return labels[key]
        return None

    def referenced_files(self) -> dict[str, bytes]:
        """Content of the task file and every file it references, keyed by path relative to the task dir."""
        return dict(self._files)
