"""Authentication and RBAC: ServiceAccount tokens from TokenRequest, Roles/ClusterRoles and their
bindings, the real server's 401/403 wording, and the access/rules reviews."""

from __future__ import annotations

import json
from typing import Iterator

import httpx
import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

RBAC = "rbac.authorization.k8s.io"


def token_client(url: str, token: str) -> client.ApiClient:
    cfg = client.Configuration(host=url)
    cfg.api_key = {"authorization": f"Bearer {token}"}
    return client.ApiClient(cfg)


def issue_token(core_v1: client.CoreV1Api, namespace: str, sa: str, seconds: int = 3600) -> str:
    req = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=seconds))
    return core_v1.create_namespaced_service_account_token(sa, namespace, req).status.token


def bind(rbac: client.RbacAuthorizationV1Api, namespace: str, name: str, role_kind: str, role: str, sa_ns: str,
         sa: str) -> None:
    rbac.create_namespaced_role_binding(namespace, {
        "apiVersion": f"{RBAC}/v1", "kind": "RoleBinding", "metadata": {"name": name},
        "roleRef": {"apiGroup": RBAC, "kind": role_kind, "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": sa_ns}]})


@pytest.fixture
def second_namespace(core_v1: client.CoreV1Api, namespace: str) -> Iterator[str]:
    name = f"{namespace}-b"
    core_v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield name
    core_v1.delete_namespace(name)


@pytest.fixture
def agent(kubesim_server, api_client, core_v1, namespace) -> Iterator[client.CoreV1Api]:
    """ServiceAccount "agent" in ``namespace`` allowed to get/list pods there, as a CoreV1Api."""
    rbac = client.RbacAuthorizationV1Api(api_client)
    core_v1.create_namespaced_service_account(namespace, client.V1ServiceAccount(
        metadata=client.V1ObjectMeta(name="agent")))
    rbac.create_namespaced_role(namespace, {
        "apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": {"name": "pod-reader"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]})
    bind(rbac, namespace, "agent-reads-pods", "Role", "pod-reader", namespace, "agent")
    core_v1.create_namespaced_pod(namespace, client.V1Pod(
        metadata=client.V1ObjectMeta(name="p"),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx:1.25")])))
    api = token_client(kubesim_server.url, issue_token(core_v1, namespace, "agent"))
    try:
        yield client.CoreV1Api(api)
    finally:
        api.close()


def status_of(err: pytest.ExceptionInfo) -> dict:
    return json.loads(err.value.body)


def test_role_grants_only_its_verbs_in_its_namespace(agent, namespace, second_namespace):
    assert [p.metadata.name for p in agent.list_namespaced_pod(namespace).items] == ["p"]
    assert agent.read_namespaced_pod("p", namespace).metadata.name == "p"
    user = f"system:serviceaccount:{namespace}:agent"
    with pytest.raises(ApiException) as err:
        agent.list_namespaced_pod(second_namespace)
    assert err.value.status == 403
    body = status_of(err)
    assert body["reason"] == "Forbidden"
    assert body["message"] == (f'pods is forbidden: User "{user}" cannot list resource "pods" in API group "" '
                               f'in the namespace "{second_namespace}"')
    with pytest.raises(ApiException) as err:
        agent.delete_namespaced_pod("p", namespace)
    assert status_of(err)["message"] == (f'pods "p" is forbidden: User "{user}" cannot delete resource "pods" in '
                                         f'API group "" in the namespace "{namespace}"')
    with pytest.raises(ApiException) as err:
        agent.list_pod_for_all_namespaces()
    assert status_of(err)["message"].endswith('cannot list resource "pods" in API group "" at the cluster scope')
    with pytest.raises(ApiException) as err:
        agent.read_namespaced_pod_log("p", namespace)
    assert 'cannot get resource "pods/log"' in status_of(err)["message"]
    with pytest.raises(ApiException) as err:
        agent.list_namespaced_config_map(namespace)
    assert err.value.status == 403


def test_cluster_role_bound_in_a_namespace_and_resource_names(api_client, agent, namespace, second_namespace):
    rbac = client.RbacAuthorizationV1Api(api_client)
    bind(rbac, second_namespace, "agent-views", "ClusterRole", "view", namespace, "agent")
    assert agent.list_namespaced_pod(second_namespace).items == []
    assert agent.list_namespaced_config_map(second_namespace) is not None
    with pytest.raises(ApiException) as err:
        agent.list_namespaced_secret(second_namespace)  # view does not include secrets
    assert err.value.status == 403
    rbac.create_namespaced_role(namespace, {
        "apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": {"name": "one-cm"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["allowed"],
                   "verbs": ["get", "update", "patch"]}]})
    bind(rbac, namespace, "agent-one-cm", "Role", "one-cm", namespace, "agent")
    admin = client.CoreV1Api(api_client)
    for name in ("allowed", "denied"):
        admin.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name)))
    assert agent.read_namespaced_config_map("allowed", namespace).metadata.name == "allowed"
    agent.patch_namespaced_config_map("allowed", namespace, {"data": {"by": "agent"}})
    with pytest.raises(ApiException) as err:
        agent.read_namespaced_config_map("denied", namespace)
    assert err.value.status == 403
    with pytest.raises(ApiException) as err:
        agent.list_namespaced_config_map(namespace)  # resourceNames never grant list
    assert err.value.status == 403


def test_cluster_role_binding_grants_cluster_scope(api_client, agent, namespace):
    rbac = client.RbacAuthorizationV1Api(api_client)
    rbac.create_cluster_role(body={"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole",
                                   "metadata": {"name": f"{namespace}-nodes"},
                                   "rules": [{"apiGroups": [""], "resources": ["nodes", "pods"],
                                              "verbs": ["list"]}]})
    rbac.create_cluster_role_binding(body={
        "apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": f"{namespace}-nodes"},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": f"{namespace}-nodes"},
        "subjects": [{"kind": "Group", "name": f"system:serviceaccounts:{namespace}"}]})
    try:
        assert any(n.metadata.name == "kubesim-node-1" for n in agent.list_node().items)
        assert any(p.metadata.name == "p" for p in agent.list_pod_for_all_namespaces().items)
    finally:
        rbac.delete_cluster_role_binding(f"{namespace}-nodes")
        rbac.delete_cluster_role(f"{namespace}-nodes")
    with pytest.raises(ApiException) as err:
        agent.list_node()
    assert err.value.status == 403


def test_missing_bad_revoked_and_expired_tokens_get_401(kubesim_server, core_v1, namespace):
    url = f"{kubesim_server.url}/api/v1/namespaces/{namespace}/pods"
    assert httpx.get(url).status_code == 401
    assert httpx.get(url, headers={"Authorization": "Bearer nope"}).status_code == 401
    assert httpx.get(url, headers={"Authorization": "Basic YWRtaW46YWRtaW4="}).status_code == 401
    body = httpx.get(url).json()
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
    assert httpx.get(f"{kubesim_server.url}/healthz").status_code == 200  # health needs no token

    core_v1.create_namespaced_service_account(namespace, client.V1ServiceAccount(
        metadata=client.V1ObjectMeta(name="short")))
    token = issue_token(core_v1, namespace, "short", seconds=600)
    tampered = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    auth = {"Authorization": f"Bearer {token}"}
    assert httpx.get(f"{kubesim_server.url}/api", headers=auth).status_code == 200
    assert httpx.get(f"{kubesim_server.url}/api", headers={"Authorization": f"Bearer {tampered}"}).status_code == 401
    kubesim_server.advance(601)
    assert httpx.get(f"{kubesim_server.url}/api", headers=auth).status_code == 401

    token = issue_token(core_v1, namespace, "short")
    auth = {"Authorization": f"Bearer {token}"}
    assert httpx.get(f"{kubesim_server.url}/api", headers=auth).status_code == 200
    core_v1.delete_namespaced_service_account("short", namespace)
    assert httpx.get(f"{kubesim_server.url}/api", headers=auth).status_code == 401
    core_v1.create_namespaced_service_account(namespace, client.V1ServiceAccount(
        metadata=client.V1ObjectMeta(name="short")))
    assert httpx.get(f"{kubesim_server.url}/api", headers=auth).status_code == 401  # new uid, old token dead


def test_every_authenticated_user_reads_discovery_but_not_admin_endpoints(kubesim_server, core_v1, namespace):
    core_v1.create_namespaced_service_account(namespace, client.V1ServiceAccount(
        metadata=client.V1ObjectMeta(name="nobody")))
    auth = {"Authorization": f"Bearer {issue_token(core_v1, namespace, 'nobody')}"}
    with httpx.Client(base_url=kubesim_server.url, headers=auth) as http:
        for path in ("/api", "/apis", "/api/v1", "/apis/apps/v1", "/version", "/openapi/v2"):
            assert http.get(path).status_code == 200, path
        assert http.get(f"/api/v1/namespaces/{namespace}/pods").status_code == 403
        resp = http.post("/kubesim/v1/clock/advance", json={"seconds": 5})
        assert resp.status_code == 403 and resp.json()["reason"] == "Forbidden"


def test_self_subject_access_and_rules_reviews(kubesim_server, agent, namespace, second_namespace):
    authz = client.AuthorizationV1Api(agent.api_client)

    def can(verb: str, resource: str, ns: str, subresource: str | None = None) -> bool:
        review = authz.create_self_subject_access_review(client.V1SelfSubjectAccessReview(
            spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=client.V1ResourceAttributes(
                verb=verb, resource=resource, namespace=ns, subresource=subresource))))
        return review.status.allowed

    assert can("list", "pods", namespace)
    assert not can("delete", "pods", namespace)
    assert not can("list", "pods", second_namespace)
    assert not can("get", "pods", namespace, subresource="log")
    rules = authz.create_self_subject_rules_review(client.V1SelfSubjectRulesReview(
        spec=client.V1SelfSubjectRulesReviewSpec(namespace=namespace))).status
    assert {"verbs": ["get", "list"], "api_groups": [""], "resources": ["pods"]}.items() <= \
        next(r.to_dict() for r in rules.resource_rules if r.resources == ["pods"]).items()
    admin_authz = client.AuthorizationV1Api(client.ApiClient(_admin_config(kubesim_server)))
    review = admin_authz.create_self_subject_access_review(client.V1SelfSubjectAccessReview(
        spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=client.V1ResourceAttributes(
            verb="delete", resource="nodes"))))
    assert review.status.allowed
    sar = admin_authz.create_subject_access_review(client.V1SubjectAccessReview(spec=client.V1SubjectAccessReviewSpec(
        user=f"system:serviceaccount:{namespace}:agent", resource_attributes=client.V1ResourceAttributes(
            verb="get", resource="pods", namespace=namespace))))
    assert sar.status.allowed


def _admin_config(kubesim_server) -> client.Configuration:
    cfg = client.Configuration(host=kubesim_server.url)
    cfg.api_key = {"authorization": f"Bearer {kubesim_server.admin_token}"}
    return cfg
