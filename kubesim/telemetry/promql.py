"""PromQL front end: parse with ``promql-parser``, evaluate instant and range queries over the TSDB,
and render results exactly as Prometheus's HTTP API does (``[unix_seconds, "value"]`` pairs).

Anything the parser rejects, or the evaluator does not support, becomes a ``PromQLError`` with
Prometheus's ``bad_data`` type, so clients get a 400 with a message instead of a server error.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import promql_parser as pp

from .promql_eval import Evaluator
from .promql_types import Matrix, PromQLError, Scalar, String, Value, Vector, format_value, type_name
from .tsdb import TSDB, Labels

MAX_QUERY_LENGTH = 64 * 1024
MAX_POINTS = 11_000


def parse(text: str) -> Any:
    """The AST of a query (cached: rules re-run the same expressions every evaluation)."""
    if len(text) > MAX_QUERY_LENGTH:
        raise PromQLError(f"query is longer than {MAX_QUERY_LENGTH} characters")
    return _parse_cached(text)


@functools.lru_cache(maxsize=1024)
def _parse_cached(text: str) -> Any:
    try:
        return pp.parse(text)
    except ValueError as e:
        raise PromQLError(f"1:1: parse error: {e}") from None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # the Rust parser can panic on odd input; that is still bad data
        raise PromQLError(f"1:1: parse error: {e}") from None


def _guarded(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except PromQLError:
        raise
    except RecursionError:
        raise PromQLError("query is nested too deeply") from None
    except (ValueError, TypeError, OverflowError, ZeroDivisionError, IndexError, AttributeError) as e:
        raise PromQLError(f"cannot evaluate query: {e}") from None


class Engine:
    """Evaluates PromQL over one TSDB, optionally confined to one namespace's series."""

    def __init__(self, tsdb: TSDB, namespace: str | None = None):
        self.tsdb = tsdb
        self.namespace = namespace

    def instant(self, query: str, t: float) -> Value:
        expr = parse(query)
        ev = Evaluator(self.tsdb, self.namespace, t, t)
        return _guarded(ev.eval, expr, t)

    def range(self, query: str, start: float, end: float, step: float) -> Matrix:
        if end < start:
            raise PromQLError("end timestamp must not be before start time")
        if step <= 0:
            raise PromQLError("zero or negative query resolution step widths are not accepted. Try a positive integer")
        if (end - start) / step > MAX_POINTS:
            raise PromQLError("exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the "
                              "query resolution (?step=XX)")
        expr = parse(query)
        ev = Evaluator(self.tsdb, self.namespace, start, end)
        series: dict[Labels, list[tuple[float, float]]] = {}
        n = int(math.floor((end - start) / step + 1e-9)) + 1
        for i in range(n):
            t = round(start + i * step, 3)
            v = _guarded(ev.eval, expr, t)
            if isinstance(v, Scalar):
                series.setdefault((), []).append((t, v.value))
            elif isinstance(v, Vector):
                for lb, x in v:
                    series.setdefault(lb, []).append((t, x))
            else:
                raise PromQLError(f'invalid expression type "{_kind(v)}" for range query, must be Scalar or '
                                  f"instant Vector")
        return Matrix(sorted(series.items()), start=start, end=end)


def _kind(v: Value) -> str:
    return {"matrix": "range vector", "vector": "instant vector"}.get(type_name(v), type_name(v))


# -- rendering ------------------------------------------------------------------------------------

def format_time(t: float) -> float | int:
    ms = round(t * 1000)
    return ms // 1000 if ms % 1000 == 0 else ms / 1000


def metric(labels: Labels) -> dict[str, str]:
    return dict(labels)


def render(value: Value, t: float) -> dict[str, Any]:
    """``data`` of an instant query response."""
    if isinstance(value, Scalar):
        return {"resultType": "scalar", "result": [format_time(t), format_value(value.value)]}
    if isinstance(value, String):
        return {"resultType": "string", "result": [format_time(t), value.value]}
    if isinstance(value, Matrix):
        return render_matrix(value)
    return {"resultType": "vector",
            "result": [{"metric": metric(lb), "value": [format_time(t), format_value(x)]} for lb, x in value]}


def render_matrix(m: Matrix) -> dict[str, Any]:
    return {"resultType": "matrix",
            "result": [{"metric": metric(lb), "values": [[format_time(ts), format_value(x)] for ts, x in points]}
                       for lb, points in m]}
