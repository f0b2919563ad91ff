"""Faults surface away from their cause: the alert fires on the symptomatic services, PromQL and the
logs lead from them to the causal one, and fixing the cause clears the alert within ``for``."""

from __future__ import annotations

import pytest
from telemetry_sim import ShopSim

from kubesim.resources import NETWORKPOLICIES

FOR_WINDOW = 120.0
NS = "shop"


def _healthy(s: ShopSim) -> None:
    s.advance(300)
    assert s.firing(NS) == set()
    assert s.value('sum(rate(http_requests_total{service="payments"}[1m]))', NS) > 1


def _fires(s: ShopSim) -> None:
    s.advance_until(lambda: {"checkout", "frontend"} <= s.firing(NS), 900)
    # The callee is not alerting: it is the cause (or its victim), not a symptom.
    assert "payments" not in s.firing(NS)
    assert "checkout responded" in s.logs(NS, "frontend")


def _clears(s: ShopSim) -> None:
    s.advance(FOR_WINDOW)
    assert s.firing(NS) == set()
    assert s.value('sum(rate(http_requests_total{service="payments",code="200"}[1m]))', NS) > 1


def test_wrong_port_in_callers_env_var():
    s = ShopSim()
    _healthy(s)
    s.set_env(NS, "checkout", "PAYMENTS_ADDR", "payments:8082")
    _fires(s)
    log = s.logs(NS, "checkout")
    assert 'error calling payments: Post "http://payments:8082/charge": context deadline exceeded' in log
    timeouts = 'sum(rate(http_client_requests_total{service="checkout",peer="payments",outcome="timeout"}[1m]))'
    assert s.value(timeouts, NS) > 1
    # payments is up and healthy but receives nothing: the link, not the callee, is broken.
    assert s.value('up{service="payments"}', NS) == 1
    assert s.value('sum(rate(http_requests_total{service="payments"}[1m]))', NS) == 0
    assert s.value('histogram_quantile(0.9, sum by (le) (rate(http_request_duration_seconds_bucket'
                   '{service="checkout"}[1m])))', NS) >= 1.0
    s.set_env(NS, "checkout", "PAYMENTS_ADDR", "payments:8081")
    _clears(s)


def test_service_selector_that_matches_nothing():
    s = ShopSim()
    _healthy(s)
    s.set_selector(NS, "payments", {"app": "payment"})
    _fires(s)
    log = s.logs(NS, "checkout")
    assert "error calling payments" in log and "8081: connect: connection refused" in log
    assert s.value('kube_endpoint_address_available{endpoint="payments"}', NS) == 0
    assert s.value('sum(rate(http_client_requests_total{service="checkout",outcome="connection_refused"}[1m]))',
                   NS) > 1
    assert s.value('up{service="payments"}', NS) == 1
    s.set_selector(NS, "payments", {"app": "payments"})
    _clears(s)


def test_network_policy_blocking_the_callee():
    s = ShopSim()
    _healthy(s)
    s.network_policy(NS, "payments-from-frontend-only", "payments", "frontend")
    _fires(s)
    assert "error calling payments" in s.logs(NS, "checkout")
    assert "context deadline exceeded" in s.logs(NS, "checkout")
    assert s.value('sum(rate(http_requests_total{service="payments"}[1m]))', NS) == 0
    assert s.value('kube_endpoint_address_available{endpoint="payments"}', NS) == 1
    s.delete(NETWORKPOLICIES, NS, "payments-from-frontend-only")
    _clears(s)


def test_callee_in_an_oom_loop():
    s = ShopSim()
    _healthy(s)
    s.set_image(NS, "payments", "shop/payments:1.2")  # a release that leaks memory up to its limit
    _fires(s)
    assert "error calling payments" in s.logs(NS, "checkout")
    assert s.value('max(kube_pod_container_status_restarts_total{container="payments"})', NS) >= 2
    oom = s.query('kube_pod_container_status_last_terminated_reason{container="payments",reason="OOMKilled"}', NS)
    assert oom and set(oom.values()) == {1.0}
    peak = s.value('max(max_over_time(container_memory_working_set_bytes{container="payments"}[10m]))', NS)
    assert peak > 200 * 2**20
    s.set_image(NS, "payments", "shop/payments:1.0")
    _clears(s)


def test_healthy_baseline_stays_quiet_for_a_simulated_hour():
    s = ShopSim()
    for _ in range(12):
        s.advance(300)
        assert s.firing(NS) == set()
        assert s.api("alerts", NS)["alerts"] == []
    assert s.query('http_requests_total{code=~"5.."}', NS) == {}
    assert s.value('sum(rate(http_requests_total{service="frontend"}[10m]))', NS) == pytest.approx(20, rel=0.1)


def test_a_deliberately_tight_rule_fires_with_no_fault():
    tight = """
groups:
  - name: tight
    rules:
      - alert: LatencyAboveFiveMilliseconds
        expr: histogram_quantile(0.5, sum by (service, le) (rate(http_request_duration_seconds_bucket{service="frontend"}[1m]))) > 0.005
        for: 1m
"""
    s = ShopSim(rules=tight)
    s.advance_until(lambda: s.firing(NS, "LatencyAboveFiveMilliseconds") == {"frontend"}, 600)
