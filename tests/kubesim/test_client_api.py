"""The official kubernetes Python client against kubesim: CRUD, selectors, the patch types,
watch with resume, logs, the scale/status/token/eviction subresources, metrics and Tables."""

from __future__ import annotations

import base64
import json
from datetime import timedelta

import httpx
import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

PROFILE = {
    "image": "hserver-tests/echo",
    "tags": ["1.0"],
    "pull_seconds": 1,
    "startup_seconds": 1,
    "ports": [8080],
    "memory": {"working_set_mi": 50},
    "cpu": {"millicores": 20},
    "logs": {"starting": ["echo starting"], "ready": ["echo listening on :8080"]},
}
IMAGE = "hserver-tests/echo:1.0"


@pytest.fixture(scope="module", autouse=True)
def echo_profile(kubesim_server):
    resp = httpx.post(f"{kubesim_server.url}/kubesim/v1/profiles", json=[PROFILE],
                      headers={"Authorization": f"Bearer {kubesim_server.admin_token}"})
    assert resp.status_code == 200, resp.text


def cm(name: str, labels: dict | None = None, data: dict | None = None) -> client.V1ConfigMap:
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels), data=data or {"k": "v"})


def pod(name: str, labels: dict | None = None) -> client.V1Pod:
    return client.V1Pod(metadata=client.V1ObjectMeta(name=name, labels=labels),
                        spec=client.V1PodSpec(containers=[client.V1Container(name="echo", image=IMAGE)]))


def deployment(name: str, replicas: int = 1) -> client.V1Deployment:
    labels = {"app": name}
    return client.V1Deployment(
        metadata=client.V1ObjectMeta(name=name, labels=labels),
        spec=client.V1DeploymentSpec(
            replicas=replicas, selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels=labels),
                                              spec=client.V1PodSpec(containers=[client.V1Container(name="echo",
                                                                                                   image=IMAGE)]))))


def test_configmap_crud_round_trip(core_v1, namespace):
    created = core_v1.create_namespaced_config_map(namespace, cm("app", data={"a": "1"}))
    assert created.metadata.uid and created.metadata.resource_version
    got = core_v1.read_namespaced_config_map("app", namespace)
    assert got.data == {"a": "1"} and got.metadata.uid == created.metadata.uid
    got.data["b"] = "2"
    replaced = core_v1.replace_namespaced_config_map("app", namespace, got)
    assert replaced.data == {"a": "1", "b": "2"}
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
    status = core_v1.delete_namespaced_config_map("app", namespace)  # the client leaves this one a dict
    assert status["kind"] == "Status" and status["status"] == "Success"
    assert status["details"] == {"name": "app", "group": "", "kind": "configmaps", "uid": created.metadata.uid}
    with pytest.raises(ApiException) as err:
        core_v1.read_namespaced_config_map("app", namespace)
    assert err.value.status == 404
    assert json.loads(err.value.body)["message"] == 'configmaps "app" not found'


def test_generate_name_and_dry_run(core_v1, namespace):
    made = core_v1.create_namespaced_config_map(namespace, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(generate_name="gen-"), data={"x": "y"}))
    assert made.metadata.name.startswith("gen-") and len(made.metadata.name) == len("gen-") + 5
    dry = core_v1.create_namespaced_config_map(namespace, cm("dry"), dry_run="All")
    assert dry.metadata.name == "dry"
    with pytest.raises(ApiException) as err:
        core_v1.read_namespaced_config_map("dry", namespace)
    assert err.value.status == 404


def test_list_with_label_and_field_selectors(core_v1, namespace):
    core_v1.create_namespaced_config_map(namespace, cm("one", {"app": "a", "tier": "web"}))
    core_v1.create_namespaced_config_map(namespace, cm("two", {"app": "b"}))
    core_v1.create_namespaced_config_map(namespace, cm("three"))

    def names(**kw) -> list[str]:
        items = core_v1.list_namespaced_config_map(namespace, **kw).items
        return sorted(i.metadata.name for i in items if i.metadata.name != "kube-root-ca.crt")

    assert names(label_selector="app=a") == ["one"]
    assert names(label_selector="app in (a,b)") == ["one", "two"]
    assert names(label_selector="app!=a") == ["three", "two"]
    assert names(label_selector="!app") == ["three"]
    assert names(label_selector="app,tier=web") == ["one"]
    assert names(field_selector="metadata.name=two") == ["two"]
    assert names(field_selector="metadata.name!=two", label_selector="app") == ["one"]


def test_list_in_chunks_with_limit_and_continue(core_v1, namespace):
    for i in range(5):
        core_v1.create_namespaced_config_map(namespace, cm(f"chunk-{i}", {"chunked": "yes"}))
    pages, token = [], None
    while True:
        page = core_v1.list_namespaced_config_map(namespace, label_selector="chunked", limit=2, _continue=token)
        pages.append(([i.metadata.name for i in page.items], page.metadata.remaining_item_count))
        token = page.metadata._continue
        if not token:
            break
    assert pages == [(["chunk-0", "chunk-1"], 3), (["chunk-2", "chunk-3"], 1), (["chunk-4"], None)]
    everything = core_v1.list_namespaced_config_map(namespace, label_selector="chunked", limit=0)
    assert len(everything.items) == 5 and not everything.metadata._continue
    with pytest.raises(ApiException) as err:
        core_v1.list_namespaced_config_map(namespace, limit=2, _continue="not-a-token")
    assert err.value.status == 400 and "continue key is not valid" in json.loads(err.value.body)["message"]


def test_cluster_wide_list_sees_every_namespace(core_v1, namespace):
    core_v1.create_namespaced_config_map(namespace, cm("wide", {"probe": namespace}))
    found = core_v1.list_config_map_for_all_namespaces(label_selector=f"probe={namespace}").items
    assert [(i.metadata.namespace, i.metadata.name) for i in found] == [(namespace, "wide")]


def test_three_patch_types_and_server_side_apply(core_v1, namespace):
    core_v1.create_namespaced_config_map(namespace, cm("p", {"app": "p"}, {"a": "1", "b": "2"}))
    smp = core_v1.patch_namespaced_config_map("p", namespace, {"data": {"c": "3"}})
    assert smp.data == {"a": "1", "b": "2", "c": "3"}
    merged = core_v1.patch_namespaced_config_map("p", namespace, {"data": {"a": None}},
                                                 _content_type="application/merge-patch+json")
    assert merged.data == {"b": "2", "c": "3"}
    jp = core_v1.patch_namespaced_config_map("p", namespace, [{"op": "replace", "path": "/data/b", "value": "20"},
                                                              {"op": "add", "path": "/metadata/labels/x", "value": "y"}])
    assert jp.data["b"] == "20" and jp.metadata.labels == {"app": "p", "x": "y"}
    applied = core_v1.patch_namespaced_config_map(
        "fresh", namespace, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fresh"}, "data": {"z": "1"}},
        field_manager="tests", _content_type="application/apply-patch+yaml")
    assert applied.data == {"z": "1"}
    assert core_v1.read_namespaced_config_map("fresh", namespace).data == {"z": "1"}


def test_put_with_stale_resource_version_conflicts(core_v1, namespace):
    first = core_v1.create_namespaced_config_map(namespace, cm("c"))
    core_v1.patch_namespaced_config_map("c", namespace, {"data": {"k": "new"}})
    first.data = {"k": "stale"}
    with pytest.raises(ApiException) as err:
        core_v1.replace_namespaced_config_map("c", namespace, first)
    assert err.value.status == 409
    assert json.loads(err.value.body)["reason"] == "Conflict"


def test_watch_streams_and_resumes_from_resource_version(core_v1, namespace):
    rv = core_v1.list_namespaced_config_map(namespace).metadata.resource_version
    core_v1.create_namespaced_config_map(namespace, cm("w1"))
    core_v1.patch_namespaced_config_map("w1", namespace, {"data": {"k": "2"}})
    seen = []
    w = watch.Watch()
    for ev in w.stream(core_v1.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=1):
        seen.append((ev["type"], ev["object"].metadata.name, ev["object"].metadata.resource_version))
        if len(seen) == 2:
            w.stop()
    assert [(t, n) for t, n, _ in seen] == [("ADDED", "w1"), ("MODIFIED", "w1")]
    # Resume after the first event: only what followed it is replayed.
    resumed = [(ev["type"], ev["object"].data) for ev in
               watch.Watch().stream(core_v1.list_namespaced_config_map, namespace, resource_version=seen[0][2],
                                    timeout_seconds=1)]
    assert resumed == [("MODIFIED", {"k": "2"})]
    # No resourceVersion: the current state arrives as ADDED events.
    current = [(ev["type"], ev["object"].metadata.name) for ev in
               watch.Watch().stream(core_v1.list_namespaced_config_map, namespace, timeout_seconds=1)]
    assert ("ADDED", "w1") in current


def test_watch_with_label_selector_reports_objects_leaving_it(core_v1, namespace):
    core_v1.create_namespaced_config_map(namespace, cm("sel", {"app": "x"}))
    rv = core_v1.list_namespaced_config_map(namespace).metadata.resource_version
    core_v1.patch_namespaced_config_map("sel", namespace, {"metadata": {"labels": {"app": "y"}}})
    core_v1.create_namespaced_config_map(namespace, cm("other", {"app": "z"}))
    events = [(ev["type"], ev["object"].metadata.name) for ev in
              watch.Watch().stream(core_v1.list_namespaced_config_map, namespace, label_selector="app=x",
                                   resource_version=rv, timeout_seconds=1)]
    assert events == [("DELETED", "sel")]


def test_watch_from_expired_resource_version_gets_410(kubesim_server, core_v1, namespace):
    def shrink_log():
        store = kubesim_server.cluster.store
        from collections import deque
        store._log = deque(list(store._log)[-3:], maxlen=store._log.maxlen)  # as if the window moved on
    for i in range(5):
        core_v1.create_namespaced_config_map(namespace, cm(f"old{i}"))
    kubesim_server.call(shrink_log)
    resp = httpx.get(f"{kubesim_server.url}/api/v1/namespaces/{namespace}/configmaps",
                     params={"watch": "true", "resourceVersion": "1", "timeoutSeconds": "1"},
                     headers={"Authorization": f"Bearer {kubesim_server.admin_token}"})
    assert resp.status_code == 200
    event = json.loads(resp.text.splitlines()[0])
    assert event["type"] == "ERROR"
    assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"


def test_watch_renders_table_rows_when_asked(kubesim_server, core_v1, namespace):
    core_v1.create_namespaced_config_map(namespace, cm("tbl"))
    resp = httpx.get(f"{kubesim_server.url}/api/v1/namespaces/{namespace}/configmaps",
                     params={"watch": "true", "timeoutSeconds": "0"},
                     headers={"Authorization": f"Bearer {kubesim_server.admin_token}",
                              "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"})
    events = [json.loads(line) for line in resp.text.splitlines()]
    assert {e["type"] for e in events} == {"ADDED"} and {e["object"]["kind"] for e in events} == {"Table"}
    assert "tbl" in [e["object"]["rows"][0]["cells"][0] for e in events]


def test_list_as_table(kubesim_server, core_v1, namespace):
    core_v1.create_namespaced_config_map(namespace, cm("t1", data={"a": "1", "b": "2"}))
    resp = httpx.get(f"{kubesim_server.url}/api/v1/namespaces/{namespace}/configmaps",
                     headers={"Authorization": f"Bearer {kubesim_server.admin_token}",
                              "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"})
    table = resp.json()
    assert table["kind"] == "Table" and table["metadata"]["resourceVersion"]
    assert [c["name"] for c in table["columnDefinitions"]][:2] == ["Name", "Data"]
    rows = {r["cells"][0]: r for r in table["rows"]}
    assert rows["t1"]["cells"][1] == 2
    assert rows["t1"]["object"]["kind"] == "PartialObjectMetadata"


def test_pod_runs_and_logs_can_be_read(kubesim_server, core_v1, namespace):
    core_v1.create_namespaced_pod(namespace, pod("echo"))
    kubesim_server.advance(10)
    p = core_v1.read_namespaced_pod("echo", namespace)
    assert p.status.phase == "Running", p.status
    text = core_v1.read_namespaced_pod_log("echo", namespace)
    assert "echo listening on :8080" in text
    assert core_v1.read_namespaced_pod_log("echo", namespace, tail_lines=1).count("\n") <= 1
    stamped = core_v1.read_namespaced_pod_log("echo", namespace, container="echo", timestamps=True)
    assert stamped.split(" ", 1)[0].endswith("Z")
    with pytest.raises(ApiException) as err:
        core_v1.read_namespaced_pod_log("echo", namespace, container="nope")
    assert err.value.status == 400


def test_scale_subresource_drives_the_deployment(kubesim_server, apps_v1, core_v1, namespace):
    apps_v1.create_namespaced_deployment(namespace, deployment("web", 1))
    scale = apps_v1.read_namespaced_deployment_scale("web", namespace)
    assert scale.spec.replicas == 1 and scale.status.selector == "app=web"
    patched = apps_v1.patch_namespaced_deployment_scale("web", namespace, {"spec": {"replicas": 3}},
                                                       _content_type="application/merge-patch+json")
    assert patched.spec.replicas == 3
    scale = apps_v1.read_namespaced_deployment_scale("web", namespace)
    scale.spec.replicas = 2
    assert apps_v1.replace_namespaced_deployment_scale("web", namespace, scale).spec.replicas == 2
    kubesim_server.advance(10)
    assert apps_v1.read_namespaced_deployment("web", namespace).spec.replicas == 2
    pods = core_v1.list_namespaced_pod(namespace, label_selector="app=web").items
    assert len(pods) == 2
    rs = apps_v1.list_namespaced_replica_set(namespace).items[0]
    assert apps_v1.read_namespaced_replica_set_scale(rs.metadata.name, namespace).status.replicas == 2


def test_status_subresource_only_changes_status(core_v1, namespace):
    svc = client.V1Service(metadata=client.V1ObjectMeta(name="lb"),
                           spec=client.V1ServiceSpec(type="LoadBalancer", ports=[client.V1ServicePort(port=80)]))
    core_v1.create_namespaced_service(namespace, svc)
    patched = core_v1.patch_namespaced_service_status(
        "lb", namespace, {"status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.9"}]}},
                          "spec": {"ports": [{"port": 81}]}})
    assert patched.status.load_balancer.ingress[0].ip == "203.0.113.9"
    assert patched.spec.ports[0].port == 80
    # and the main resource ignores status
    replaced = core_v1.patch_namespaced_service("lb", namespace, {"status": {"loadBalancer": {}}})
    assert replaced.status.load_balancer.ingress[0].ip == "203.0.113.9"


def test_token_request_issues_a_working_expiring_token(kubesim_server, core_v1, namespace):
    core_v1.create_namespaced_service_account(namespace, client.V1ServiceAccount(
        metadata=client.V1ObjectMeta(name="bot")))
    req = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=7200))
    issued = core_v1.create_namespaced_service_account_token("bot", namespace, req)
    token = issued.status.token
    header, payload, _ = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["sub"] == f"system:serviceaccount:{namespace}:bot"
    now = kubesim_server.call(lambda: kubesim_server.cluster.clock.now())
    expires = issued.status.expiration_timestamp
    assert timedelta(seconds=7199) <= expires - now <= timedelta(seconds=7201)
    assert httpx.get(f"{kubesim_server.url}/version", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    review = client.AuthenticationV1Api(core_v1.api_client).create_token_review(
        client.V1TokenReview(spec=client.V1TokenReviewSpec(token=token)))
    assert review.status.authenticated and review.status.user.username == claims["sub"]
    assert f"system:serviceaccounts:{namespace}" in review.status.user.groups
    with pytest.raises(ApiException) as err:
        core_v1.create_namespaced_service_account_token("bot", namespace, client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=60)))
    assert err.value.status == 422 and "less than 10 minutes" in err.value.body
    default = core_v1.create_namespaced_service_account_token("bot", namespace, client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[])))
    assert default.spec.expiration_seconds == 3600


def test_delete_answers_like_the_real_server(core_v1, apps_v1, namespace):
    core_v1.create_namespaced_pod(namespace, pod("gone"))
    deleted = core_v1.delete_namespaced_pod("gone", namespace)
    assert deleted.kind == "Pod" and deleted.metadata.name == "gone"  # pods answer with the object
    apps_v1.create_namespaced_deployment(namespace, deployment("d"))
    held = apps_v1.delete_namespaced_deployment("d", namespace, propagation_policy="Foreground")
    assert held["kind"] == "Deployment" and held["metadata"]["deletionTimestamp"]  # held by foregroundDeletion
    assert "foregroundDeletion" in held["metadata"]["finalizers"]
    with pytest.raises(ApiException) as err:
        core_v1.delete_namespaced_config_map("never-was", namespace)
    assert err.value.status == 404


def test_deletecollection_with_selector(core_v1, namespace):
    for name, app in (("a", "x"), ("b", "x"), ("c", "y")):
        core_v1.create_namespaced_config_map(namespace, cm(name, {"app": app}))
    core_v1.delete_collection_namespaced_config_map(namespace, label_selector="app=x")
    left = sorted(i.metadata.name for i in core_v1.list_namespaced_config_map(namespace).items)
    assert "a" not in left and "b" not in left and "c" in left


def test_namespace_rules_for_create(core_v1, namespace):
    with pytest.raises(ApiException) as err:
        core_v1.create_namespaced_config_map("no-such-ns", cm("x"))
    assert err.value.status == 404 and json.loads(err.value.body)["message"] == 'namespaces "no-such-ns" not found'
    core_v1.create_namespaced_config_map(namespace, cm("keep", data={"a": "b"}))
    core_v1.create_namespaced_config_map(namespace, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="held", finalizers=["example.com/hold"])))
    core_v1.delete_namespace(namespace)
    ns = core_v1.read_namespace(namespace)
    assert ns.status.phase == "Terminating"
    with pytest.raises(ApiException) as err:
        core_v1.create_namespaced_config_map(namespace, cm("late"))
    body = json.loads(err.value.body)
    assert err.value.status == 403
    assert body["message"] == (f'configmaps "late" is forbidden: unable to create new content in namespace '
                               f"{namespace} because it is being terminated")
    core_v1.patch_namespaced_config_map("held", namespace, {"metadata": {"finalizers": None}},
                                        _content_type="application/merge-patch+json")


def test_pod_eviction_and_streaming_refusal(core_v1, namespace):
    core_v1.create_namespaced_pod(namespace, pod("evict-me"))
    core_v1.create_namespaced_pod_eviction("evict-me", namespace, client.V1Eviction(
        metadata=client.V1ObjectMeta(name="evict-me", namespace=namespace)))
    with pytest.raises(ApiException) as err:
        core_v1.read_namespaced_pod("evict-me", namespace)
    assert err.value.status == 404
    core_v1.create_namespaced_pod(namespace, pod("shell"))
    with pytest.raises(ApiException) as err:
        core_v1.connect_get_namespaced_pod_exec("shell", namespace, command=["ls"], stdout=True)
    assert err.value.status == 400 and "Upgrade request required" in json.loads(err.value.body)["message"]


def test_pod_metrics_for_running_pods(kubesim_server, api_client, core_v1, namespace):
    core_v1.create_namespaced_pod(namespace, pod("m"))
    kubesim_server.advance(10)
    metrics = client.CustomObjectsApi(api_client).list_namespaced_custom_object(
        "metrics.k8s.io", "v1beta1", namespace, "pods")
    assert metrics["kind"] == "PodMetricsList"
    (item,) = metrics["items"]
    assert item["metadata"]["name"] == "m" and item["containers"][0]["name"] == "echo"
    nodes = client.CustomObjectsApi(api_client).list_cluster_custom_object("metrics.k8s.io", "v1beta1", "nodes")
    assert nodes["items"] and nodes["items"][0]["metadata"]["name"] == "kubesim-node-1"


def test_discovery_documents(kubesim_server):
    h = {"Authorization": f"Bearer {kubesim_server.admin_token}"}
    with httpx.Client(base_url=kubesim_server.url, headers=h) as http:
        core = http.get("/api/v1").json()
        by_name = {r["name"]: r for r in core["resources"]}
        assert core["groupVersion"] == "v1"
        assert by_name["pods"]["shortNames"] == ["po"] and "all" in by_name["pods"]["categories"]
        assert by_name["pods/log"]["verbs"] == ["get"]
        assert by_name["serviceaccounts/token"]["group"] == "authentication.k8s.io"
        apps = {r["name"]: r for r in http.get("/apis/apps/v1").json()["resources"]}
        assert apps["deployments/scale"]["group"] == "autoscaling" and apps["deployments/scale"]["kind"] == "Scale"
        groups = {g["name"] for g in http.get("/apis", headers={
            "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"}).json()["groups"]}
        assert {"apps", "batch", "metrics.k8s.io", "rbac.authorization.k8s.io"} <= groups
        assert http.get("/version").json()["gitVersion"].startswith("v1.")
        openapi = http.get("/openapi/v2")
        assert openapi.status_code == 200 and openapi.content == b""
        assert http.get("/openapi/v3").status_code == 404
        assert http.get("/swagger-2.0.0.pb-v1").status_code == 404
    for path in ("/healthz", "/readyz", "/livez"):
        assert httpx.get(kubesim_server.url + path).text == "ok"



def test_watch_prefix_path_and_single_object_watch(kubesim_server, core_v1, namespace):
    core_v1.create_namespaced_config_map(namespace, cm("one"))
    core_v1.create_namespaced_config_map(namespace, cm("two"))
    resp = httpx.get(f"{kubesim_server.url}/api/v1/watch/namespaces/{namespace}/configmaps/two",
                     params={"timeoutSeconds": "0"}, headers={"Authorization": f"Bearer {kubesim_server.admin_token}"})
    events = [json.loads(line) for line in resp.text.splitlines()]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "two")]


def test_server_side_apply_accepts_yaml_and_updates(kubesim_server, namespace):
    url = f"{kubesim_server.url}/api/v1/namespaces/{namespace}/configmaps/ssa"
    headers = {"Authorization": f"Bearer {kubesim_server.admin_token}", "Content-Type": "application/apply-patch+yaml"}
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: '1'\n"
    first = httpx.patch(url, params={"fieldManager": "t"}, content=body, headers=headers)
    assert first.status_code == 201 and first.json()["data"] == {"a": "1"}
    again = httpx.patch(url, params={"fieldManager": "t", "force": "true"}, content=body.replace(b"'1'", b"'2'"),
                        headers=headers)
    assert again.status_code == 200 and again.json()["data"] == {"a": "2"}


def test_orphan_deletion_keeps_dependents(kubesim_server, apps_v1, namespace):
    apps_v1.create_namespaced_deployment(namespace, deployment("orphans", 1))
    kubesim_server.advance(5)
    (rs,) = apps_v1.list_namespaced_replica_set(namespace).items
    apps_v1.delete_namespaced_deployment("orphans", namespace, propagation_policy="Orphan")
    kubesim_server.advance(5)
    kept = apps_v1.read_namespaced_replica_set(rs.metadata.name, namespace)
    assert not kept.metadata.owner_references
    with pytest.raises(ApiException) as err:
        apps_v1.read_namespaced_deployment("orphans", namespace)
    assert err.value.status == 404


def test_status_put_and_namespace_finalize(kubesim_server, core_v1, namespace):
    svc = core_v1.create_namespaced_service(namespace, client.V1Service(
        metadata=client.V1ObjectMeta(name="st"), spec=client.V1ServiceSpec(ports=[client.V1ServicePort(port=80)])))
    svc.status = client.V1ServiceStatus(load_balancer=client.V1LoadBalancerStatus(
        ingress=[client.V1LoadBalancerIngress(hostname="lb.example")]))
    svc.spec.ports[0].port = 99  # ignored by the status endpoint
    put = core_v1.replace_namespaced_service_status("st", namespace, svc)
    assert put.status.load_balancer.ingress[0].hostname == "lb.example" and put.spec.ports[0].port == 80
    ns = core_v1.read_namespace(namespace)
    assert ns.spec.finalizers == ["kubernetes"]
    ns.spec.finalizers = []
    finalized = core_v1.replace_namespace_finalize(namespace, ns)
    assert not finalized.spec.finalizers


def test_cluster_wide_deletecollection_is_not_a_route(kubesim_server):
    resp = httpx.delete(f"{kubesim_server.url}/api/v1/configmaps",
                        headers={"Authorization": f"Bearer {kubesim_server.admin_token}"})
    assert resp.status_code == 405 and resp.json()["reason"] == "MethodNotAllowed"


def test_dry_run_delete_keeps_the_object(core_v1, namespace):
    core_v1.create_namespaced_config_map(namespace, cm("stay"))
    core_v1.delete_namespaced_config_map("stay", namespace, dry_run="All")
    core_v1.delete_namespaced_config_map("stay", namespace, body=client.V1DeleteOptions(dry_run=["All"]))
    assert core_v1.read_namespaced_config_map("stay", namespace).metadata.name == "stay"
