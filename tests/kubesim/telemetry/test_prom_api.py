"""The Prometheus HTTP API handler: response shapes, parameters, namespace scoping, and errors that
are always Prometheus-style 4xx bodies."""

from __future__ import annotations

import json
import math
from urllib.parse import urlencode

import pytest
from telemetry_sim import ShopSim

from kubesim.telemetry import prom_api


@pytest.fixture(scope="module")
def sim() -> ShopSim:
    s = ShopSim(namespaces=("alpha", "beta"))
    s.advance(600)
    return s


def call(sim: ShopSim, path: str, query: object = None, method: str = "GET", body: bytes | None = None):
    status, headers, raw = prom_api.handle(sim.cluster, method, path, query, body)
    assert ("Content-Type", "application/json") in headers or status == 200
    return status, json.loads(raw) if raw.startswith(b"{") else raw


def test_instant_vector_shape(sim):
    status, body = call(sim, "/prometheus/api/v1/query", {"query": 'up{namespace="alpha"}'})
    assert status == 200 and body["status"] == "success"
    data = body["data"]
    assert data["resultType"] == "vector" and len(data["result"]) == 6
    sample = data["result"][0]
    assert set(sample) == {"metric", "value"}
    ts, value = sample["value"]
    assert isinstance(ts, (int, float)) and value == "1"
    assert abs(ts - sim.tel.now_unix()) < 1
    assert sample["metric"]["__name__"] == "up"


def test_scalar_string_and_explicit_time(sim):
    now = sim.tel.now_unix()
    _, body = call(sim, "/prometheus/api/v1/query", {"query": "1 + 1", "time": f"{now - 60:.3f}"})
    assert body["data"] == {"resultType": "scalar", "result": [pytest.approx(now - 60), "2"]}
    _, body = call(sim, "/prometheus/api/v1/query", {"query": '"hi"', "time": "2026-01-01T00:00:00Z"})
    assert body["data"]["resultType"] == "string" and body["data"]["result"][1] == "hi"


def test_range_query_matrix_and_post_form(sim):
    now = sim.tel.now_unix()
    form = urlencode({"query": 'sum by (service) (rate(http_requests_total{namespace="beta"}[1m]))',
                      "start": now - 300, "end": now, "step": "60s"}).encode()
    status, body = call(sim, "/prometheus/api/v1/query_range", None, "POST", form)
    assert status == 200
    data = body["data"]
    assert data["resultType"] == "matrix"
    frontend = next(r for r in data["result"] if r["metric"] == {"service": "frontend"})
    assert len(frontend["values"]) == 6
    assert all(18 < float(v) < 22 for _, v in frontend["values"])


def test_namespace_scoped_paths_see_only_their_namespace(sim):
    for path in ("/prometheus/namespaces/alpha/api/v1/query", "/kubesim/v1/namespaces/alpha/prometheus/api/v1/query"):
        _, body = call(sim, path, {"query": "count by (namespace) (up)"})
        assert [r["metric"] for r in body["data"]["result"]] == [{"namespace": "alpha"}]
    _, body = call(sim, "/prometheus/api/v1/query", {"query": "count by (namespace) (up)"})
    assert {r["metric"]["namespace"] for r in body["data"]["result"]} == {"alpha", "beta"}


def test_series_labels_and_label_values(sim):
    qs = urlencode([("match[]", 'up{namespace="alpha",service="ledger"}'), ("match[]", 'kube_pod_status_ready{namespace="alpha"}')])
    _, body = call(sim, "/prometheus/api/v1/series", qs)
    names = {s["__name__"] for s in body["data"]}
    assert names == {"up", "kube_pod_status_ready"}
    _, body = call(sim, "/prometheus/namespaces/beta/api/v1/labels")
    assert {"__name__", "namespace", "pod", "service", "code", "le"} <= set(body["data"])
    _, body = call(sim, "/prometheus/api/v1/label/service/values")
    assert body["data"] == sorted(["catalog", "checkout", "frontend", "ledger", "orders", "payments"])
    _, body = call(sim, "/prometheus/api/v1/label/__name__/values")
    assert "http_request_duration_seconds_bucket" in body["data"]
    assert "container_memory_working_set_bytes" in body["data"]


def test_rules_and_alerts_endpoints(sim):
    _, body = call(sim, "/prometheus/namespaces/alpha/api/v1/rules")
    group = body["data"]["groups"][0]
    assert group["name"] == "slo" and group["interval"] == 15
    rule = group["rules"][0]
    assert rule["type"] == "alerting" and rule["name"] == "HighErrorRate" and rule["duration"] == 120
    assert rule["health"] == "ok" and rule["state"] == "inactive" and rule["alerts"] == []
    _, body = call(sim, "/prometheus/api/v1/alerts")
    assert body["data"] == {"alerts": []}


@pytest.mark.parametrize("path, query, message", [
    ("/prometheus/api/v1/query", {"query": "sum("}, 'invalid parameter "query"'),
    ("/prometheus/api/v1/query", {}, 'invalid parameter "query"'),
    ("/prometheus/api/v1/query", {"query": "up", "time": "yesterday"}, 'invalid parameter "time"'),
    ("/prometheus/api/v1/query_range", {"query": "up", "start": "1", "end": "2"}, 'invalid parameter "step"'),
    ("/prometheus/api/v1/query_range", {"query": "up", "start": "10", "end": "2", "step": "1"}, "end timestamp"),
    ("/prometheus/api/v1/query_range", {"query": "up", "start": "0", "end": "1e9", "step": "1"}, "11,000 points"),
    ("/prometheus/api/v1/query_range", {"query": "up[5m]", "start": "1", "end": "2", "step": "1"}, "range vector"),
    ("/prometheus/api/v1/series", {}, "no match[] parameter provided"),
    ("/prometheus/api/v1/series", {"match[]": "rate(up[1m])"}, "is not a vector selector"),
    ("/prometheus/api/v1/label/bad-name/values", {}, "invalid label name"),
])
def test_bad_requests_are_bad_data(sim, path, query, message):
    status, body = call(sim, path, query)
    assert status == 400
    assert body["status"] == "error" and body["errorType"] == "bad_data"
    assert message in body["error"]


def test_execution_errors_and_unknown_endpoints(sim):
    status, body = call(sim, "/prometheus/api/v1/query", {"query": "up / on(namespace) up"})
    assert status == 422 and body["errorType"] == "execution"
    status, body = call(sim, "/prometheus/api/v1/nope")
    assert status == 404 and body["errorType"] == "not_found"
    status, body = call(sim, "/prometheus/api/v1/query", {"query": "up"}, "DELETE")
    assert status == 405


FUZZ = ["", " ", "(((", ")))", "{}", '{a="b"}', "up{", "up}", "up[", "up[5x]", "up offset", "sum by",
        "rate(up[0s])", "histogram_quantile(up, up)", "topk(up, up)", "label_replace(up, 'a', 'b', 'c', '(')",
        "up @ ", "1/0", "0/0", "-1^0.5", "up[1m:0s]", "quantile_over_time(2, up[1m])", "x" * 70000,
        "sum(" * 400 + "up" + ")" * 400, "\x00", "up{a=~'('}", "count_values(1, up)", "vector(up)",
        "absent(up[1m])", "sort(up[1m])", 'label_join(up, "x", ",", "a", "b")', "predict_linear(up[5m], 60)",
        "deriv(up[5m])", "changes(up[5m])", "timestamp(up)", "day_of_week()", "time() - 1", "up == bool up"]


@pytest.mark.parametrize("expr", FUZZ)
def test_no_query_causes_a_server_error(sim, expr):
    status, body = call(sim, "/prometheus/api/v1/query", {"query": expr})
    assert status in (200, 400, 422)
    assert body["status"] == ("success" if status == 200 else "error")
    if status == 200:
        for r in body["data"]["result"] if isinstance(body["data"]["result"], list) and body["data"]["result"] \
                and isinstance(body["data"]["result"][0], dict) else []:
            assert isinstance(r["value"][1], str)


def test_non_finite_values_are_strings(sim):
    _, body = call(sim, "/prometheus/api/v1/query", {"query": "vector(1) / 0"})
    assert body["data"]["result"][0]["value"][1] == "+Inf"
    _, body = call(sim, "/prometheus/api/v1/query", {"query": "0 / 0"})
    assert body["data"]["result"][1] == "NaN" and math.isnan(float(body["data"]["result"][1]))
