"""Each call is resolved through real objects (DNS → Service → Endpoints → NetworkPolicy → listening
port → token), and each broken step shows up in metrics and in logs that name the dependency."""

from __future__ import annotations

import json

from telemetry_sim import ShopSim

from kubesim.resources import (CONFIGMAPS, DEPLOYMENTS, EVENTS, NAMESPACES, NETWORKPOLICIES, PODS, REPLICASETS,
                               SERVICES)
from kubesim.controllers import begin_delete
from kubesim.telemetry import admin
from kubesim.telemetry.demo import deployment, service

NS = "shop"


def outcome_rate(s: ShopSim, service: str, peer: str, outcome: str) -> float:
    v = s.value(f'sum(rate(http_client_requests_total{{service="{service}",peer="{peer}",outcome="{outcome}"}}[1m]))',
                NS)
    return v or 0.0


def test_missing_service_is_a_dns_failure():
    s = ShopSim(rules=None)
    s.set_env(NS, "checkout", "PAYMENTS_ADDR", "paymnts:8081")
    s.advance(120)
    assert "dial tcp: lookup paymnts on 10.96.0.10:53: no such host" in s.logs(NS, "checkout")
    assert outcome_rate(s, "checkout", "payments", "dns_error") > 1
    assert s.value('sum(rate(http_requests_total{service="checkout",code="503"}[1m]))', NS) > 1


def test_wrong_service_target_port_refuses_connections():
    s = ShopSim(rules=None)

    def change(svc):
        svc["spec"]["ports"][0]["targetPort"] = 9999
    s.update(SERVICES, NS, "payments", change)
    s.advance(120)
    assert s.value('kube_endpoint_address_available{endpoint="payments"}', NS) == 1  # endpoints exist...
    assert "connect: connection refused" in s.logs(NS, "checkout")  # ...on a port nobody listens on
    assert outcome_rate(s, "checkout", "payments", "connection_refused") > 1


def test_expired_token_is_a_401_from_the_callee():
    s = ShopSim(rules=None)
    s.set_env(NS, "payments", "LEDGER_TOKEN", "old-token")
    s.advance(120)
    assert "401 from ledger: token expired" in s.logs(NS, "payments")
    assert "unauthorized request: token expired" in s.logs(NS, "ledger")
    assert s.value('sum(rate(http_requests_total{service="ledger",code="401"}[1m]))', NS) > 1
    assert s.value('sum(rate(http_requests_total{service="payments",code="500"}[1m]))', NS) > 1
    assert outcome_rate(s, "payments", "ledger", "unauthorized") > 1


def test_optional_dependency_failure_degrades_without_errors():
    s = ShopSim(rules=None)
    s.delete(SERVICES, NS, "redis")
    s.advance(120)
    assert "calling redis failed, continuing without it" in s.logs(NS, "catalog")
    assert s.query('http_requests_total{service="catalog",code=~"5.."}', NS) == {}
    assert outcome_rate(s, "catalog", "redis", "dns_error") > 1


def test_egress_default_deny_breaks_dns_first():
    s = ShopSim(rules=None)
    s.create(NETWORKPOLICIES, {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                               "metadata": {"name": "deny-egress", "namespace": NS},
                               "spec": {"podSelector": {"matchLabels": {"app": "checkout"}},
                                        "policyTypes": ["Egress"]}})
    s.advance(60)
    assert "lookup payments on 10.96.0.10:53: read udp" in s.logs(NS, "checkout")

    def allow_dns(np):
        np["spec"]["egress"] = [{"to": [{"namespaceSelector": {"matchLabels": {
            "kubernetes.io/metadata.name": "kube-system"}}}], "ports": [{"port": 53, "protocol": "UDP"}]}]
    s.update(NETWORKPOLICIES, NS, "deny-egress", allow_dns)
    s.advance(60)
    assert 'Post "http://payments:8081/charge": context deadline exceeded' in s.logs(NS, "checkout", 3)

    def allow_payments(np):
        np["spec"]["egress"].append({"to": [{"podSelector": {"matchLabels": {"app": "payments"}}}],
                                     "ports": [{"port": 8081}]})
        np["spec"]["egress"].append({"to": [{"podSelector": {"matchLabels": {"app": "orders"}}}]})
    s.update(NETWORKPOLICIES, NS, "deny-egress", allow_payments)
    s.advance(120)
    assert s.value('sum(rate(http_requests_total{service="checkout",code="200"}[1m]))', NS) > 1


def test_cross_namespace_calls_follow_namespace_selectors():
    s = ShopSim(namespaces=("shop", "pay"), rules=None)
    s.set_env(NS, "checkout", "PAYMENTS_ADDR", "payments.pay.svc.cluster.local:8081")
    s.create(NETWORKPOLICIES, {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                               "metadata": {"name": "only-shop", "namespace": "pay"},
                               "spec": {"podSelector": {"matchLabels": {"app": "payments"}},
                                        "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
                                            "kubernetes.io/metadata.name": "shop"}}}]}]}})
    s.advance(120)
    assert s.value('sum(rate(http_requests_total{namespace="pay",service="payments"}[1m]))') > 1

    def other(np):
        np["spec"]["ingress"][0]["from"][0]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] = "x"
    s.update(NETWORKPOLICIES, "pay", "only-shop", other)
    s.advance(120)
    assert "context deadline exceeded" in s.logs(NS, "checkout", 3)


DEPENDENT = {
    "image": "demo/gateway", "tags": ["1.0"], "ports": [8080], "startup_seconds": 1,
    "readiness": {"path": "/healthz", "port": 8080}, "memory": {"working_set_mi": 20},
    "telemetry": {"traffic": {"rps": 5},
                  "calls": [{"name": "ledger", "env": "LEDGER_ADDR", "default": "ledger:9000", "readiness": True}]},
}


def test_readiness_can_depend_on_a_call():
    s = ShopSim(rules=None)
    status, _, body = admin.handle(s.cluster, "POST", "/kubesim/v1/telemetry/profiles", None,
                                   json.dumps([DEPENDENT]).encode())
    assert status == 200, body
    s.create(DEPLOYMENTS, deployment(NS, "gateway", "demo/gateway:1.0", 8080, {}))
    s.create(SERVICES, service(NS, "gateway", 8080))
    s.advance(60)
    ready = 'kube_pod_status_ready{condition="true",pod=~"gateway-.*"}'
    assert s.value(ready, NS) == 1
    s.set_selector(NS, "ledger", {"app": "nothing"})
    s.advance(60)
    assert s.value(ready, NS) == 0
    assert s.value('kube_endpoint_address_available{endpoint="gateway"}', NS) == 0
    events = [e["message"] for e in s.cluster.store.list(EVENTS, NS) if e["reason"] == "Unhealthy"]
    assert any("statuscode: 503" in m for m in events)
    s.set_selector(NS, "ledger", {"app": "ledger"})
    s.advance(60)
    assert s.value(ready, NS) == 1


def test_data_counter_follows_the_profile_flag():
    s = ShopSim(rules=None)
    s.advance(120)
    assert s.value("sum(orders_duplicated_total)", NS) == 0
    s.set_env(NS, "orders", "IDEMPOTENCY", "off")
    s.advance(300)
    dup = s.value("sum(rate(orders_duplicated_total[5m]))", NS)
    orders = s.value('sum(rate(http_requests_total{service="orders",code="200"}[5m]))', NS)
    assert dup is not None and orders and 0.02 < dup / orders < 0.08


def test_load_generator_is_invisible_and_namespace_deletion_drops_everything():
    s = ShopSim(rules=None)
    s.advance(120)
    kinds = {rt.kind: len(s.cluster.store.list(rt, NS)) for rt in (PODS, SERVICES, DEPLOYMENTS, REPLICASETS,
                                                                    CONFIGMAPS)}
    assert kinds == {"Pod": 8, "Service": 8, "Deployment": 8, "ReplicaSet": 8, "ConfigMap": 1}
    assert NS in s.tel.tsdb.buckets
    begin_delete(s.cluster, NS)
    s.advance(120)
    assert s.cluster.store.find(NAMESPACES, "", NS) is None
    assert NS not in s.tel.tsdb.buckets
    assert s.query("up") == {}
