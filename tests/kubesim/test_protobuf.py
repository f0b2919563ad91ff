"""Protobuf request bodies (kubectl 1.32's typed commands) and impersonation (``--as``)."""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
from pathlib import Path

import httpx
import pytest

KUBECTL_132 = "/usr/bin/kubectl"
PROTOBUF = "application/vnd.kubernetes.protobuf"


# -- a tiny protobuf writer, enough to build Kubernetes envelopes ---------------------------------
def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, value: int | str | bytes) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return b"k8s\x00" + field(1, field(1, api_version) + field(2, kind)) + field(2, raw) + field(3, "") + field(4, "")


def configmap(name: str, *extra: bytes) -> bytes:
    meta = field(1, name) + field(2, "") + field(7, 0) + field(8, b"")  # gogo writes zero values too
    return envelope("v1", "ConfigMap", field(1, meta) + field(2, field(1, "k") + field(2, "v")) + b"".join(extra))


@pytest.fixture
def http(kubesim_server):
    with httpx.Client(base_url=kubesim_server.url, timeout=10,
                      headers={"Authorization": f"Bearer {kubesim_server.admin_token}",
                               "Content-Type": PROTOBUF}) as c:
        yield c


def test_protobuf_bodies_decode_like_json(http, namespace):
    resp = http.post(f"/api/v1/namespaces/{namespace}/configmaps", content=configmap("pb"))
    assert resp.status_code == 201, resp.text
    assert resp.json()["data"] == {"k": "v"} and resp.json()["metadata"]["name"] == "pb"
    secret = envelope("v1", "Secret", field(1, field(1, "s")) + field(2, field(1, "key") + field(2, b"\x00\xffraw"))
                      + field(3, "Opaque"))
    made = http.post(f"/api/v1/namespaces/{namespace}/secrets", content=secret).json()
    assert base64.b64decode(made["data"]["key"]) == b"\x00\xffraw" and made["type"] == "Opaque"
    labels = field(1, "app") + field(2, "z")  # one map entry
    container = field(1, "c") + field(2, "nginx")
    template = field(1, field(11, labels)) + field(2, field(2, container))
    spec = field(1, 0) + field(2, field(1, labels)) + field(3, template)  # replicas: 0
    zero = envelope("apps/v1", "Deployment", field(1, field(1, "zero") + field(11, labels)) + field(2, spec))
    deployed = http.post(f"/apis/apps/v1/namespaces/{namespace}/deployments", content=zero)
    assert deployed.status_code == 201, deployed.text
    assert deployed.json()["spec"]["replicas"] == 0  # a pointer field keeps its zero


def test_protobuf_refusals_are_clear(http, namespace):
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    unknown = http.post(path, content=configmap("u", field(9, "surprise")))
    assert unknown.status_code == 415 and "field 9 of ConfigMap" in unknown.json()["message"]
    ignored = http.post(path, content=configmap("zeros", field(9, ""), field(10, 0)))
    assert ignored.status_code == 201  # unknown fields holding only zero values are what gogo writes
    pod = http.post(f"/api/v1/namespaces/{namespace}/pods", content=envelope("v1", "Pod", field(1, field(1, "p"))))
    assert pod.status_code == 415 and "protobuf only for" in pod.json()["message"]
    assert "application/json" in pod.json()["message"]
    assert http.post(path, content=b"k8s\x00\x0a\xff").status_code == 400
    assert http.post(path, content=b"not protobuf").status_code == 400
    wrong_kind = http.post(path, content=envelope("v1", "Secret", field(1, field(1, "x"))))
    assert wrong_kind.status_code == 400


def test_mangled_protobuf_never_gets_a_500(http, namespace):
    rng = random.Random(11)
    base = configmap("fz")
    for _ in range(400):
        body = bytearray(base)
        for _ in range(rng.randint(1, 4)):
            body[rng.randrange(4, len(body))] = rng.getrandbits(8)
        resp = http.post(f"/api/v1/namespaces/{namespace}/configmaps", content=bytes(body))
        assert resp.status_code < 500, (bytes(body), resp.text)


def test_impersonation_is_authorized_and_applied(kubesim_server, core_v1, namespace):
    from kubernetes import client
    core_v1.create_namespaced_service_account(namespace, client.V1ServiceAccount(
        metadata=client.V1ObjectMeta(name="imp")))
    url = f"{kubesim_server.url}/api/v1/namespaces/{namespace}/pods"
    admin = {"Authorization": f"Bearer {kubesim_server.admin_token}"}
    as_sa = dict(admin, **{"Impersonate-User": f"system:serviceaccount:{namespace}:imp"})
    resp = httpx.get(url, headers=as_sa)
    assert resp.status_code == 403
    assert f'User "system:serviceaccount:{namespace}:imp" cannot list resource "pods"' in resp.json()["message"]
    assert httpx.get(url, headers=dict(admin, **{"Impersonate-User": "jane",
                                                 "Impersonate-Group": "system:masters"})).status_code == 200
    token = core_v1.create_namespaced_service_account_token("imp", namespace, client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[]))).status.token
    resp = httpx.get(url, headers={"Authorization": f"Bearer {token}", "Impersonate-User": "admin"})
    assert resp.status_code == 403
    assert 'cannot impersonate resource "users"' in resp.json()["message"]


@pytest.fixture
def kubectl132(kubesim_server, tmp_path: Path):
    if not os.access(KUBECTL_132, os.X_OK):
        pytest.skip(f"kubectl 1.32 not found at {KUBECTL_132}")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([KUBECTL_132, "--kubeconfig", kubesim_server.kubeconfig_path, "--cache-dir",
                               str(tmp_path / "cache"), *args], capture_output=True, text=True, timeout=60)
    return run


def test_kubectl_132_typed_create_commands(kubectl132, core_v1, namespace):
    ns = ["-n", namespace]
    for args in (["create", "configmap", "cfg", "--from-literal=a=b"],
                 ["create", "secret", "generic", "sec", "--from-literal=p=w"],
                 ["create", "deployment", "web", "--image=nginx:1.25", "--replicas=2", "--port=80"],
                 ["create", "serviceaccount", "bot"],
                 ["create", "role", "reader", "--verb=get,list", "--resource=pods"],
                 ["create", "rolebinding", "bot-reads", "--role=reader", f"--serviceaccount={namespace}:bot"],
                 ["create", "job", "once", "--image=busybox", "--", "echo", "hi"],
                 ["create", "service", "clusterip", "web", "--tcp=80:8080"],
                 ["create", "quota", "q", "--hard=pods=50"]):
        result = kubectl132(*args, *ns)
        assert result.returncode == 0, (args, result.stderr)
    assert core_v1.read_namespaced_config_map("cfg", namespace).data == {"a": "b"}
    assert base64.b64decode(core_v1.read_namespaced_secret("sec", namespace).data["p"]) == b"w"
    token = kubectl132("create", "token", "bot", "--duration=2h", *ns)
    assert token.returncode == 0 and token.stdout.count(".") == 2
    assert kubectl132("auth", "can-i", "list", "pods", *ns).stdout.strip() == "yes"
    as_bot = ["--as", f"system:serviceaccount:{namespace}:bot"]
    assert kubectl132("auth", "can-i", "list", "pods", *ns, *as_bot).stdout.strip() == "yes"
    denied = kubectl132("auth", "can-i", "delete", "pods", *ns, *as_bot)
    assert denied.stdout.strip() == "no" and denied.returncode == 1
    created = kubectl132("create", "namespace", f"{namespace}-pb")
    assert created.returncode == 0, created.stderr
    core_v1.delete_namespace(f"{namespace}-pb")
    listed = json.loads(kubectl132("get", "deploy", "web", "-o", "json", *ns).stdout)
    assert listed["spec"]["replicas"] == 2
    assert listed["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
