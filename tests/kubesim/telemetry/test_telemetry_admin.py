"""Telemetry's admin endpoints: namespace rule registration, notifications, service profiles; and the
telemetry section of profiles is validated with errors that name the field."""

from __future__ import annotations

import json

import pytest
from telemetry_sim import ERROR_RATIO_RULES, ShopSim

from kubesim.telemetry import admin
from kubesim.telemetry.behaviour import parse_behaviour
from kubesim.workloads.fields import ProfileError


@pytest.fixture(scope="module")
def sim() -> ShopSim:
    return ShopSim(namespaces=("shop",), rules=None)


def call(sim: ShopSim, method: str, path: str, body: object = None, query: object = None):
    raw = body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else None)
    status, headers, out = admin.handle(sim.cluster, method, path, query, raw)
    assert headers == [("Content-Type", "application/json")] or status == 200
    return status, json.loads(out) if out.startswith(b"{") else out


def test_rules_round_trip(sim):
    path = "/kubesim/v1/namespaces/shop/rules"
    status, body = call(sim, "PUT", path, ERROR_RATIO_RULES.encode(), {"webhook": "http://127.0.0.1:1/x"})
    assert status == 200 and body["groups"] == 1 and body["rules"] == 1
    assert body["receiver"]["url"] == "http://127.0.0.1:1/x" and body["receiver"]["group_by"] == ["alertname"]
    status, body = call(sim, "GET", path)
    assert status == 200 and body["groups"][0]["rules"][0]["name"] == "HighErrorRate"
    assert body["groups"][0]["rules"][0]["for"] == 120
    status, body = call(sim, "POST", path, {"rules": {"groups": []}, "receiver": {"group_wait": "30s",
                                                                                  "group_by": ["..."]}})
    assert status == 200 and body["receiver"]["group_wait"] == 30 and body["rules"] == 0
    status, body = call(sim, "DELETE", path)
    assert status == 200 and body["removed"] is True
    status, body = call(sim, "GET", path)
    assert status == 404 and body["kind"] == "Status"


@pytest.mark.parametrize("body, message", [
    (b"", "empty"),
    (b"groups: [{name: g, rules: [{alert: A, expr: 'up{'}]}]", "could not parse expression"),
    (b"{not yaml", "cannot parse"),
    (json.dumps({"rules": {"groups": []}, "receiver": {"url": "ftp://x"}}).encode(), "http(s) URL"),
    (json.dumps({"rules": {"groups": []}, "receiver": {"group_wait": "soon"}}).encode(), "not a valid duration"),
])
def test_bad_rule_registrations_are_400(sim, body, message):
    status, out = call(sim, "PUT", "/kubesim/v1/namespaces/shop/rules", body)
    assert status == 400 and out["reason"] == "BadRequest" and message in out["message"]


def test_unknown_namespace_method_and_path(sim):
    assert call(sim, "PUT", "/kubesim/v1/namespaces/nope/rules", ERROR_RATIO_RULES.encode())[0] == 404
    assert call(sim, "PATCH", "/kubesim/v1/namespaces/shop/rules", b"x")[0] == 405
    assert call(sim, "GET", "/kubesim/v1/telemetry/profiles")[0] == 405
    assert call(sim, "GET", "/kubesim/v1/nothing/here")[0] == 404
    assert admin.handles("/kubesim/v1/namespaces/shop/rules") and not admin.handles("/kubesim/v1/clock")


def test_notifications_and_scoped_prometheus(sim):
    status, body = call(sim, "GET", "/kubesim/v1/namespaces/shop/notifications")
    assert status == 200 and body == {"namespace": "shop", "notifications": []}
    sim.advance(60)
    status, out = call(sim, "GET", "/kubesim/v1/namespaces/shop/prometheus/api/v1/query", None,
                       {"query": "count(up)"})
    assert status == 200 and out["data"]["result"][0]["value"][1] == "6"


def test_profile_registration_validates_the_telemetry_section(sim):
    bad = {"image": "demo/x", "tags": ["1"], "telemetry": {"calls": [{"name": "y"}]}}
    status, out = call(sim, "POST", "/kubesim/v1/telemetry/profiles", [bad])
    assert status == 422 and "telemetry.calls[0].env" in out["message"]
    good = {"image": "demo/x", "tags": ["1"], "ports": [80], "telemetry": {"traffic": {"rps": 3}}}
    status, out = call(sim, "POST", "/kubesim/v1/telemetry/profiles", {"profiles": [good]})
    assert status == 200 and out == {"registered": 1}
    assert sim.tel.registry.lookup("demo/x:1").rps == 3
    assert sim.cluster.profiles.lookup("demo/x:1") is not None


@pytest.mark.parametrize("section, field", [
    ({"latency": {"p50_ms": 50, "p99_ms": 10}}, "telemetry.latency.p99_ms"),
    ({"errors": {"ratio": 2}}, "telemetry.errors.ratio"),
    ({"handler": "checkout"}, "telemetry.handler"),
    ({"counters": [{"name": "9bad"}]}, "telemetry.counters[0].name"),
    ({"calls": "payments"}, "telemetry.calls"),
    ({"bogus": 1}, "telemetry.bogus"),
    ({"port": 70000}, "telemetry.port"),
])
def test_behaviour_errors_name_the_field(section, field):
    with pytest.raises(ProfileError) as err:
        parse_behaviour("demo/x", ("1",), section, (80,))
    assert err.value.field == field
