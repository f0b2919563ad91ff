"""The Prometheus HTTP API (``/api/v1/...``) over the telemetry TSDB, as one plain function.

``handle(cluster, method, path, query, body)`` answers GET and POST (form bodies) and returns
``(status, headers, body_bytes)``. Paths may carry a prefix: ``/prometheus/api/v1/query`` sees every
namespace; ``/prometheus/namespaces/<ns>/api/v1/query`` and
``/kubesim/v1/namespaces/<ns>/prometheus/api/v1/query`` see only that namespace's series, rules and
alerts. Bodies follow Prometheus exactly: ``{"status": "success", "data": ...}`` or
``{"status": "error", "errorType": "bad_data", "error": "..."}`` with 400/422, never a 500.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Mapping
from urllib.parse import parse_qsl

from . import promql
from .promql_eval import matcher_sets
from .promql_types import PromQLError
from .rules import NamespaceRules, parse_duration
from .tsdb import Matcher

Headers = list[tuple[str, str]]
Answer = tuple[int, Headers, bytes]
JSON_HEADERS: Headers = [("Content-Type", "application/json")]
_PATH = re.compile(r"^(?:/kubesim/v1/namespaces/(?P<ns1>[a-z0-9-]+)/prometheus"
                   r"|/prometheus(?:/namespaces/(?P<ns2>[a-z0-9-]+))?)?(?P<rest>/.*)?$")
_LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
MIN_TIME, MAX_TIME = -9.2e15, 9.2e15


class BadRequest(Exception):
    def __init__(self, message: str, error_type: str = "bad_data", status: int = 400):
        super().__init__(message)
        self.error_type = error_type
        self.status = status


def _answer(status: int, payload: Any) -> Answer:
    body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
    return status, list(JSON_HEADERS), body


def _error(status: int, error_type: str, message: str) -> Answer:
    return _answer(status, {"status": "error", "errorType": error_type, "error": message})


def _pairs(query: Any, body: bytes | None) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if isinstance(query, bytes):
        query = query.decode("latin-1")
    if isinstance(query, str):
        out.extend(parse_qsl(query.lstrip("?"), keep_blank_values=True))
    elif isinstance(query, Mapping):
        for k, v in query.items():
            out.extend((str(k), str(x)) for x in (v if isinstance(v, (list, tuple)) else [v]))
    elif query:
        out.extend((str(k), str(v)) for k, v in query)
    if body:
        out.extend(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    return out


class Params:
    def __init__(self, pairs: list[tuple[str, str]]):
        self.pairs = pairs

    def get(self, name: str) -> str | None:
        for k, v in reversed(self.pairs):
            if k == name:
                return v
        return None

    def all(self, name: str) -> list[str]:
        return [v for k, v in self.pairs if k == name]


def _finite(text: str) -> float | None:
    """``text`` as a finite float, or None (then it may still be a timestamp or a duration)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_time(text: str | None, default: float, name: str) -> float:
    if text is None or text == "":
        return default
    value = _finite(text)
    if value is not None:
        return value
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
        return dt.timestamp()
    except ValueError:
        raise BadRequest(f'invalid parameter "{name}": cannot parse "{text}" to a valid timestamp') from None


def parse_step(text: str | None) -> float:
    if text is None or text == "":
        raise BadRequest('invalid parameter "step": cannot parse "" to a valid duration')
    value = _finite(text)
    if value is not None:
        return value
    try:
        return parse_duration(text)
    except ValueError:
        raise BadRequest(f'invalid parameter "step": cannot parse "{text}" to a valid duration') from None


def rfc3339(unix: float) -> str:
    dt = datetime.fromtimestamp(unix, timezone.utc)
    frac = f"{dt.microsecond:06d}".rstrip("0")
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if frac else "") + "Z"


def go_exponent(v: float) -> str:
    """strconv.FormatFloat(v, 'e', -1, 64): how the alerts API renders values."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == 0:
        return "0e+00"
    digits = len(Decimal(repr(v)).normalize().as_tuple().digits)
    return format(v, f".{max(0, digits - 1)}e")


class PrometheusAPI:
    def __init__(self, cluster: Any, namespace: str | None):
        self.cluster = cluster
        self.tel = cluster.telemetry
        self.namespace = namespace
        self.engine = promql.Engine(self.tel.tsdb, namespace)

    def now(self) -> float:
        return round(self.tel.now_unix(), 3)

    def query(self, p: Params) -> Any:
        q = p.get("query") or ""
        _parse_param(q)
        t = parse_time(p.get("time"), self.now(), "time")
        return promql.render(self.engine.instant(q, t), t)

    def query_range(self, p: Params) -> Any:
        q = p.get("query") or ""
        start = parse_time(p.get("start"), math.nan, "start")
        end = parse_time(p.get("end"), math.nan, "end")
        for name, value in (("start", start), ("end", end)):
            if math.isnan(value):
                raise BadRequest(f'invalid parameter "{name}": cannot parse "" to a valid timestamp')
        step = parse_step(p.get("step"))
        _parse_param(q)
        return promql.render_matrix(self.engine.range(q, start, end, step))

    def _matcher_sets(self, p: Params, required: bool) -> list[list[Matcher]] | None:
        selectors = p.all("match[]")
        if not selectors:
            if required:
                raise BadRequest("no match[] parameter provided")
            return None
        sets = []
        for text in selectors:
            expr = _parse_param(text, "match[]")
            if type(expr).__name__ != "VectorSelector":
                raise BadRequest(f'invalid parameter "match[]": {text} is not a vector selector')
            sets.extend(matcher_sets(expr))
        return sets

    def _series(self, p: Params, required: bool) -> list[Any]:
        start = parse_time(p.get("start"), MIN_TIME, "start")
        end = parse_time(p.get("end"), MAX_TIME, "end")
        sets = self._matcher_sets(p, required)
        tsdb = self.tel.tsdb
        if sets is None:
            return tsdb.all_series(start - 1e-3, end, self.namespace)
        seen, out = set(), []
        for ms in sets:
            for s in tsdb.series_in(ms, start - 1e-3, end, self.namespace):
                if s.labels not in seen:
                    seen.add(s.labels)
                    out.append(s)
        return out

    def series(self, p: Params) -> Any:
        return [dict(s.labels) for s in sorted(self._series(p, True), key=lambda s: s.labels)]

    def labels(self, p: Params) -> Any:
        return sorted({k for s in self._series(p, False) for k, _ in s.labels})

    def label_values(self, p: Params, name: str) -> Any:
        if not _LABEL_NAME.match(name):
            raise BadRequest(f'invalid label name: "{name}"')
        return sorted({s.lmap[name] for s in self._series(p, False) if s.lmap.get(name)})

    def _namespaces(self) -> list[tuple[str, NamespaceRules]]:
        rules = self.tel.rules
        if self.namespace is not None:
            return [(self.namespace, rules[self.namespace])] if self.namespace in rules else []
        return sorted(rules.items())

    @staticmethod
    def _alert_json(a: Any) -> dict[str, Any]:
        return {"labels": dict(a.labels), "annotations": dict(a.annotations), "state": a.state,
                "activeAt": rfc3339(a.active_at), "value": go_exponent(a.value)}

    def rules(self, p: Params) -> Any:
        kind = p.get("type")
        groups = []
        for ns, nr in self._namespaces():
            for gs in nr.groups:
                rules = []
                for rs in gs.rules:
                    r = rs.rule
                    if kind and not r.kind.startswith(kind.rstrip("s").lower()):
                        continue
                    entry: dict[str, Any] = {"name": r.name, "query": r.expr, "labels": dict(r.labels),
                                             "health": rs.health, "evaluationTime": rs.evaluation_time,
                                             "lastEvaluation": rfc3339(rs.last_evaluation or 0), "type": r.kind}
                    if rs.last_error:
                        entry["lastError"] = rs.last_error
                    if r.kind == "alerting":
                        active = [a for a in rs.alerts.values() if a.state != "inactive"]
                        entry.update(state=rs.state, duration=r.for_seconds, keepFiringFor=r.keep_firing_for,
                                     annotations=dict(r.annotations), alerts=[self._alert_json(a) for a in active])
                    rules.append(entry)
                groups.append({"name": gs.group.name, "file": f"namespaces/{ns}/rules.yaml", "rules": rules,
                               "interval": gs.group.interval, "limit": gs.group.limit,
                               "evaluationTime": gs.evaluation_time, "lastEvaluation": rfc3339(gs.last_evaluation or 0)})
        return {"groups": groups}

    def alerts(self, p: Params) -> Any:
        return {"alerts": [self._alert_json(a) for _, nr in self._namespaces() for _, a in nr.alerts()
                           if a.state != "inactive"]}

    def targets(self, p: Params) -> Any:
        value = self.engine.instant("up", self.now())
        active = []
        for labels, up in value:  # type: ignore[union-attr]
            lb = {k: v for k, v in labels if k != "__name__"}
            active.append({"discoveredLabels": {}, "labels": lb, "scrapePool": lb.get("job", ""),
                           "scrapeUrl": f"http://{lb.get('instance', '')}/metrics", "globalUrl":
                           f"http://{lb.get('instance', '')}/metrics",
                           "lastError": "" if up else "connect: connection refused",
                           "lastScrape": rfc3339(self.now()), "lastScrapeDuration": 0.002,
                           "health": "up" if up else "down", "scrapeInterval": f"{int(self.tel.interval)}s",
                           "scrapeTimeout": "10s"})
        return {"activeTargets": active, "droppedTargets": []}

    def dispatch(self, endpoint: str, p: Params) -> Any:
        simple = {"query": self.query, "query_range": self.query_range, "series": self.series,
                  "labels": self.labels, "rules": self.rules, "alerts": self.alerts, "targets": self.targets}
        if endpoint in simple:
            return simple[endpoint](p)
        m = re.fullmatch(r"label/([^/]+)/values", endpoint)
        if m:
            return self.label_values(p, m.group(1))
        if endpoint in ("metadata", "targets/metadata"):
            return {} if endpoint == "metadata" else []
        if endpoint == "query_exemplars":
            return []
        if endpoint == "status/buildinfo":
            return {"version": "2.53.0", "revision": "kubesim", "branch": "HEAD", "buildUser": "kubesim",
                    "buildDate": "20260101-00:00:00", "goVersion": "go1.22.5"}
        if endpoint == "format_query":
            return _parse_param(p.get("query") or "").prettify()
        raise BadRequest(f"unknown API endpoint /api/v1/{endpoint}", "not_found", 404)


def _parse_param(text: str, name: str = "query") -> Any:
    try:
        return promql.parse(text)
    except PromQLError as e:
        raise BadRequest(f'invalid parameter "{name}": {e}') from None


def handle(cluster: Any, method: str, path: str, query: Any = None, body: bytes | None = None,
           namespace: str | None = None) -> Answer:
    """Serve one Prometheus API request; ``namespace`` (or a namespaced path) confines it to one namespace."""
    m = _PATH.match(path or "/")
    if m is None:
        return _error(404, "not_found", f"no Prometheus API at {path}")
    scope = namespace or m.group("ns1") or m.group("ns2")
    rest = (m.group("rest") or "/").rstrip("/") or "/"
    if getattr(cluster, "telemetry", None) is None:
        return _error(503, "unavailable", "telemetry is not attached to this cluster")
    if rest in ("/", "/-/ready", "/-/healthy"):
        return 200, [("Content-Type", "text/plain; charset=utf-8")], b"Prometheus Server is Ready.\n"
    if not rest.startswith("/api/v1/"):
        return _error(404, "not_found", f"no Prometheus API at {path}")
    if method not in ("GET", "POST"):
        return _error(405, "bad_data", f"method {method} not allowed")
    try:
        params = Params(_pairs(query, body if method == "POST" else None))
        data = PrometheusAPI(cluster, scope).dispatch(rest[len("/api/v1/"):], params)
        return _answer(200, {"status": "success", "data": data})
    except BadRequest as e:
        return _error(e.status, e.error_type, str(e))
    except PromQLError as e:
        return _error(e.status, e.error_type, str(e))
    except RecursionError:
        return _error(400, "bad_data", "query is nested too deeply")

