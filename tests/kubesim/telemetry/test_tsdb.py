"""The TSDB keeps memory bounded: retention trims old samples and forgets dead series; stale markers
end series that disappear; namespaces drop in one step."""

from __future__ import annotations

import math

from kubesim.telemetry.tsdb import TSDB, Matcher, labels_of

T0 = 1_767_225_600.0


def lb(name: str, **labels: str):
    return labels_of({"__name__": name, **labels})


def test_retention_trims_samples_and_forgets_dead_series():
    db = TSDB(retention_seconds=300, scrape_interval=15)
    for i in range(200):
        rows = [(lb("steady", namespace="a"), float(i))]
        if i < 10:
            rows.append((lb("early", namespace="a"), 1.0))
        db.append(T0 + 15 * i, {"a": rows})
    assert len(db.times) <= 21 + 8
    assert db.times[-1] == T0 + 15 * 199
    names = {s.lmap["__name__"] for s in db.buckets["a"].series.values()}
    assert names == {"steady"}
    series = db.buckets["a"].series[lb("steady", namespace="a")]
    assert len(series.values) == len(db.times) and series.values[-1] == 199


def test_a_missing_series_gets_one_stale_marker_then_resumes():
    db = TSDB()
    key = lb("x", namespace="a")
    db.append(T0, {"a": [(key, 1.0)]})
    db.append(T0 + 15, {"a": []})
    db.append(T0 + 30, {"a": []})
    db.append(T0 + 45, {"a": [(key, 4.0)]})
    (s, times, values), = db.select([Matcher("__name__", "=", "x")], T0 - 1, T0 + 45)
    assert times == [T0, T0 + 15, T0 + 30, T0 + 45]
    assert values[0] == 1 and math.isnan(values[1]) and math.isnan(values[2]) and values[3] == 4


def test_namespaces_are_separate_and_drop_in_one_step():
    db = TSDB()
    db.append(T0, {"a": [(lb("x", namespace="a"), 1.0)], "b": [(lb("x", namespace="b"), 2.0)]})
    assert len(db.select([Matcher("__name__", "=", "x")], T0 - 1, T0)) == 2
    assert len(db.select([Matcher("__name__", "=", "x")], T0 - 1, T0, namespace="b")) == 1
    assert len(db.select([Matcher("namespace", "=", "a")], T0 - 1, T0)) == 1
    db.drop_namespace("a")
    assert [s.lmap["namespace"] for s, _, _ in db.select([Matcher("__name__", "=~", "x|y")], T0 - 1, T0)] == ["b"]


def test_rule_owned_series_carry_their_value_between_evaluations():
    db = TSDB()
    key = lb("recorded", namespace="a")
    db.append(T0, {"a": []})
    db.write_owned("a", "rule/0/0", [(key, 5.0)])
    for i in range(1, 4):
        db.append(T0 + 15 * i, {"a": []})  # scrapes without the rule re-evaluating
    db.write_owned("a", "rule/0/0", [(key, 6.0)])
    (_, _, values), = db.select([Matcher("__name__", "=", "recorded")], T0 - 1, T0 + 45)
    assert values == [5.0, 5.0, 5.0, 6.0]
