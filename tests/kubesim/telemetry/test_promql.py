"""PromQL semantics over a hand-built TSDB, checked against values Prometheus gives for the same data."""

from __future__ import annotations

import math

import pytest

from kubesim.telemetry.promql import Engine, format_value, render
from kubesim.telemetry.promql_types import PromQLError
from kubesim.telemetry.tsdb import TSDB, labels_of

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
STEP = 15.0


def series(name: str, **labels: str):
    return labels_of({"__name__": name, **labels})


@pytest.fixture
def db() -> TSDB:
    """41 scrapes (10 minutes): counters at 1/s and 0.1/s, a gauge, a histogram; b's counter resets once."""
    db = TSDB()
    for i in range(41):
        t = T0 + i * STEP
        rows = [
            (series("req_total", ns="a", svc="x", code="200"), 15.0 * i),
            (series("req_total", ns="a", svc="x", code="500"), 1.5 * i),
            (series("req_total", ns="a", svc="y", code="200"), 15.0 * i if i < 20 else 15.0 * (i - 20)),
            (series("mem_bytes", ns="a", svc="x"), 100.0 + i),
        ]
        for le, share in (("0.1", 0.5), ("0.5", 0.9), ("1", 0.99), ("+Inf", 1.0)):
            rows.append((series("lat_bucket", ns="a", svc="x", le=le), 100.0 * i * share))
        if i <= 30:  # disappears after the 31st scrape
            rows.append((series("gone", ns="a"), 1.0))
        db.append(t, {"a": rows})
    return db


END = T0 + 40 * STEP


def q(db: TSDB, expr: str, t: float = END) -> dict:
    v = Engine(db).instant(expr, t)
    if not isinstance(v, list):
        return {"scalar": v.value}
    return {tuple((k, val) for k, val in lb if k != "__name__"): x for lb, x in v}


def one(db: TSDB, expr: str, t: float = END) -> float:
    result = q(db, expr, t)
    assert len(result) == 1, result
    return next(iter(result.values()))


def test_rate_and_increase_extrapolate_like_prometheus(db):
    assert one(db, 'rate(req_total{svc="x",code="200"}[1m])') == pytest.approx(1.0)
    assert one(db, 'increase(req_total{svc="x",code="500"}[5m])') == pytest.approx(30.0)
    assert one(db, 'irate(req_total{svc="x",code="200"}[1m])') == pytest.approx(1.0)
    assert one(db, 'delta(mem_bytes[2m])') == pytest.approx(8.0)


def test_counter_reset_is_not_a_negative_rate(db):
    # y reset at scrape 20 (t=300s); over [10m] the increase still counts everything after the reset.
    assert one(db, 'increase(req_total{svc="y"}[10m] offset 4m)') > 0
    # 210→285, reset, 0→15: 90 counted over 105 s of samples, extrapolated to the 120 s window.
    assert one(db, 'rate(req_total{svc="y"}[2m] @ 1767225915)') == pytest.approx(90 / 105)
    assert one(db, 'resets(req_total{svc="y"}[10m])') == 1


def test_instant_selectors_honour_staleness_lookback_and_offset(db):
    assert q(db, "gone") == {}  # the stale marker ends it at once, not after 5 minutes
    assert one(db, "gone", END - 10 * STEP) == 1
    assert one(db, "mem_bytes offset 1m") == 136
    assert q(db, "mem_bytes", T0 - 1) == {}
    assert one(db, "mem_bytes", END + 299) == 140  # look-back reaches the last sample
    assert q(db, "mem_bytes", END + 301) == {}


def test_matchers(db):
    assert len(q(db, 'req_total{code!="500"}')) == 2
    assert len(q(db, 'req_total{svc=~"x|y", code=~"2.."}')) == 2
    assert len(q(db, 'req_total{svc!~"x"}')) == 1
    assert len(q(db, '{__name__=~"req_.*", svc="x"}')) == 2


def test_aggregations(db):
    by_svc = q(db, "sum by (svc) (rate(req_total[1m]))")
    assert by_svc[(("svc", "x"),)] == pytest.approx(1.1)
    assert q(db, "count without (code) (req_total)") == {(("ns", "a"), ("svc", "x")): 2, (("ns", "a"), ("svc", "y")): 1}
    assert one(db, "max(req_total)") == 600
    assert one(db, "min(req_total)") == 60
    assert one(db, "avg(mem_bytes)") == 140
    assert list(q(db, "topk(1, req_total)").values()) == [600]
    assert one(db, 'quantile(0.5, req_total{code="200"})') == pytest.approx(450)


def test_histogram_quantile(db):
    p50 = one(db, "histogram_quantile(0.5, sum by (le) (rate(lat_bucket[5m])))")
    assert p50 == pytest.approx(0.1)
    p95 = one(db, "histogram_quantile(0.95, sum by (le) (rate(lat_bucket[5m])))")
    assert p95 == pytest.approx(0.5 + 0.5 * (0.05 / 0.09))
    assert one(db, "histogram_quantile(0.999, rate(lat_bucket[5m]))") == 1.0


def test_binary_operators_and_vector_matching(db):
    ratio = q(db, 'sum by (svc) (rate(req_total{code="500"}[1m])) / sum by (svc) (rate(req_total[1m]))')
    assert ratio == {(("svc", "x"),): pytest.approx(1 / 11)}
    assert q(db, "req_total > 500") == {(("code", "200"), ("ns", "a"), ("svc", "x")): 600}
    assert sorted(q(db, "req_total > bool 500").values()) == [0, 0, 1]
    share = q(db, "req_total / on(svc) group_left sum by (svc) (req_total)")
    assert share[(("code", "500"), ("ns", "a"), ("svc", "x"))] == pytest.approx(60 / 660)
    assert len(q(db, 'req_total and on(svc) req_total{code="500"}')) == 2
    assert len(q(db, 'req_total unless on(svc) req_total{code="500"}')) == 1
    assert len(q(db, 'req_total{svc="y"} or mem_bytes')) == 2
    assert one(db, "vector(2) * 3 + 1") == 7
    assert q(db, "2 ^ 10") == {"scalar": 1024}
    assert one(db, "-mem_bytes") == -140
    assert one(db, "clamp_max(mem_bytes, 50)") == 50
    assert one(db, "abs(vector(-3))") == 3
    assert q(db, "scalar(mem_bytes) * 2") == {"scalar": 280}


def test_many_to_one_matching_must_be_explicit(db):
    with pytest.raises(PromQLError) as err:
        Engine(db).instant("req_total / on(svc) sum by (svc) (req_total)", END)
    assert err.value.error_type == "execution"
    assert "many-to-one matching must be explicit" in str(err.value)


def test_label_functions_subqueries_and_absent(db):
    out = q(db, 'label_replace(mem_bytes, "team", "t-$1", "svc", "(.*)")')
    assert (("ns", "a"), ("svc", "x"), ("team", "t-x")) in out
    assert one(db, "max_over_time(rate(req_total{code='500'}[1m])[5m:1m])") == pytest.approx(0.1)
    assert q(db, 'absent(nothing{job="api"})') == {(("job", "api"),): 1}
    assert q(db, "absent(mem_bytes)") == {}
    assert one(db, "avg_over_time(mem_bytes[1m])") == pytest.approx(138.5)


def test_range_queries_return_one_point_per_step(db):
    m = Engine(db).range('sum(rate(req_total{svc="x"}[1m]))', T0 + 300, T0 + 600, 60)
    assert len(m) == 1
    assert [t for t, _ in m[0][1]] == [T0 + 300 + 60 * i for i in range(6)]
    assert all(v == pytest.approx(1.1) for _, v in m[0][1])


@pytest.mark.parametrize("expr", ["sum(", "rate(mem_bytes)", "foo(bar)", "mem_bytes{", "", "1 +", "}"])
def test_malformed_queries_are_bad_data(db, expr):
    with pytest.raises(PromQLError) as err:
        Engine(db).instant(expr, END)
    assert err.value.error_type == "bad_data" and err.value.status == 400


def test_range_query_of_a_range_vector_is_refused(db):
    with pytest.raises(PromQLError, match="invalid expression type"):
        Engine(db).range("mem_bytes[1m]", T0, END, 60)


def test_value_rendering_matches_go():
    assert [format_value(x) for x in (1.0, 0.1, 1e-5, 2e21, math.inf, -math.inf, math.nan)] == \
        ["1", "0.1", "0.00001", "2000000000000000000000", "+Inf", "-Inf", "NaN"]
    assert render(Engine(TSDB()).instant("1.5", T0), T0) == {"resultType": "scalar", "result": [T0, "1.5"]}
