"""PromQL binary operators: arithmetic, comparison (filtering or ``bool``) and set operators, with
vector matching (``on``/``ignoring``, ``group_left``/``group_right``) as Prometheus does it."""

from __future__ import annotations

import math
from typing import Any

import promql_parser as pp

from .promql_types import PromQLError, Scalar, Value, Vector, drop_name, execution, only, type_name, without
from .tsdb import NAME

ARITHMETIC = frozenset(("+", "-", "*", "/", "%", "^", "atan2"))
COMPARISON = frozenset(("==", "!=", ">", "<", ">=", "<="))
SET_OPS = frozenset(("and", "or", "unless"))


def _div(a: float, b: float) -> float:
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _mod(a: float, b: float) -> float:
    if b == 0 or math.isinf(a) or math.isnan(a) or math.isnan(b):
        return math.nan
    return math.fmod(a, b)


def _pow(a: float, b: float) -> float:
    try:
        return math.pow(a, b)
    except OverflowError:
        return math.inf
    except ValueError:
        return math.nan


def arith(op: str, a: float, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return _div(a, b)
    if op == "%":
        return _mod(a, b)
    if op == "^":
        return _pow(a, b)
    if op == "atan2":
        return math.atan2(a, b)
    raise PromQLError(f"operator {op!r} is not supported by kubesim")


def compare(op: str, a: float, b: float) -> bool:
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if op == ">":
        return a > b
    if op == "<":
        return a < b
    if op == ">=":
        return a >= b
    return a <= b


def elem(op: str, a: float, b: float) -> tuple[float, bool]:
    if op in COMPARISON:
        return a, compare(op, a, b)
    return arith(op, a, b), True


def binary(node: Any, lhs: Value, rhs: Value) -> Value:
    op = str(node.op)
    mod = node.modifier
    return_bool = bool(mod and mod.return_bool)
    if isinstance(lhs, Scalar) and isinstance(rhs, Scalar):
        if op in COMPARISON:
            return Scalar(1.0 if compare(op, lhs.value, rhs.value) else 0.0)
        return Scalar(arith(op, lhs.value, rhs.value))
    if not isinstance(lhs, (Scalar, Vector)) or not isinstance(rhs, (Scalar, Vector)):
        bad = lhs if not isinstance(lhs, (Scalar, Vector)) else rhs
        raise PromQLError(f"binary expression must contain only scalar and instant vector types, got {type_name(bad)}")
    if op in SET_OPS:
        if not (isinstance(lhs, Vector) and isinstance(rhs, Vector)):
            raise PromQLError(f"set operator {op!r} not allowed in binary scalar expression")
        return _set_op(op, lhs, rhs, mod)
    if isinstance(lhs, Vector) and isinstance(rhs, Vector):
        return _vector_op(op, lhs, rhs, mod, return_bool)
    return _scalar_op(op, lhs, rhs, return_bool)


def _scalar_op(op: str, lhs: Value, rhs: Value, return_bool: bool) -> Vector:
    swap = isinstance(lhs, Scalar)
    vec: Vector = rhs if swap else lhs  # type: ignore[assignment]
    s = (lhs if swap else rhs).value  # type: ignore[union-attr]
    out = Vector()
    drop = op in ARITHMETIC or return_bool
    for lb, x in vec:
        a, b = (s, x) if swap else (x, s)
        value, keep = elem(op, a, b)
        if op in COMPARISON and swap:
            value = x
        if return_bool:
            value, keep = (1.0 if keep else 0.0), True
        if keep:
            out.append((drop_name(lb) if drop else lb, value))
    return out


def _signature_fn(mod: Any):
    matching = mod.matching if mod is not None else None
    names = set(matching.labels) if matching is not None else set()
    if matching is not None and matching.type == pp.LabelModifierType.Include:
        return (lambda lb: only(lb, names)), True, names
    return (lambda lb: without(lb, names | {NAME})), False, names


def _set_op(op: str, lhs: Vector, rhs: Vector, mod: Any) -> Vector:
    sig, _, _ = _signature_fn(mod)
    if op == "and":
        right = {sig(lb) for lb, _ in rhs}
        return Vector((lb, x) for lb, x in lhs if sig(lb) in right)
    if op == "unless":
        right = {sig(lb) for lb, _ in rhs}
        return Vector((lb, x) for lb, x in lhs if sig(lb) not in right)
    left = {sig(lb) for lb, _ in lhs}
    return Vector(list(lhs) + [(lb, x) for lb, x in rhs if sig(lb) not in left])


def _fmt(labels: Any) -> str:
    return "{" + ", ".join(f'{k}="{v}"' for k, v in labels) + "}"


def _vector_op(op: str, lhs: Vector, rhs: Vector, mod: Any, return_bool: bool) -> Vector:
    sig, on, names = _signature_fn(mod)
    card = mod.card if mod is not None else pp.VectorMatchCardinality.OneToOne
    group_labels = list(mod.group_labels or []) if mod is not None else []
    if card == pp.VectorMatchCardinality.ManyToMany:
        raise PromQLError("many-to-many matching is only allowed for set operators")
    swapped = card == pp.VectorMatchCardinality.OneToMany
    many, one = (rhs, lhs) if swapped else (lhs, rhs)
    one_side: dict[Any, tuple[Any, float]] = {}
    for lb, x in one:
        k = sig(lb)
        if k in one_side:
            side = "left" if swapped else "right"
            raise execution(f"found duplicate series for the match group {_fmt(k)} on the {side} hand-side of the "
                            f"operation: [{_fmt(lb)}, {_fmt(one_side[k][0])}];many-to-many matching not allowed: "
                            f"matching labels must be unique on one side")
        one_side[k] = (lb, x)
    drop = op in ARITHMETIC or return_bool
    out = Vector()
    seen_sigs: set[Any] = set()
    seen_results: set[Any] = set()
    for lb, x in many:
        k = sig(lb)
        match = one_side.get(k)
        if match is None:
            continue
        if card == pp.VectorMatchCardinality.OneToOne:
            if k in seen_sigs:
                raise execution("multiple matches for labels: many-to-one matching must be explicit "
                                "(group_left/group_right)")
            seen_sigs.add(k)
        a, b = (match[1], x) if swapped else (x, match[1])
        value, keep = elem(op, a, b)
        if return_bool:
            value, keep = (1.0 if keep else 0.0), True
        if not keep:
            continue
        metric = drop_name(lb) if drop else lb
        if card == pp.VectorMatchCardinality.OneToOne:
            metric = only(metric, names) if on else without(metric, names)
        if group_labels:
            d = dict(metric)
            src = dict(match[0])
            for name in group_labels:
                if src.get(name):
                    d[name] = src[name]
                else:
                    d.pop(name, None)
            metric = tuple(sorted(d.items()))
        if card != pp.VectorMatchCardinality.OneToOne and metric in seen_results:
            raise execution(f"multiple matches for labels: grouping labels must ensure unique matches "
                            f"(result {_fmt(metric)})")
        seen_results.add(metric)
        out.append((metric, value))
    return out
