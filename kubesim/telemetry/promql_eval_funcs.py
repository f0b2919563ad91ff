"""PromQL functions: counters over ranges (Prometheus's extrapolated ``rate``/``increase``),
``*_over_time``, math, label manipulation, ``histogram_quantile`` and friends."""

from __future__ import annotations

import calendar
import math
import re
from datetime import datetime, timezone
from typing import Any, Callable

import promql_parser as pp

from .promql_types import (Matrix, PromQLError, Scalar, String, Value, Vector, drop_name, type_name,
                           with_label)
from .tsdb import NAME


def _vec(v: Value, fn: str) -> Vector:
    if not isinstance(v, Vector):
        raise PromQLError(f"expected type instant vector in call to function {fn!r}, got {type_name(v)}")
    return v


def _mat(v: Value, fn: str) -> Matrix:
    if not isinstance(v, Matrix):
        raise PromQLError(f"expected type range vector in call to function {fn!r}, got {type_name(v)}")
    return v


def _num(v: Value, fn: str) -> float:
    if not isinstance(v, Scalar):
        raise PromQLError(f"expected type scalar in call to function {fn!r}, got {type_name(v)}")
    return v.value


def _str(v: Value, fn: str) -> str:
    if not isinstance(v, String):
        raise PromQLError(f"expected type string in call to function {fn!r}, got {type_name(v)}")
    return v.value


# -- range functions --------------------------------------------------------------------------------

def extrapolated(m: Matrix, points: list[tuple[float, float]], counter: bool, rate: bool) -> float | None:
    if len(points) < 2:
        return None
    first_t, first_v = points[0]
    last_t, last_v = points[-1]
    result = last_v - first_v
    if counter:
        prev = 0.0
        for _, v in points:
            if v < prev:
                result += prev
            prev = v
    to_start = first_t - m.start
    to_end = m.end - last_t
    sampled = last_t - first_t
    if sampled <= 0:
        return None
    avg = sampled / (len(points) - 1)
    threshold = avg * 1.1
    if to_start >= threshold:
        to_start = avg / 2
    if counter and result > 0 and first_v >= 0:
        to_zero = sampled * (first_v / result)
        to_start = min(to_start, to_zero)
    if to_end >= threshold:
        to_end = avg / 2
    factor = (sampled + to_start + to_end) / sampled
    if rate:
        factor /= (m.end - m.start)
    return result * factor


def _instant_delta(points: list[tuple[float, float]], rate: bool) -> float | None:
    if len(points) < 2:
        return None
    (t0, v0), (t1, v1) = points[-2], points[-1]
    if t1 == t0:
        return None
    diff = v1 - v0
    if rate:
        if v1 < v0:
            diff = v1
        return diff / (t1 - t0)
    return diff


def _regression(points: list[tuple[float, float]], at: float) -> tuple[float, float]:
    n = len(points)
    xs = [t - at for t, _ in points]
    ys = [v for _, v in points]
    sx, sy = math.fsum(xs), math.fsum(ys)
    sxx = math.fsum(x * x for x in xs)
    sxy = math.fsum(x * y for x, y in zip(xs, ys))
    cov = sxy - sx * sy / n
    var = sxx - sx * sx / n
    slope = cov / var if var else 0.0
    return slope, sy / n - slope * sx / n


def _over_time(name: str, points: list[tuple[float, float]], param: float | None = None) -> float | None:
    vals = [v for _, v in points]
    if not vals:
        return None
    if name == "avg_over_time":
        return math.fsum(vals) / len(vals)
    if name == "sum_over_time":
        return math.fsum(vals)
    if name == "min_over_time":
        return min(vals)
    if name == "max_over_time":
        return max(vals)
    if name == "count_over_time":
        return float(len(vals))
    if name == "last_over_time":
        return vals[-1]
    if name == "present_over_time":
        return 1.0
    if name in ("stddev_over_time", "stdvar_over_time"):
        mean = math.fsum(vals) / len(vals)
        var = math.fsum((v - mean) ** 2 for v in vals) / len(vals)
        return math.sqrt(var) if name == "stddev_over_time" else var
    if name == "quantile_over_time":
        from .promql_eval import quantile

        return quantile(param if param is not None else math.nan, vals)
    if name == "changes":
        return float(sum(1 for a, b in zip(vals, vals[1:]) if a != b and not (math.isnan(a) and math.isnan(b))))
    if name == "resets":
        return float(sum(1 for a, b in zip(vals, vals[1:]) if b < a))
    raise PromQLError(f"function {name} is not supported by kubesim")


OVER_TIME = {"avg_over_time", "sum_over_time", "min_over_time", "max_over_time", "count_over_time",
             "last_over_time", "present_over_time", "stddev_over_time", "stdvar_over_time", "changes", "resets"}


def _range_fn(ev: Any, name: str, args: list[Any], t: float) -> Vector:
    param = None
    if name in ("quantile_over_time",):
        param = _num(ev.eval(args[0], t), name)
        args = args[1:]
    m = _mat(ev.eval(args[0], t), name)
    extra = _num(ev.eval(args[1], t), name) if name == "predict_linear" else None
    out = Vector()
    keep_name = name == "last_over_time"
    for lb, points in m:
        if name in ("rate", "increase", "delta"):
            value = extrapolated(m, points, name != "delta", name == "rate")
        elif name in ("irate", "idelta"):
            value = _instant_delta(points, name == "irate")
        elif name == "deriv":
            value = _regression(points, points[0][0])[0] if len(points) >= 2 else None
        elif name == "predict_linear":
            if len(points) < 2:
                value = None
            else:
                slope, intercept = _regression(points, m.end)
                value = slope * (extra or 0.0) + intercept
        else:
            value = _over_time(name, points, param)
        if value is not None:
            out.append((lb if keep_name else drop_name(lb), value))
    return out


# -- instant functions ------------------------------------------------------------------------------

def _round(x: float, to: float) -> float:
    if to == 0 or math.isnan(x) or math.isinf(x):
        return x
    return math.floor(x / to + 0.5) * to


MATH: dict[str, Callable[[float], float]] = {
    "abs": abs, "ceil": lambda x: x if math.isinf(x) or math.isnan(x) else float(math.ceil(x)),
    "floor": lambda x: x if math.isinf(x) or math.isnan(x) else float(math.floor(x)),
    "exp": lambda x: math.inf if x > 709 else math.exp(x),
    "ln": lambda x: math.nan if x < 0 else (-math.inf if x == 0 else math.log(x)),
    "log2": lambda x: math.nan if x < 0 else (-math.inf if x == 0 else math.log2(x)),
    "log10": lambda x: math.nan if x < 0 else (-math.inf if x == 0 else math.log10(x)),
    "sqrt": lambda x: math.nan if x < 0 else math.sqrt(x),
    "sgn": lambda x: x if math.isnan(x) else float((x > 0) - (x < 0)),
}

DATES: dict[str, Callable[[datetime], float]] = {
    "minute": lambda d: d.minute, "hour": lambda d: d.hour, "month": lambda d: d.month, "year": lambda d: d.year,
    "day_of_month": lambda d: d.day, "day_of_week": lambda d: (d.weekday() + 1) % 7,
    "day_of_year": lambda d: d.timetuple().tm_yday,
    "days_in_month": lambda d: calendar.monthrange(d.year, d.month)[1],
}


def _go_template(replacement: str) -> str:
    """Go regexp Expand syntax ($1, ${1}, $name) → Python's \\g<...>."""
    return re.sub(r"\$(?:\{(\w+)\}|(\w+))", lambda m: f"\\g<{m.group(1) or m.group(2)}>",
                  replacement.replace("\\", "\\\\"))


def _label_replace(v: Vector, dst: str, repl: str, src: str, regex: str) -> Vector:
    try:
        pat = re.compile(f"(?:{regex})\\Z", re.DOTALL)
    except re.error as e:
        raise PromQLError(f'invalid regular expression in label_replace(): {regex}: {e}') from None
    if not re.fullmatch(r"[a-zA-Z_]\w*", dst):
        raise PromQLError(f"invalid destination label name in label_replace(): {dst}")
    out = Vector()
    template = _go_template(repl)
    for lb, x in v:
        m = pat.match(dict(lb).get(src, ""))
        if m is None:
            out.append((lb, x))
            continue
        try:
            value = m.expand(template)
        except (re.error, IndexError):
            value = ""
        out.append((with_label(lb, dst, value), x))
    return out


def histogram_quantile(q: float, v: Vector) -> Vector:
    groups: dict[Any, list[tuple[float, float]]] = {}
    for lb, x in v:
        d = dict(lb)
        le = d.pop("le", None)
        if le is None:
            continue
        try:
            bound = float(le)
        except ValueError:
            continue
        d.pop(NAME, None)
        groups.setdefault(tuple(sorted(d.items())), []).append((bound, x))
    out = Vector()
    for lb, buckets in groups.items():
        out.append((lb, bucket_quantile(q, buckets)))
    return out


def bucket_quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    if math.isnan(q):
        return math.nan
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    buckets = sorted(buckets)
    if len(buckets) < 2 or not math.isinf(buckets[-1][0]):
        return math.nan
    fixed, top = [], 0.0
    for bound, count in buckets:  # ensure monotonic counts
        top = max(top, count)
        fixed.append((bound, top))
    observations = fixed[-1][1]
    if observations == 0:
        return math.nan
    rank = q * observations
    b = next(i for i, (_, c) in enumerate(fixed) if c >= rank)
    if b == len(fixed) - 1:
        return fixed[-2][0]
    if b == 0 and fixed[0][0] <= 0:
        return fixed[0][0]
    start, end, count = 0.0, fixed[b][0], fixed[b][1]
    if b > 0:
        start = fixed[b - 1][0]
        count -= fixed[b - 1][1]
        rank -= fixed[b - 1][1]
    return start + (end - start) * (rank / count) if count else start


def _absent_labels(node: Any) -> tuple:
    vs = getattr(node, "vector_selector", node)
    if type(vs).__name__ != "VectorSelector":
        return ()
    d = {m.name: m.value for m in vs.matchers.matchers if m.op == pp.MatchOp.Equal and m.name != NAME}
    return tuple(sorted(d.items()))


def call_function(ev: Any, node: Any, t: float) -> Value:
    name = node.func.name
    args = list(node.args)
    if name in OVER_TIME or name in ("rate", "increase", "delta", "irate", "idelta", "deriv", "predict_linear",
                                     "quantile_over_time"):
        return _range_fn(ev, name, args, t)
    if name == "time":
        return Scalar(t)
    if name == "vector":
        return Vector([((), _num(ev.eval(args[0], t), name))])
    if name == "scalar":
        v = _vec(ev.eval(args[0], t), name)
        return Scalar(v[0][1] if len(v) == 1 else math.nan)
    if name in ("absent", "absent_over_time"):
        v = ev.eval(args[0], t)
        return Vector() if len(v) else Vector([(_absent_labels(args[0]), 1.0)])  # type: ignore[arg-type]
    if name == "histogram_quantile":
        return histogram_quantile(_num(ev.eval(args[0], t), name), _vec(ev.eval(args[1], t), name))
    if name in MATH or name in ("round", "clamp", "clamp_min", "clamp_max"):
        v = _vec(ev.eval(args[0], t), name)
        rest = [_num(ev.eval(a, t), name) for a in args[1:]]
        if name == "round":
            fn = lambda x: _round(x, rest[0] if rest else 1.0)  # noqa: E731
        elif name == "clamp":
            if rest[0] > rest[1]:
                return Vector()
            fn = lambda x: max(rest[0], min(rest[1], x))  # noqa: E731
        elif name == "clamp_min":
            fn = lambda x: max(rest[0], x)  # noqa: E731
        elif name == "clamp_max":
            fn = lambda x: min(rest[0], x)  # noqa: E731
        else:
            fn = MATH[name]
        return Vector((drop_name(lb), fn(x)) for lb, x in v)
    if name in DATES:
        v = _vec(ev.eval(args[0], t), name) if args else Vector([((), t)])
        return Vector((drop_name(lb), float(DATES[name](datetime.fromtimestamp(x, timezone.utc)))) for lb, x in v)
    if name == "timestamp":
        v = _vec(ev.eval(args[0], t), name)
        return Vector((drop_name(lb), t) for lb, _ in v)
    if name in ("sort", "sort_desc"):
        v = _vec(ev.eval(args[0], t), name)
        return Vector(sorted(v, key=lambda p: p[1], reverse=name == "sort_desc"))
    if name == "label_replace":
        v = _vec(ev.eval(args[0], t), name)
        dst, repl, src, regex = (_str(ev.eval(a, t), name) for a in args[1:5])
        return _label_replace(v, dst, repl, src, regex)
    if name == "label_join":
        v = _vec(ev.eval(args[0], t), name)
        dst, sep, *srcs = (_str(ev.eval(a, t), name) for a in args[1:])
        return Vector((with_label(lb, dst, sep.join(dict(lb).get(s, "") for s in srcs)), x) for lb, x in v)
    raise PromQLError(f"function {name!r} is not supported by kubesim")
