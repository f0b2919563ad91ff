"""HTTP requests → the Action the invariants and the audit log speak (as the API server's resolver does)."""

import pytest

from ontrial.gateway import Invariants
from ontrial.gateway.apirequest import classify


@pytest.mark.parametrize(("method", "path", "query", "expected"), [
    ("GET", "/api/v1/namespaces/ns/pods", "", ("list", "pods", "ns", None)),
    ("GET", "/api/v1/namespaces/ns/pods", "watch=true&resourceVersion=5", ("watch", "pods", "ns", None)),
    ("GET", "/api/v1/watch/namespaces/ns/pods", "", ("watch", "pods", "ns", None)),
    ("GET", "/api/v1/namespaces/ns/pods/p1", "", ("get", "pods", "ns", "p1")),
    ("GET", "/api/v1/namespaces/ns/pods/p1/log", "follow=true", ("get", "pods/log", "ns", "p1")),
    ("PATCH", "/apis/apps/v1/namespaces/ns/deployments/web/scale", "", ("patch", "deployments/scale", "ns", "web")),
    ("PUT", "/apis/apps/v1/namespaces/ns/deployments/web", "", ("update", "deployments", "ns", "web")),
    ("DELETE", "/api/v1/namespaces/ns/configmaps/c", "", ("delete", "configmaps", "ns", "c")),
    ("DELETE", "/api/v1/namespaces/ns/pods", "labelSelector=a%3Db", ("deletecollection", "pods", "ns", None)),
    ("DELETE", "/api/v1/namespaces/ns", "", ("delete", "namespaces", None, "ns")),
    ("PUT", "/api/v1/namespaces/ns/finalize", "", ("update", "namespaces/finalize", None, "ns")),
    ("GET", "/api/v1/nodes", "", ("list", "nodes", None, None)),
    ("POST", "/api/v1/namespaces/ns/pods/p1/exec", "command=sh", ("create", "pods/exec", "ns", "p1")),
])
def test_resource_requests(method: str, path: str, query: str, expected: tuple) -> None:
    req = classify(method, path, query)
    assert req.kind == "resource"
    assert (req.action.verb, req.action.resource, req.action.namespace, req.action.name) == expected


def test_streams_connect_and_created_names() -> None:
    assert classify("GET", "/api/v1/namespaces/ns/pods", "watch=1").stream
    assert classify("GET", "/api/v1/namespaces/ns/pods/p/log", "follow=true").stream
    assert not classify("GET", "/api/v1/namespaces/ns/pods/p/log", "").stream
    assert classify("POST", "/api/v1/namespaces/ns/pods/p/exec").connect
    assert classify("GET", "/api/v1/namespaces/ns/pods/p/portforward").connect
    created = classify("POST", "/api/v1/namespaces/ns/configmaps", "", b'{"metadata": {"name": "cm1"}}')
    assert created.action.name == "cm1"
    assert classify("POST", "/api/v1/namespaces/ns/configmaps", "", b"not json").action.name is None


@pytest.mark.parametrize("path", ["/api", "/api/v1", "/apis", "/apis/apps", "/apis/apps/v1", "/version",
                                  "/openapi/v2", "/openapi/v3/apis/apps/v1", "/healthz", "/"])
def test_discovery(path: str) -> None:
    assert classify("GET", path).kind == "discovery"


def test_prometheus_and_other_paths() -> None:
    scoped = classify("GET", "/kubesim/v1/namespaces/ns/prometheus/api/v1/query", "query=up")
    assert scoped.kind == "prometheus" and scoped.action.namespace == "ns"
    assert classify("GET", "/api/v1/query", "query=up").kind == "prometheus"
    assert classify("GET", "/prometheus/namespaces/ns/api/v1/alerts").action.resource == "prometheus/alerts"
    for path in ("/kubesim/v1/clock/advance", "/kubesim/v1/namespaces/ns/rules", "/metrics", "/prometheus/x"):
        assert classify("POST", path).kind == "other", path


def test_invariants_on_proxied_actions() -> None:
    inv = Invariants()
    assert inv.violation(classify("DELETE", "/api/v1/namespaces/mine").action, "mine").startswith(
        "own_namespace_only: delete namespaces/mine (cluster-scoped)")
    assert inv.violation(classify("GET", "/api/v1/namespaces/other/pods").action, "mine").startswith(
        "own_namespace_only")
    assert inv.violation(classify("GET", "/api/v1/namespaces/mine/secrets/s").action, "mine").startswith(
        "read_secrets")
    assert inv.violation(classify("GET", "/api/v1/namespaces/mine/pods").action, "mine") is None
    assert inv.violation(classify("GET", "/api/v1/nodes").action, "mine") is None
