"""Alerting and recording rules in Prometheus's rule-file format, evaluated on the simulated clock.

Rules belong to a namespace and see only that namespace's series. Alerts follow Prometheus's state
machine: a new result is *pending*, becomes *firing* once it has been active for ``for``, and is
*resolved* (kept 15 minutes for notification) when the expression stops returning it, unless
``keep_firing_for`` holds it. Each evaluation also writes the ``ALERTS`` series.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

import yaml

from .promql import Engine, parse
from .promql_types import PromQLError, Scalar, Vector, drop_name
from .templates import expand
from .tsdb import NAME, TSDB, Labels

RESOLVED_RETENTION = 15 * 60.0
_GROUP_KEYS = {"name", "interval", "rules", "limit", "query_offset", "labels"}
_RULE_KEYS = {"alert", "record", "expr", "for", "keep_firing_for", "labels", "annotations"}


class RuleError(ValueError):
    """A rule file Prometheus would refuse to load."""


@dataclass(frozen=True)
class Rule:
    kind: str  # "alerting" | "recording"
    name: str
    expr: str
    for_seconds: float = 0.0
    keep_firing_for: float = 0.0
    labels: tuple[tuple[str, str], ...] = ()
    annotations: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Group:
    name: str
    interval: float
    rules: tuple[Rule, ...]
    limit: int = 0


_DURATION = re.compile(r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$")
_UNITS = (365 * 86400, 7 * 86400, 86400, 3600, 60, 1, 0.001)


def parse_duration(text: str) -> float:
    """Prometheus's model.ParseDuration ("0", "90s", "1h30m", "2d"), in seconds; ValueError if malformed."""
    text = text.strip()
    if text == "0":
        return 0.0
    m = _DURATION.match(text)
    if not text or m is None:
        raise ValueError(f"not a valid duration string: {text!r}")
    return float(sum(int(g) * unit for g, unit in zip(m.groups(), _UNITS) if g))


def _duration(value: Any, where: str) -> float:
    if value is None:
        return 0.0
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    try:
        return parse_duration(str(value))
    except ValueError:
        raise RuleError(f"{where}: not a valid duration string: {value!r}") from None


def _string_map(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise RuleError(f"{where}: must be a mapping of strings")
    return tuple(sorted((str(k), "" if v is None else str(v)) for k, v in value.items()))


def _parse_rule(data: Any, where: str) -> Rule:
    if not isinstance(data, Mapping):
        raise RuleError(f"{where}: must be a mapping")
    unknown = set(data) - _RULE_KEYS
    if unknown:
        raise RuleError(f"{where}: field {sorted(unknown)[0]} not found in type rulefmt.Rule")
    alert, record = data.get("alert"), data.get("record")
    if bool(alert) == bool(record):
        raise RuleError(f"{where}: one of 'record' or 'alert' must be set")
    expr = data.get("expr")
    if not isinstance(expr, (str, int, float)) or str(expr).strip() == "":
        raise RuleError(f"{where}: field 'expr' must be set in rule")
    try:
        parse(str(expr))
    except PromQLError as e:
        raise RuleError(f"{where}: could not parse expression: {e}") from None
    if record and (data.get("annotations") or data.get("for")):
        raise RuleError(f"{where}: invalid field 'annotations' or 'for' in recording rule")
    return Rule("alerting" if alert else "recording", str(alert or record), str(expr),
                _duration(data.get("for"), f"{where}.for"), _duration(data.get("keep_firing_for"), where),
                _string_map(data.get("labels"), f"{where}.labels"),
                _string_map(data.get("annotations"), f"{where}.annotations"))


def parse_rule_file(data: Any, default_interval: float = 15.0) -> list[Group]:
    """Groups from a rule file (YAML/JSON text or the decoded mapping)."""
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    if isinstance(data, str):
        try:
            data = yaml.safe_load(data)
        except yaml.YAMLError as e:
            raise RuleError(f"cannot parse rule file: {str(e).splitlines()[0]}") from None
    if not isinstance(data, Mapping) or not isinstance(data.get("groups"), list):
        raise RuleError('a rule file must be a mapping with a "groups" list')
    groups, names = [], set()
    for i, g in enumerate(data["groups"]):
        where = f"groups[{i}]"
        if not isinstance(g, Mapping):
            raise RuleError(f"{where}: must be a mapping")
        unknown = set(g) - _GROUP_KEYS
        if unknown:
            raise RuleError(f"{where}: field {sorted(unknown)[0]} not found in type rulefmt.RuleGroup")
        name = g.get("name")
        if not name or not isinstance(name, str):
            raise RuleError(f"{where}: groupname must not be empty")
        if name in names:
            raise RuleError(f"{where}: groupname: \"{name}\" is repeated in the same file")
        names.add(name)
        rules = g.get("rules") or []
        if not isinstance(rules, list):
            raise RuleError(f"{where}.rules: must be a list")
        interval = _duration(g.get("interval"), f"{where}.interval") or default_interval
        groups.append(Group(name, interval, tuple(_parse_rule(r, f"{where}.rules[{j}]") for j, r in enumerate(rules)),
                            int(g.get("limit") or 0)))
    return groups


@dataclass
class Alert:
    labels: Labels
    annotations: dict[str, str]
    state: str  # pending | firing | inactive
    active_at: float  # unix seconds
    value: float
    fired_at: float | None = None
    resolved_at: float | None = None
    last_seen: float = 0.0


@dataclass
class RuleState:
    rule: Rule
    alerts: dict[Labels, Alert] = field(default_factory=dict)
    health: str = "unknown"
    last_error: str = ""
    last_evaluation: float | None = None
    evaluation_time: float = 0.0

    @property
    def state(self) -> str:
        states = {a.state for a in self.alerts.values()}
        return "firing" if "firing" in states else "pending" if "pending" in states else "inactive"


@dataclass
class GroupState:
    group: Group
    rules: list[RuleState]
    last_evaluation: float | None = None
    evaluation_time: float = 0.0


class NamespaceRules:
    """The rule groups registered for one namespace, and their alerts."""

    def __init__(self, namespace: str, groups: list[Group], external_url: str = ""):
        self.namespace = namespace
        self.groups = [GroupState(g, [RuleState(r) for r in g.rules]) for g in groups]
        self.external_url = external_url

    def owner(self, gi: int, ri: int) -> str:
        return f"rule/{gi}/{ri}"

    def evaluate(self, tsdb: TSDB, t: float) -> None:
        """Evaluate every group whose interval has elapsed at unix time ``t``."""
        engine = Engine(tsdb, self.namespace)
        for gi, gs in enumerate(self.groups):
            if gs.last_evaluation is not None and t - gs.last_evaluation < gs.group.interval - 1e-3:
                continue
            started = time.perf_counter()
            for ri, rs in enumerate(gs.rules):
                self._evaluate_rule(engine, tsdb, rs, self.owner(gi, ri), t)
            gs.last_evaluation = t
            gs.evaluation_time = time.perf_counter() - started

    def _evaluate_rule(self, engine: Engine, tsdb: TSDB, rs: RuleState, owner: str, t: float) -> None:
        started = time.perf_counter()
        rule = rs.rule
        try:
            value = engine.instant(rule.expr, t)
            if isinstance(value, Scalar):
                value = Vector([((), value.value)])
            if not isinstance(value, Vector):
                raise PromQLError("rule result is not a vector or scalar")
            rs.health, rs.last_error = "ok", ""
        except PromQLError as e:
            rs.health, rs.last_error = "err", str(e)
            value = Vector()
        if rule.kind == "recording":
            samples = []
            for lb, x in value:
                d = dict(drop_name(lb))
                d.update(rule.labels)
                d[NAME] = rule.name
                d.setdefault("namespace", self.namespace)
                samples.append((tuple(sorted(d.items())), x))
            tsdb.write_owned(self.namespace, owner, samples)
        else:
            self._alerts(rs, value, t)
            series = []
            for a in rs.alerts.values():
                if a.state in ("pending", "firing"):
                    d = dict(a.labels)
                    d.update({NAME: "ALERTS", "alertstate": a.state})
                    series.append((tuple(sorted(d.items())), 1.0))
            tsdb.write_owned(self.namespace, owner, series)
        rs.last_evaluation = t
        rs.evaluation_time = time.perf_counter() - started

    def _alerts(self, rs: RuleState, value: Vector, t: float) -> None:
        rule = rs.rule
        seen: set[Labels] = set()
        for lb, x in value:
            base = dict(drop_name(lb))
            base.setdefault("namespace", self.namespace)
            labels = dict(base)
            for k, v in rule.labels:
                labels[k] = expand(v, base, x, self.external_url)
            labels["alertname"] = rule.name
            key = tuple(sorted((k, v) for k, v in labels.items() if v != ""))
            if key in seen:
                rs.health, rs.last_error = "err", "vector contains metrics with the same labelset after applying alert labels"
                continue
            seen.add(key)
            annotations = {k: expand(v, base, x, self.external_url) for k, v in rule.annotations}
            alert = rs.alerts.get(key)
            if alert is None or alert.state == "inactive":
                alert = rs.alerts[key] = Alert(key, annotations, "pending", t, x)
            alert.value, alert.annotations, alert.last_seen = x, annotations, t
        for key, alert in list(rs.alerts.items()):
            if key not in seen:
                if alert.state == "pending":
                    del rs.alerts[key]
                elif alert.state == "firing":
                    if rule.keep_firing_for and t - alert.last_seen < rule.keep_firing_for:
                        continue
                    alert.state, alert.resolved_at = "inactive", t
                elif alert.resolved_at is not None and t - alert.resolved_at > RESOLVED_RETENTION:
                    del rs.alerts[key]
                continue
            if alert.state == "pending" and t - alert.active_at >= rule.for_seconds - 1e-6:
                alert.state, alert.fired_at = "firing", t

    def alerts(self) -> list[tuple[Rule, Alert]]:
        return [(rs.rule, a) for gs in self.groups for rs in gs.rules for a in rs.alerts.values()]

    def drop(self, tsdb: TSDB) -> None:
        for gi, gs in enumerate(self.groups):
            for ri, _ in enumerate(gs.rules):
                tsdb.drop_owner(self.namespace, self.owner(gi, ri))

