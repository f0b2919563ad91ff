"""Rule files in Prometheus's format: validation, the pending → firing → resolved state machine on
the clock, recording rules, and annotation templates."""

from __future__ import annotations

import pytest

from kubesim.telemetry.promql import Engine
from kubesim.telemetry.rules import NamespaceRules, RuleError, parse_duration, parse_rule_file
from kubesim.telemetry.templates import expand
from kubesim.telemetry.tsdb import TSDB, labels_of

T0 = 1_767_225_600.0


@pytest.mark.parametrize("text, message", [
    ("groups: [{name: g, rules: [{alert: A}]}]", "field 'expr' must be set"),
    ("groups: [{name: g, rules: [{alert: A, record: b, expr: up}]}]", "one of 'record' or 'alert'"),
    ("groups: [{name: g, rules: [{alert: A, expr: 'sum('}]}]", "could not parse expression"),
    ("groups: [{name: g, rules: [{alert: A, expr: up, for: soon}]}]", "not a valid duration"),
    ("groups: [{name: g, rules: [{alert: A, expr: up, severity: high}]}]", "field severity not found"),
    ("groups: [{name: g}, {name: g}]", "is repeated"),
    ("groups: [{rules: []}]", "groupname must not be empty"),
    ("rules: []", 'a mapping with a "groups" list'),
    ("groups: [{name: g, rules: [{record: r, expr: up, for: 1m}]}]", "recording rule"),
    (": : :", "cannot parse rule file"),
])
def test_invalid_rule_files_are_refused(text, message):
    with pytest.raises(RuleError, match=message.replace("(", r"\(").replace("[", r"\[")):
        parse_rule_file(text)


def test_durations():
    assert parse_duration("0") == 0 and parse_duration("0s") == 0
    assert parse_duration("1h30m") == 5400 and parse_duration("2d") == 172800 and parse_duration("250ms") == 0.25
    with pytest.raises(ValueError):
        parse_duration("5 minutes")


class Clock:
    """A TSDB fed one gauge per scrape, with a namespace's rules evaluated after each scrape."""

    def __init__(self, rules: str):
        self.db = TSDB()
        self.rules = NamespaceRules("ns", parse_rule_file(rules))
        self.t = T0

    def step(self, value: float | None, seconds: float = 15) -> None:
        self.t += seconds
        rows = [] if value is None else [(labels_of({"__name__": "errors", "namespace": "ns", "svc": "a"}), value)]
        self.db.append(self.t, {"ns": rows})
        self.rules.evaluate(self.db, self.t)

    def states(self) -> list[str]:
        return [a.state for _, a in self.rules.alerts()]


RULES = """
groups:
  - name: g
    rules:
      - alert: TooManyErrors
        expr: errors > 5
        for: 1m
        labels: {severity: page, team: "{{ $labels.svc }}-team"}
        annotations: {summary: "{{ $labels.svc }} has {{ $value }} errors"}
      - record: svc:errors:doubled
        expr: errors * 2
"""


def test_pending_then_firing_after_for_then_resolved():
    c = Clock(RULES)
    c.step(1)
    assert c.states() == []
    c.step(10)
    assert c.states() == ["pending"]
    for _ in range(3):
        c.step(10)
    assert c.states() == ["pending"]  # active for 45 s of a 60 s for:
    c.step(10)
    assert c.states() == ["firing"]
    _, alert = c.rules.alerts()[0]
    assert dict(alert.labels) == {"alertname": "TooManyErrors", "namespace": "ns", "svc": "a", "severity": "page",
                                  "team": "a-team"}
    assert alert.annotations == {"summary": "a has 10 errors"}
    c.step(1)
    assert c.states() == ["inactive"] and alert.resolved_at == c.t
    firing = Engine(c.db, "ns").instant('ALERTS{alertstate="firing"}', c.t)
    assert firing == []


def test_a_pending_alert_that_stops_is_forgotten():
    c = Clock(RULES)
    c.step(10)
    c.step(10)
    c.step(1)
    assert c.states() == []


def test_keep_firing_for_holds_a_flapping_alert():
    c = Clock(RULES.replace("for: 1m", "for: 0s\n        keep_firing_for: 1m"))
    c.step(10)
    assert c.states() == ["firing"]
    c.step(1)
    c.step(1)
    assert c.states() == ["firing"]
    c.step(1, 60)
    assert c.states() == ["inactive"]


def test_recording_rules_and_alerts_series_are_queryable():
    c = Clock(RULES)
    for _ in range(6):
        c.step(10)
    engine = Engine(c.db, "ns")
    doubled = engine.instant("svc:errors:doubled", c.t)
    assert [(dict(lb), v) for lb, v in doubled] == [({"__name__": "svc:errors:doubled", "namespace": "ns",
                                                      "svc": "a"}, 20.0)]
    alerts = engine.instant('ALERTS{alertname="TooManyErrors"}', c.t)
    assert dict(alerts[0][0])["alertstate"] == "firing"
    c.step(None)  # the scraped series goes stale; so does the recorded one on the next evaluation
    assert engine.instant("svc:errors:doubled", c.t) == []


def test_rule_groups_respect_their_interval():
    c = Clock(RULES.replace("  - name: g\n", "  - name: g\n    interval: 1m\n"))
    c.step(10)
    c.step(10)
    assert c.rules.groups[0].last_evaluation == T0 + 15


def test_templates():
    labels = {"service": "checkout", "namespace": "shop"}
    assert expand("{{ $labels.service }} in {{ .Labels.namespace }}", labels, 1.0) == "checkout in shop"
    assert expand("{{ $value | humanizePercentage }}", labels, 0.1234) == "12.34%"
    assert expand("{{ $value | humanize }}", labels, 1234567.0) == "1.235M"
    assert expand('{{ printf "%.2f" $value }}', labels, 0.98765) == "0.99"
    assert expand("{{ $value | humanizeDuration }}", labels, 3725.0) == "1h 2m 5s"
    assert expand("{{ $labels.service | toUpper }}", labels, 0) == "CHECKOUT"
    assert expand("{{ $value }}", labels, 3.0) == "3"
    assert expand("{{ unknown thing }}", labels, 0) == "{{ unknown thing }}"
