"""PromQL values and errors shared by the parser front end and the evaluator.

An instant vector is a list of ``(labels, value)``; a range vector a list of ``(labels, points)``
with the window it was taken over; labels are sorted ``(name, value)`` tuples so they hash.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from .tsdb import NAME, Labels

Point = tuple[float, float]


class PromQLError(Exception):
    """A query Prometheus would refuse: ``bad_data`` (400) or ``execution`` (422)."""

    def __init__(self, message: str, error_type: str = "bad_data"):
        super().__init__(message)
        self.error_type = error_type

    @property
    def status(self) -> int:
        return {"bad_data": 400, "execution": 422, "timeout": 503}.get(self.error_type, 400)


def execution(message: str) -> PromQLError:
    return PromQLError(message, "execution")


class Vector(list):
    """Instant vector: [(labels, value)]."""


class Matrix(list):
    """Range vector: [(labels, [(t, v), ...])] taken over (start, end]."""

    def __init__(self, items=(), start: float = 0.0, end: float = 0.0):
        super().__init__(items)
        self.start = start
        self.end = end


@dataclass(frozen=True)
class Scalar:
    value: float


@dataclass(frozen=True)
class String:
    value: str


Value = Vector | Matrix | Scalar | String


def drop_name(labels: Labels) -> Labels:
    return tuple(p for p in labels if p[0] != NAME)


def type_name(v: object) -> str:
    return {Vector: "vector", Matrix: "matrix", Scalar: "scalar", String: "string"}.get(type(v), "unknown")


def with_label(labels: Labels, name: str, value: str) -> Labels:
    d = dict(labels)
    if value == "":
        d.pop(name, None)
    else:
        d[name] = value
    return tuple(sorted(d.items()))


def only(labels: Labels, names: set[str]) -> Labels:
    return tuple(p for p in labels if p[0] in names)


def without(labels: Labels, names: set[str]) -> Labels:
    return tuple(p for p in labels if p[0] not in names)


def format_value(x: float) -> str:
    """Go's strconv.FormatFloat(x, 'f', -1, 64), which Prometheus uses for sample values."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    text = repr(float(x))
    if "e" in text or "E" in text:
        text = format(Decimal(text), "f")
    if text.endswith(".0"):
        text = text[:-2]
    return "0" if text == "-0" else text
