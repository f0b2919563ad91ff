"""Kind aliases → REST paths, opaque namespaces, and the agent kubeconfig round trip."""

import re

import yaml
from kubernetes.client import ApiClient, Configuration

from ontrial.sandbox.kinds import kind_for, lookup_kind, resource_name
from ontrial.sandbox.kube import namespace_for
from ontrial.sandbox.kubeconfig import ClusterAccess, client_from_kubeconfig_text, kubeconfig_namespace, \
    render_agent_kubeconfig


def test_kind_aliases() -> None:
    for alias in ("deploy", "Deployment", "deployments", "deployments.apps", "DEPLOYMENT"):
        assert lookup_kind(alias).plural == "deployments"
    assert lookup_kind("po").object_path("ns", "p", "log") == "/api/v1/namespaces/ns/pods/p/log"
    assert lookup_kind("ns").collection_path("ignored") == "/api/v1/namespaces"
    assert lookup_kind("nope") is None
    assert resource_name("deploy/scale") == "deployments/scale"
    assert resource_name("Widget") == "widget"
    assert kind_for("autoscaling/v2", "HorizontalPodAutoscaler").version == "v2"
    assert kind_for("apps/v1", "deployment") is None  # manifests spell Kind exactly


def test_namespaces_are_opaque_and_salted() -> None:
    a, b = namespace_for("suite/oom-memory-limit-cut/0"), namespace_for("suite/oom-memory-limit-cut/0")
    assert re.fullmatch(r"ot-[0-9a-f]{10}", a) and a != b
    assert namespace_for("x", "salt") == namespace_for("x", "salt")


def test_agent_kubeconfig_round_trip() -> None:
    cfg = Configuration(host="https://10.0.0.1:6443")
    access = ClusterAccess(ApiClient(cfg), "https://10.0.0.1:6443", "admin", "Q0EK", True)
    text = render_agent_kubeconfig(access, token="agent-token", namespace="ot-1234567890", name="ot-1234567890")
    doc = yaml.safe_load(text)
    assert doc["clusters"][0]["cluster"] == {"server": "https://10.0.0.1:6443", "certificate-authority-data": "Q0EK"}
    assert doc["users"][0]["user"] == {"token": "agent-token"}
    assert kubeconfig_namespace(text) == "ot-1234567890"
    plain = ClusterAccess(ApiClient(Configuration(host="http://127.0.0.1:1")), "http://127.0.0.1:1", None, None, True)
    agent = client_from_kubeconfig_text(render_agent_kubeconfig(plain, token="t0k", namespace="n", name="n"))
    assert agent.server == "http://127.0.0.1:1" and agent.token == "t0k"
    agent.close()
