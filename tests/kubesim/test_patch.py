"""PATCH semantics: the exact bodies kubectl 1.20/1.32 send (recorded traces), plus directive and error cases."""

from __future__ import annotations

import copy
import json

import pytest

from kubesim.errors import ApiError
from kubesim.objects import prepare, template_equal
from kubesim.patch import apply_patch
from kubesim.resources import CRONJOBS, DEPLOYMENTS, NAMESPACES, PODS, SERVICES
from kubesim.smp import list_merge_key, strategic_merge

SMP = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"


def deployment() -> dict:
    """The trace's app.yaml Deployment as the server stores it."""
    return prepare(DEPLOYMENTS, {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "api", "namespace": "default", "labels": {"app": "api"},
                     "annotations": {"deployment.kubernetes.io/revision": "1"}},
        "spec": {
            "replicas": 2, "selector": {"matchLabels": {"app": "api"}},
            "template": {"metadata": {"labels": {"app": "api"}}, "spec": {"containers": [{
                "name": "api", "image": "shop/api:1.0", "ports": [{"containerPort": 8080}],
                "env": [{"name": "DB_URL", "valueFrom": {"configMapKeyRef": {"name": "api-config", "key": "DB_URL"}}},
                        {"name": "LOG_LEVEL", "value": "info"}],
                "resources": {"limits": {"memory": "512Mi", "cpu": "500m"}}}]}}}}, None)


def patched(body: str, ct: str = SMP, obj: dict | None = None, rt=DEPLOYMENTS) -> dict:
    current = obj if obj is not None else deployment()
    before = copy.deepcopy(current)
    out = apply_patch(current, body.encode(), ct, rt)
    assert current == before, "apply_patch must not mutate the stored object"
    return out


def container(obj: dict) -> dict:
    return obj["spec"]["template"]["spec"]["containers"][0]


def no_directives(value) -> bool:
    text = json.dumps(value)
    return "$setElementOrder" not in text and "$patch" not in text and "$retainKeys" not in text \
        and "$deleteFromPrimitiveList" not in text


# -- kubectl's bodies, verbatim ---------------------------------------------------------------------

def test_set_image():
    out = patched('{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"api"}],'
                  '"containers":[{"image":"shop/api:bad","name":"api"}]}}}}')
    assert container(out)["image"] == "shop/api:bad"
    assert [e["name"] for e in container(out)["env"]] == ["DB_URL", "LOG_LEVEL"]
    assert container(out)["resources"]["limits"] == {"memory": "512Mi", "cpu": "500m"}
    assert no_directives(out)


def test_set_env_remove_with_patch_delete():
    out = patched('{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"api"}],"containers":'
                  '[{"$setElementOrder/env":[{"name":"LOG_LEVEL"}],"env":[{"$patch":"delete","name":"DB_URL"}],'
                  '"name":"api"}]}}}}')
    assert container(out)["env"] == [{"name": "LOG_LEVEL", "value": "info"}]
    assert no_directives(out)


def test_set_env_add_keeps_set_element_order():
    out = patched('{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"api"}],"containers":'
                  '[{"$setElementOrder/env":[{"name":"DB_URL"},{"name":"LOG_LEVEL"},{"name":"FEATURE_X"}],'
                  '"env":[{"name":"FEATURE_X","value":"on"}],"name":"api"}]}}}}')
    assert [e["name"] for e in container(out)["env"]] == ["DB_URL", "LOG_LEVEL", "FEATURE_X"]
    assert container(out)["env"][2] == {"name": "FEATURE_X", "value": "on"}
    assert no_directives(out)


def test_set_element_order_reorders_existing_items():
    out = patched('{"spec":{"template":{"spec":{"containers":[{"$setElementOrder/env":[{"name":"LOG_LEVEL"},'
                  '{"name":"DB_URL"}],"name":"api"}]}}}}')
    assert [e["name"] for e in container(out)["env"]] == ["LOG_LEVEL", "DB_URL"]


def test_client_side_apply_three_way_patch():
    out = patched('{"spec":{"replicas":2,"template":{"spec":{"$setElementOrder/containers":[{"name":"api"}],'
                  '"containers":[{"$setElementOrder/env":[{"name":"DB_URL"},{"name":"LOG_LEVEL"}],"name":"api"}]}}}}',
                  obj=dict(deployment(), spec=dict(deployment()["spec"], replicas=5)))
    assert out["spec"]["replicas"] == 2
    assert out["spec"]["template"] == deployment()["spec"]["template"]


def test_rollout_restart_pause_resume():
    out = patched('{"spec":{"template":{"metadata":{"annotations":'
                  '{"kubectl.kubernetes.io/restartedAt":"2026-11-30T08:34:01Z"}}}}}')
    assert out["spec"]["template"]["metadata"] == {
        "labels": {"app": "api"}, "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-30T08:34:01Z"}}
    paused = patched('{"spec":{"paused":true}}')
    assert paused["spec"]["paused"] is True
    resumed = patched('{"spec":{"paused":null}}', obj=paused)
    assert "paused" not in resumed["spec"]
    assert resumed == deployment()


def test_kubectl_patch_default_strategic_merges_container_by_name():
    out = patched('{"spec":{"template":{"spec":{"containers":[{"name":"api","resources":{"limits":'
                  '{"memory":"64Mi"}}}]}}}}')
    assert container(out)["resources"]["limits"] == {"memory": "64Mi", "cpu": "500m"}
    assert container(out)["image"] == "shop/api:1.0"


def test_merge_patch_label_annotate_and_scale():
    out = patched('{"metadata":{"labels":{"tier":"backend"}}}', MERGE)
    assert out["metadata"]["labels"] == {"app": "api", "tier": "backend"}
    out = patched('{"metadata":{"annotations":{"note":"x"}}}', MERGE)
    assert out["metadata"]["annotations"]["note"] == "x"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api-1", "namespace": "default"}}
    assert patched('{"metadata":{"labels":{"debug":"true"}}}', MERGE, pod, PODS)["metadata"]["labels"] == {
        "debug": "true"}
    scale = {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": {"name": "api", "namespace": "default"},
             "spec": {"replicas": 2}}
    assert patched('{"spec":{"replicas":3}}', MERGE, scale)["spec"]["replicas"] == 3


def test_merge_patch_replaces_lists_and_null_deletes():
    out = patched('{"spec":{"template":{"spec":{"containers":[{"name":"x","image":"y"}]}}},'
                  '"metadata":{"labels":null}}', MERGE)
    assert out["spec"]["template"]["spec"]["containers"] == [{"name": "x", "image": "y"}]
    assert "labels" not in out["metadata"]


def test_json_patch_replace_path():
    out = patched('[{"op":"replace","path":"/spec/template/spec/containers/0/resources/limits/memory",'
                  '"value":"512Mi"}]', JSON_PATCH,
                  obj=patched('{"spec":{"template":{"spec":{"containers":[{"name":"api","resources":'
                              '{"limits":{"memory":"64Mi"}}}]}}}}'))
    assert container(out)["resources"]["limits"]["memory"] == "512Mi"


def test_rollout_undo_json_patch_restores_matching_template():
    """kubectl sends the old RS template minus the hash label with "creationTimestamp": null."""
    original = deployment()
    rs_template = copy.deepcopy(original["spec"]["template"])
    rs_template["metadata"]["labels"]["pod-template-hash"] = "7d9c5b8f4"
    broken = prepare(DEPLOYMENTS, patched('{"spec":{"template":{"spec":{"$setElementOrder/containers":'
                                          '[{"name":"api"}],"containers":[{"image":"shop/api:bad","name":"api"}]}}}}'),
                     original)
    assert not template_equal(broken["spec"]["template"], rs_template)
    # The body exactly as recorded from kubectl (the RS template it read, nulls included).
    body = json.dumps([
        {"op": "replace", "path": "/spec/template", "value": {
            "metadata": {"creationTimestamp": None, "labels": {"app": "api"}},
            "spec": {"containers": [{"name": "api", "image": "shop/api:1.0", "ports": [{"containerPort": 8080}],
                                     "env": [{"name": "DB_URL", "valueFrom": {"configMapKeyRef": {
                                         "name": "api-config", "key": "DB_URL"}}},
                                             {"name": "LOG_LEVEL", "value": "info"}],
                                     "resources": {"limits": {"cpu": "500m", "memory": "512Mi"}}}]}}},
        {"op": "replace", "path": "/metadata/annotations", "value": {"deployment.kubernetes.io/revision": "1"}},
    ])
    raw = patched(body, JSON_PATCH, obj=broken)
    assert raw["spec"]["template"]["metadata"]["creationTimestamp"] is None
    stored = prepare(DEPLOYMENTS, raw, broken)
    assert "creationTimestamp" not in stored["spec"]["template"]["metadata"]
    assert stored["spec"]["template"] == original["spec"]["template"]
    assert template_equal(stored["spec"]["template"], rs_template)


def test_json_patch_all_operations():
    ops = [
        {"op": "add", "path": "/metadata/labels/tier", "value": "web"},
        {"op": "add", "path": "/spec/template/spec/containers/0/env/-", "value": {"name": "X", "value": "1"}},
        {"op": "copy", "from": "/metadata/labels/tier", "path": "/metadata/labels/copy"},
        {"op": "move", "from": "/metadata/labels/copy", "path": "/metadata/labels/moved"},
        {"op": "remove", "path": "/spec/revisionHistoryLimit"},
        {"op": "test", "path": "/spec/replicas", "value": 2},
    ]
    out = patched(json.dumps(ops), JSON_PATCH)
    assert out["metadata"]["labels"] == {"app": "api", "tier": "web", "moved": "web"}
    assert container(out)["env"][-1] == {"name": "X", "value": "1"}
    assert "revisionHistoryLimit" not in out["spec"]


@pytest.mark.parametrize("ops, code, fragment", [
    ([{"op": "test", "path": "/spec/replicas", "value": 7}], 422, "testing value /spec/replicas failed"),
    ([{"op": "remove", "path": "/spec/nope"}], 422, "remove operation does not apply"),
    ([{"op": "replace", "path": "/spec/template/spec/containers/5/image", "value": "x"}], 422, "replace"),
    ([{"op": "frobnicate", "path": "/spec"}], 422, "Unexpected kind: frobnicate"),
    ({"op": "add"}, 400, "cannot unmarshal object"),
    (["add"], 400, "cannot unmarshal string"),
])
def test_json_patch_errors(ops, code, fragment):
    with pytest.raises(ApiError) as err:
        patched(json.dumps(ops), JSON_PATCH)
    assert err.value.code == code
    assert fragment in err.value.message


# -- strategic merge directives and merge keys ------------------------------------------------------

def test_patch_replace_on_map_and_list():
    out = patched('{"metadata":{"labels":{"$patch":"replace","only":"this"}}}')
    assert out["metadata"]["labels"] == {"only": "this"}
    out = patched('{"spec":{"template":{"spec":{"containers":[{"$patch":"replace"},{"name":"new","image":"n:1"}]}}}}')
    assert out["spec"]["template"]["spec"]["containers"] == [{"name": "new", "image": "n:1"}]


def test_patch_delete_on_map_and_merge_directive():
    out = patched('{"spec":{"strategy":{"$patch":"delete"}}}')
    assert "strategy" not in out["spec"]
    out = patched('{"metadata":{"labels":{"$patch":"merge","extra":"1"}}}')
    assert out["metadata"]["labels"] == {"app": "api", "extra": "1"}


def test_retain_keys_switching_strategy_to_recreate():
    out = patched('{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}')
    assert out["spec"]["strategy"] == {"type": "Recreate"}
    assert prepare(DEPLOYMENTS, out, deployment())["spec"]["strategy"] == {"type": "Recreate"}


def test_retain_keys_rejects_unlisted_patch_fields():
    with pytest.raises(ApiError) as err:
        patched('{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate","rollingUpdate":{}}}}')
    assert err.value.code == 400 and "retainKeys" in err.value.message


def test_primitive_list_merge_and_delete_from_primitive_list():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "finalizers": ["a/x", "b/y"]},
           "spec": {"containers": [{"name": "c", "image": "i", "args": ["--one", "--two"]}]}}
    out = patched('{"metadata":{"finalizers":["c/z"]}}', obj=pod, rt=PODS)
    assert sorted(out["metadata"]["finalizers"]) == ["a/x", "b/y", "c/z"]
    out = patched('{"metadata":{"$deleteFromPrimitiveList/finalizers":["a/x"]}}', obj=pod, rt=PODS)
    assert out["metadata"]["finalizers"] == ["b/y"]
    out = patched('{"metadata":{"$setElementOrder/finalizers":["b/y","a/x"]}}', obj=pod, rt=PODS)
    assert out["metadata"]["finalizers"] == ["b/y", "a/x"]
    out = patched('{"spec":{"containers":[{"name":"c","args":["--three"]}]}}', obj=pod, rt=PODS)
    assert out["spec"]["containers"][0]["args"] == ["--three"]


def test_merge_keys_in_pod_spec_contexts():
    assert list_merge_key("Pod", ("spec", "containers")) == "name"
    assert list_merge_key("Deployment", ("spec", "template", "spec", "containers", "env")) == "name"
    assert list_merge_key("CronJob", ("spec", "jobTemplate", "spec", "template", "spec", "initContainers")) == "name"
    assert list_merge_key("Job", ("spec", "template", "spec", "containers", "ports")) == "containerPort"
    assert list_merge_key("StatefulSet", ("spec", "template", "spec", "containers", "volumeMounts")) == "mountPath"
    assert list_merge_key("DaemonSet", ("spec", "template", "spec", "volumes")) == "name"
    assert list_merge_key("Service", ("spec", "ports")) == "port"
    assert list_merge_key("Pod", ("metadata", "ownerReferences")) == "uid"
    assert list_merge_key("Pod", ("status", "conditions")) == "type"
    assert list_merge_key("Deployment", ("spec", "containers")) is None  # not a pod spec there
    assert list_merge_key("Pod", ("spec", "tolerations")) is None
    assert list_merge_key("Pod", ("spec", "containers", "envFrom")) is None
    assert list_merge_key("Pod", ("spec", "containers", "command")) is None


def test_container_ports_volume_mounts_and_volumes_merge_by_key():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "volumes": [{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}}],
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80, "name": "http"}],
                        "volumeMounts": [{"name": "a", "mountPath": "/a"}]}]}}
    body = ('{"spec":{"volumes":[{"name":"b","configMap":{"name":"cm"},"$retainKeys":["configMap","name"]}],'
            '"tolerations":[{"key":"other","operator":"Exists"}],'
            '"containers":[{"name":"c","ports":[{"containerPort":80,"protocol":"UDP"},{"containerPort":81}],'
            '"volumeMounts":[{"mountPath":"/a","readOnly":true}]}]}}')
    out = patched(body, obj=pod, rt=PODS)
    spec = out["spec"]
    assert spec["volumes"] == [{"name": "a", "emptyDir": {}}, {"name": "b", "configMap": {"name": "cm"}}]
    assert spec["tolerations"] == [{"key": "other", "operator": "Exists"}]
    c = spec["containers"][0]
    assert {"containerPort": 80, "name": "http", "protocol": "UDP"} in c["ports"]
    assert {"containerPort": 81} in c["ports"]
    assert c["volumeMounts"] == [{"name": "a", "mountPath": "/a", "readOnly": True}]


def test_new_list_items_go_first_like_the_real_server():
    out = patched('{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"s:1"}]}}}}')
    assert [c["name"] for c in out["spec"]["template"]["spec"]["containers"]] == ["sidecar", "api"]


def test_service_ports_merge_by_port_and_cronjob_template_context():
    svc = prepare(SERVICES, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api", "namespace": "d"},
                             "spec": {"selector": {"app": "api"}, "ports": [{"port": 80, "targetPort": 8080}]}}, None)
    out = patched('{"spec":{"ports":[{"port":80,"targetPort":9090}]}}', obj=svc, rt=SERVICES)
    assert out["spec"]["ports"] == [{"port": 80, "targetPort": 9090, "protocol": "TCP"}]
    cj = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"}, "spec": {"schedule": "* * * * *",
          "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
              {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}}}}}}
    out = patched('{"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"b","image":"b:2"}]}}}}}}',
                  obj=cj, rt=CRONJOBS)
    assert [c["image"] for c in out["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]] == ["a:1", "b:2"]


def test_owner_references_and_conditions_merge():
    pod = {"kind": "Pod", "metadata": {"name": "p", "ownerReferences": [{"uid": "1", "name": "a"}]},
           "status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "Scheduled", "status": "True"}]}}
    out = strategic_merge(pod, {"metadata": {"ownerReferences": [{"uid": "2", "name": "b"}]},
                                "status": {"conditions": [{"type": "Ready", "status": "True"}]}}, "Pod")
    assert {r["uid"] for r in out["metadata"]["ownerReferences"]} == {"1", "2"}
    assert out["status"]["conditions"] == [{"type": "Ready", "status": "True"}, {"type": "Scheduled", "status": "True"}]


def test_patch_delete_element_for_absent_list_and_nulls_in_new_values():
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    out = strategic_merge(pod, {"spec": {"containers": [{"name": "c", "env": [{"$patch": "delete", "name": "X"}]}],
                                         "nodeSelector": {"a": "b", "gone": None}}}, "Pod")
    assert "env" not in out["spec"]["containers"][0] or out["spec"]["containers"][0]["env"] == []
    assert out["spec"]["nodeSelector"] == {"a": "b"}


@pytest.mark.parametrize("body, fragment", [
    ('{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}', "does not contain declared merge key: name"),
    ('{"spec":{"strategy":{"$patch":"explode"}}}', "unknown patch type: explode"),
    ('{"spec":{"template":{"spec":{"$setElementOrder/containers":{"name":"api"}}}}}', "setElementOrder"),
    ('[1,2]', "invalid JSON document"),
    ('{"spec":', "invalid JSON"),
])
def test_strategic_merge_errors_are_bad_requests(body, fragment):
    with pytest.raises(ApiError) as err:
        patched(body)
    assert err.value.code == 400
    assert fragment in err.value.message


# -- server-side apply -------------------------------------------------------------------------------

def test_server_side_apply_creates_when_absent_from_yaml():
    body = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: t1\n  labels:\n    created: 2026-01-01T00:00:00Z\n"
    out = apply_patch(None, body.encode(), APPLY, NAMESPACES)
    assert out == {"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": "t1", "labels": {"created": "2026-01-01T00:00:00Z"}}}


def test_server_side_apply_merges_with_smp_keys_json_body():
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
              "spec": {"replicas": 4, "template": {"spec": {"containers": [
                  {"name": "api", "image": "shop/api:1.1", "env": [{"name": "NEW", "value": "1"}]}]}}}}
    out = patched(json.dumps(config), APPLY + "; charset=utf-8")
    assert out["spec"]["replicas"] == 4
    assert container(out)["image"] == "shop/api:1.1"
    assert [e["name"] for e in container(out)["env"]] == ["NEW", "DB_URL", "LOG_LEVEL"]
    assert out["metadata"]["namespace"] == "default"


@pytest.mark.parametrize("body, fragment", [
    ("metadata:\n  name: api\n", "Object 'Kind' is missing"),
    ("kind: Deployment\nmetadata: {name: api}\n", "Object 'apiVersion' is missing"),
    ("a: 1\n---\nb: 2\n", "error decoding YAML"),
    ("- 1\n- 2\n", "cannot unmarshal array"),
    ("key: [unclosed\n", "error decoding YAML"),
])
def test_server_side_apply_bad_bodies(body, fragment):
    with pytest.raises(ApiError) as err:
        patched(body, APPLY)
    assert err.value.code == 400
    assert fragment in err.value.message


# -- transport-level errors -------------------------------------------------------------------------

def test_unknown_content_type_is_415():
    with pytest.raises(ApiError) as err:
        patched('{"spec":{}}', "application/json")
    assert err.value.code == 415
    assert err.value.status()["reason"] == "UnsupportedMediaType"


def test_renaming_through_a_patch_is_rejected():
    with pytest.raises(ApiError) as err:
        patched('{"metadata":{"name":"other"}}', MERGE)
    assert err.value.code == 400
    assert "does not match the name on the URL (api)" in err.value.message


def test_non_utf8_body_is_a_bad_request():
    with pytest.raises(ApiError) as err:
        apply_patch(deployment(), b"\xff\xfe{", MERGE, DEPLOYMENTS)
    assert err.value.code == 400


def test_merge_patch_with_non_object_body():
    with pytest.raises(ApiError) as err:
        patched("[1]", MERGE)
    assert err.value.code == 400
