"""Outcome checks as a task declares them: ``- <type>: {args}``, judged on the final cluster state.

The grader (``ontrial.graders.checks``) evaluates them; this module only fixes their shape.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from .kinds import KINDS


class CheckSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def describe(self) -> str:
        """A short, stable rendering used as the check's name in results."""
        return ", ".join(f"{k}={v}" for k, v in self.model_dump(exclude_defaults=False).items())


def _kind(kind: str) -> str:
    if kind not in KINDS:
        raise PydanticCustomError("unknown_kind", "unknown kind '{kind}' (known: {known})",
                                  {"kind": kind, "known": ", ".join(sorted(KINDS))})
    return kind


_PATH_TOKEN = re.compile(r"""
    \.?(?P<key>[A-Za-z0-9_\-$]+)           # .name
  | \[(?P<index>\d+)\]                     # [0]
  | \[(?P<sel_key>[A-Za-z0-9_\-.]+)=(?P<sel_val>[^\]]+)\]   # [name=api]
  | \[(?P<q>["'])(?P<quoted>.+?)(?P=q)\]   # ['app.kubernetes.io/name']
""", re.VERBOSE)

PathPart = str | int | tuple[str, str]


def parse_field_path(path: str) -> list[PathPart]:
    """'spec.template.spec.containers[name=api].image' -> ['spec', ..., ('name', 'api'), 'image'].

    ValueError names the position of anything that is not a path token.
    """
    parts: list[PathPart] = []
    pos = 0
    while pos < len(path):
        m = _PATH_TOKEN.match(path, pos)
        if not m or m.end() == pos or (pos == 0 and path.startswith(".")):
            raise ValueError(f"bad field path {path!r} at character {pos + 1}")
        if m.group("key") is not None:
            parts.append(m.group("key"))
        elif m.group("index") is not None:
            parts.append(int(m.group("index")))
        elif m.group("sel_key") is not None:
            parts.append((m.group("sel_key"), m.group("sel_val")))
        else:
            parts.append(m.group("quoted"))
        pos = m.end()
    if not parts:
        raise ValueError("empty field path")
    return parts


def _valid_path(path: str) -> str:
    try:
        parse_field_path(path)
    except ValueError as exc:
        raise PydanticCustomError("field_path", "{problem}", {"problem": str(exc)}) from None
    return path


class RolloutComplete(CheckSpec):
    """observedGeneration current, updated == replicas == available, no crash-looping pod in the current RS."""

    deployment: str = Field(min_length=1)


class PodsReady(CheckSpec):
    selector: str = Field(min_length=1)
    min: int = Field(default=1, ge=0)


class ObjectRef(CheckSpec):
    kind: str
    name: str = Field(min_length=1)

    check_kind = field_validator("kind")(_kind)


class FieldEquals(ObjectRef):
    """``path`` is dotted JSON (camelCase) with ``[0]`` indexes or ``[name=x]`` list selectors."""

    path: str = Field(min_length=1)
    value: Any

    check_path = field_validator("path")(_valid_path)


class FieldSet(ObjectRef):
    """The field exists and is not empty (a restored ConfigMap key, a re-added env var)."""

    path: str = Field(min_length=1)

    check_path = field_validator("path")(_valid_path)


class QuantityAtLeast(ObjectRef):
    """A Kubernetes quantity (``512Mi``, ``250m``) at ``path`` is present and at least ``value``."""

    path: str = Field(min_length=1)
    value: str | int | float

    check_path = field_validator("path")(_valid_path)

    @field_validator("value")
    @classmethod
    def _quantity(cls, value: str | int | float) -> str | int | float:
        from kubernetes.utils import parse_quantity

        try:
            parse_quantity(value)
        except ValueError:
            raise PydanticCustomError("quantity", "not a Kubernetes quantity: '{v}'", {"v": value}) from None
        return value


class FieldIn(ObjectRef):
    """The field holds one of ``values`` (several fixes can be right: a rollback or a forward fix)."""

    path: str = Field(min_length=1)
    values: list[Any] = Field(min_length=1)

    check_path = field_validator("path")(_valid_path)


class FieldNotIn(ObjectRef):
    """The field holds none of ``values`` (e.g. the defective image tag is gone); an unset field passes,
    a missing object fails."""

    path: str = Field(min_length=1)
    values: list[Any] = Field(min_length=1)

    check_path = field_validator("path")(_valid_path)


class Metric(CheckSpec):
    """A PromQL instant query on the trial namespace's metrics: every returned sample within
    [min, max]. ``empty`` says what a query returning no sample means (``fail`` by default);
    ``unavailable`` what a cluster without a metrics source means (``fail``, or ``skip``: the check
    passes, saying it was skipped — for a check that sharpens a task whose other checks stand alone)."""

    query: str = Field(min_length=1)
    min: float | None = None
    max: float | None = None
    empty: Literal["pass", "fail"] = "fail"
    unavailable: Literal["fail", "skip"] = "fail"

    @model_validator(mode="after")
    def _bounded(self) -> "Metric":
        if self.min is None and self.max is None:
            raise PydanticCustomError("metric_bounds", "give min, max or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise PydanticCustomError("metric_bounds", "min must not exceed max")
        return self


class NoCrashloop(CheckSpec):
    selector: str = Field(min_length=1)


class ReplicasAtLeast(CheckSpec):
    deployment: str = Field(min_length=1)
    n: int = Field(ge=1)


CHECK_TYPES: dict[str, type[CheckSpec]] = {
    "rollout_complete": RolloutComplete,
    "pods_ready": PodsReady,
    "field_equals": FieldEquals,
    "field_set": FieldSet,
    "quantity_at_least": QuantityAtLeast,
    "field_in": FieldIn,
    "field_not_in": FieldNotIn,
    "exists": ObjectRef,
    "not_exists": ObjectRef,
    "no_crashloop": NoCrashloop,
    "replicas_at_least": ReplicasAtLeast,
    "metric": Metric,
}


class OutcomeCheck(BaseModel):
    """One check: a mapping with exactly one key, the check type (``- rollout_complete: {deployment: x}``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    rollout_complete: RolloutComplete | None = None
    pods_ready: PodsReady | None = None
    field_equals: FieldEquals | None = None
    field_set: FieldSet | None = None
    quantity_at_least: QuantityAtLeast | None = None
    field_in: FieldIn | None = None
    field_not_in: FieldNotIn | None = None
    exists: ObjectRef | None = None
    not_exists: ObjectRef | None = None
    no_crashloop: NoCrashloop | None = None
    replicas_at_least: ReplicasAtLeast | None = None
    metric: Metric | None = None

    @model_validator(mode="before")
    @classmethod
    def _single_known_key(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        unknown = [k for k in data if k not in CHECK_TYPES]
        if unknown:
            raise PydanticCustomError("check_type", "unknown check type '{name}' (known: {known})",
                                      {"name": str(unknown[0]), "known": ", ".join(CHECK_TYPES)})
        if len(data) != 1:
            raise PydanticCustomError("check_count", "a check has exactly one type key, got {n}", {"n": len(data)})
        return {key: ({} if value is None else value) for key, value in data.items()}

    @property
    def type(self) -> str:
        for name in CHECK_TYPES:
            if getattr(self, name) is not None:
                return name
        raise AssertionError("validated check has a type")

    @property
    def spec(self) -> CheckSpec:
        return getattr(self, self.type)

    @property
    def name(self) -> str:
        return f"{self.type}({self.spec.describe()})"

    @classmethod
    def of(cls, type_: str, **args: Any) -> OutcomeCheck:
        """Build a check in code: ``OutcomeCheck.of("exists", kind="ConfigMap", name="x")``."""
        return cls.model_validate({type_: args})
