"""objects.prepare on update: allocated fields carried over, immutable fields enforced; template equality."""

from __future__ import annotations

import copy

from kubesim.objects import normalize_template, prepare, template_equal
from kubesim.resources import CONFIGMAPS, DEPLOYMENTS, JOBS, PODS, SECRETS, SERVICES

try:
    from object_factories import deploy, job, pod, rejected, service
except ImportError:  # collected as part of a package
    from tests.kubesim.object_factories import deploy, job, pod, rejected, service


def test_service_cluster_ip_is_kept_and_immutable():
    old = prepare(SERVICES, service(), None)
    kept = prepare(SERVICES, service(ports=[{"port": 81}]), old)
    assert kept["spec"]["clusterIP"] == old["spec"]["clusterIP"]
    assert "status" not in kept or kept["status"] == old.get("status", kept["status"])
    err = rejected(SERVICES, service(clusterIP="10.96.0.99"), old)
    assert err.code == 422 and "spec.clusterIP: Invalid value: \"10.96.0.99\": field is immutable" in err.message
    np_old = prepare(SERVICES, service(type="NodePort"), None)
    np_new = prepare(SERVICES, service(type="NodePort"), np_old)
    assert np_new["spec"]["ports"][0]["nodePort"] == np_old["spec"]["ports"][0]["nodePort"]


def test_workload_selectors_are_immutable():
    old = prepare(DEPLOYMENTS, deploy(), None)
    new = deploy(selector={"matchLabels": {"app": "api", "v": "2"}})
    new["spec"]["template"]["metadata"]["labels"]["v"] = "2"
    err = rejected(DEPLOYMENTS, new, old)
    assert "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{" in err.message
    assert "field is immutable" in err.message
    assert prepare(DEPLOYMENTS, deploy(replicas=3), old)["spec"]["replicas"] == 3


def test_job_selector_kept_and_template_immutable():
    created = prepare(JOBS, job(), None)
    stored = copy.deepcopy(created)
    stored["spec"]["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}}
    stored["spec"]["template"]["metadata"] = {"labels": {"batch.kubernetes.io/controller-uid": "u1"}}
    resent = copy.deepcopy(stored)
    del resent["spec"]["selector"]
    assert prepare(JOBS, resent, stored)["spec"]["selector"] == stored["spec"]["selector"]
    changed = copy.deepcopy(stored)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "shop/migrate:2"
    assert "spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable" in rejected(
        JOBS, changed, stored).message
    assert prepare(JOBS, dict(stored, metadata=dict(stored["metadata"], labels={"a": "b"})), stored)


def test_pod_spec_updates_limited_to_images():
    old = prepare(PODS, pod(), None)
    new_image = copy.deepcopy(old)
    new_image["spec"]["containers"][0]["image"] = "shop/api:1.1"
    assert prepare(PODS, new_image, old)["spec"]["containers"][0]["image"] == "shop/api:1.1"
    bound = copy.deepcopy(old)
    bound["spec"]["nodeName"] = "kubesim-node-1"
    assert prepare(PODS, bound, old)["spec"]["nodeName"] == "kubesim-node-1"
    relabeled = copy.deepcopy(old)
    relabeled["metadata"]["labels"] = {"debug": "true"}
    assert prepare(PODS, relabeled, old)["metadata"]["labels"] == {"debug": "true"}
    env = copy.deepcopy(old)
    env["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    err = rejected(PODS, env, old)
    assert err.code == 422
    assert "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`" in err.message
    assert "spec.containers[0].env" in err.message


def test_immutable_configmap_and_secret_type():
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}, "immutable": True}
    old = prepare(CONFIGMAPS, cm, None)
    err = rejected(CONFIGMAPS, dict(cm, data={"a": "2"}), old)
    assert "data: Forbidden: field is immutable when `immutable` is set" in err.message
    secret = prepare(SECRETS, {"kind": "Secret", "metadata": {"name": "s"}}, None)
    err = rejected(SECRETS, {"kind": "Secret", "metadata": {"name": "s"}, "type": "kubernetes.io/basic-auth"}, secret)
    assert 'type: Invalid value: "kubernetes.io/basic-auth": field is immutable' in err.message


# -- template equality ------------------------------------------------------------------------------

def test_template_equal_ignores_hash_nulls_and_defaults():
    stored = prepare(DEPLOYMENTS, deploy(), None)["spec"]["template"]
    rs_template = copy.deepcopy(stored)
    rs_template["metadata"]["labels"]["pod-template-hash"] = "abc123"
    raw = {"metadata": {"creationTimestamp": None, "labels": {"app": "api"}},
           "spec": {"containers": [{"name": "api", "image": "shop/api:1.0", "ports": [{"containerPort": 8080}]}]}}
    assert template_equal(stored, rs_template)
    assert template_equal(raw, rs_template)
    assert normalize_template(raw) == stored
    changed = copy.deepcopy(raw)
    changed["spec"]["containers"][0]["image"] = "shop/api:bad"
    assert not template_equal(changed, rs_template)
    annotated = copy.deepcopy(raw)
    annotated["metadata"]["annotations"] = {"kubectl.kubernetes.io/restartedAt": "now"}
    assert not template_equal(annotated, rs_template)
    assert template_equal(None, {})


