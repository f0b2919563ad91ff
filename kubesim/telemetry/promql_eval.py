"""PromQL evaluation over the TSDB: selectors, subqueries, aggregations; dispatches to the
function and binary-operator modules. Semantics follow Prometheus: 5-minute look-back with stale
markers for instant selectors, left-open windows for range selectors, ``offset`` and ``@``.
"""

from __future__ import annotations

import math
from typing import Any

import promql_parser as pp

from .promql_eval_binary import binary
from .promql_eval_funcs import call_function
from .promql_types import (Matrix, PromQLError, Scalar, String, Value, Vector, drop_name, execution, format_value,
                           only, type_name, with_label, without)
from .tsdb import NAME, TSDB, Matcher

LOOKBACK = 300.0
DEFAULT_SUBQUERY_STEP = 15.0
MAX_SAMPLES = 20_000_000
_OPS = {"MatchOp.Equal": "=", "MatchOp.NotEqual": "!=", "MatchOp.Re": "=~", "MatchOp.NotRe": "!~"}


def _seconds(delta: Any) -> float:
    return 0.0 if delta is None else delta.total_seconds()


def _matcher(m: Any) -> Matcher:
    return Matcher(m.name, _OPS[str(m.op)], m.value)


def matcher_sets(node: Any) -> list[list[Matcher]]:
    """A vector selector's matchers (one list per ``or`` alternative), its metric name included."""
    groups = node.matchers.or_matchers or [node.matchers.matchers]
    sets = []
    for group in groups:
        ms = [_matcher(m) for m in group]
        if node.name:
            ms.insert(0, Matcher(NAME, "=", node.name))
        sets.append(ms)
    return sets


class Evaluator:
    def __init__(self, tsdb: TSDB, namespace: str | None = None, start: float = 0.0, end: float = 0.0,
                 lookback: float = LOOKBACK):
        self.tsdb = tsdb
        self.namespace = namespace
        self.start = start
        self.end = end
        self.lookback = lookback
        self.samples = 0

    # -- dispatch ---------------------------------------------------------------------------------
    def eval(self, node: Any, t: float) -> Value:
        kind = type(node).__name__
        handler = getattr(self, f"_eval_{kind}", None)
        if handler is None:
            raise PromQLError(f"unsupported expression {kind}")
        return handler(node, t)

    def _eval_NumberLiteral(self, node: Any, t: float) -> Value:
        return Scalar(float(node.val))

    def _eval_StringLiteral(self, node: Any, t: float) -> Value:
        return String(node.val)

    def _eval_ParenExpr(self, node: Any, t: float) -> Value:
        return self.eval(node.expr, t)

    def _eval_UnaryExpr(self, node: Any, t: float) -> Value:
        v = self.eval(node.expr, t)
        if isinstance(v, Scalar):
            return Scalar(-v.value)
        if isinstance(v, Vector):
            return Vector((drop_name(lb), -x) for lb, x in v)
        raise PromQLError(f"unary expression only allowed on expressions of type scalar or instant vector, "
                          f"got {type_name(v)}")

    def _eval_BinaryExpr(self, node: Any, t: float) -> Value:
        return binary(node, self.eval(node.lhs, t), self.eval(node.rhs, t))

    def _eval_Call(self, node: Any, t: float) -> Value:
        return call_function(self, node, t)

    # -- selectors --------------------------------------------------------------------------------
    def _ref_time(self, node: Any, t: float) -> float:
        at = getattr(node, "at", None)
        if at is not None:
            if at.type == pp.AtModifierType.Start:
                t = self.start
            elif at.type == pp.AtModifierType.End:
                t = self.end
            else:
                t = at.at.timestamp()
        return t - _seconds(getattr(node, "offset", None))

    def _select(self, node: Any, mint: float, maxt: float) -> list[tuple[Any, list[float], list[float]]]:
        seen: set[Any] = set()
        out = []
        for ms in matcher_sets(node):
            for s, times, values in self.tsdb.select(ms, mint, maxt, self.namespace):
                if s.labels not in seen:
                    seen.add(s.labels)
                    out.append((s, times, values))
                    self.samples += len(values)
        if self.samples > MAX_SAMPLES:
            raise execution("query processing would load too many samples into memory in query execution")
        return out

    def _eval_VectorSelector(self, node: Any, t: float) -> Value:
        ref = self._ref_time(node, t)
        out = Vector()
        for s, _, values in self._select(node, ref - self.lookback, ref):
            v = values[-1]
            if not math.isnan(v):
                out.append((s.labels, v))
        return out

    def _eval_MatrixSelector(self, node: Any, t: float) -> Value:
        vs = node.vector_selector
        ref = self._ref_time(vs, t)
        start = ref - _seconds(node.range)
        out = Matrix(start=start, end=ref)
        for s, times, values in self._select(vs, start, ref):
            points = [(ts, v) for ts, v in zip(times, values) if not math.isnan(v)]
            if points:
                out.append((s.labels, points))
        return out

    def _eval_SubqueryExpr(self, node: Any, t: float) -> Value:
        ref = self._ref_time(node, t)
        rng = _seconds(node.range)
        step = _seconds(node.step) or DEFAULT_SUBQUERY_STEP
        start = ref - rng
        first = math.floor(start / step) * step
        if first <= start:
            first += step
        if (ref - first) / step > 11000:
            raise PromQLError("exceeded maximum resolution of 11,000 points per timeseries in subquery")
        series: dict[Any, list[tuple[float, float]]] = {}
        ts = first
        while ts <= ref + 1e-9:
            v = self.eval(node.expr, ts)
            if isinstance(v, Scalar):
                series.setdefault((), []).append((ts, v.value))
            elif isinstance(v, Vector):
                for lb, x in v:
                    series.setdefault(lb, []).append((ts, x))
            else:
                raise PromQLError(f"subquery is only allowed on instant vector or scalar, got {type_name(v)}")
            ts = round(ts + step, 6)
        return Matrix(series.items(), start=start, end=ref)

    # -- aggregation ------------------------------------------------------------------------------
    def _eval_AggregateExpr(self, node: Any, t: float) -> Value:
        op = str(node.op)
        v = self.eval(node.expr, t)
        if not isinstance(v, Vector):
            raise PromQLError(f"expected type instant vector in aggregation expression, got {type_name(v)}")
        param = self.eval(node.param, t) if node.param is not None else None
        mod = node.modifier
        by = mod is not None and mod.type == pp.AggModifierType.By
        names = set(mod.labels) if mod is not None else set()

        def key(labels: Any) -> Any:
            if mod is None:
                return ()
            return only(labels, names) if by else without(labels, names | {NAME})

        if op in ("topk", "bottomk", "limitk"):
            return self._k_select(op, v, param, key)
        if op == "count_values":
            if not isinstance(param, String):
                raise PromQLError("expected type string in aggregation parameter")
            counts: dict[Any, float] = {}
            for lb, x in v:
                k = with_label(key(lb), param.value, format_value(x))
                counts[k] = counts.get(k, 0.0) + 1
            return Vector(counts.items())
        groups: dict[Any, list[float]] = {}
        for lb, x in v:
            groups.setdefault(key(lb), []).append(x)
        out = Vector()
        for k, xs in groups.items():
            out.append((k, _aggregate(op, xs, param)))
        return out

    def _k_select(self, op: str, v: Vector, param: Value | None, key: Any) -> Vector:
        if not isinstance(param, Scalar):
            raise PromQLError(f"expected type scalar in aggregation parameter of {op}")
        k = int(param.value) if not math.isnan(param.value) else 0
        groups: dict[Any, list[tuple[Any, float]]] = {}
        for lb, x in v:
            groups.setdefault(key(lb), []).append((lb, x))
        out = Vector()
        for items in groups.values():
            if op == "topk":
                items = sorted(items, key=lambda p: (math.isnan(p[1]), -p[1] if not math.isnan(p[1]) else 0))
            elif op == "bottomk":
                items = sorted(items, key=lambda p: (math.isnan(p[1]), p[1] if not math.isnan(p[1]) else 0))
            out.extend(items[:max(0, k)])
        return out


def _aggregate(op: str, xs: list[float], param: Value | None) -> float:
    n = len(xs)
    if op == "sum":
        return math.fsum(xs)
    if op == "avg":
        return math.fsum(xs) / n
    if op == "count":
        return float(n)
    if op == "group":
        return 1.0
    if op == "max":
        real = [x for x in xs if not math.isnan(x)]
        return max(real) if real else math.nan
    if op == "min":
        real = [x for x in xs if not math.isnan(x)]
        return min(real) if real else math.nan
    if op in ("stddev", "stdvar"):
        mean = math.fsum(xs) / n
        var = math.fsum((x - mean) ** 2 for x in xs) / n
        return math.sqrt(var) if op == "stddev" else var
    if op == "quantile":
        if not isinstance(param, Scalar):
            raise PromQLError("expected type scalar in aggregation parameter of quantile")
        return quantile(param.value, xs)
    raise PromQLError(f"aggregation {op} is not supported by kubesim")


def quantile(q: float, xs: list[float]) -> float:
    if not xs or math.isnan(q):
        return math.nan
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    s = sorted(xs)
    rank = q * (len(s) - 1)
    lo = max(0, math.floor(rank))
    hi = min(len(s) - 1, lo + 1)
    w = rank - math.floor(rank)
    return s[lo] * (1 - w) + s[hi] * w

