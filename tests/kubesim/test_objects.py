"""objects.prepare on create: decode errors (400), defaults, validation (422), idempotence."""

from __future__ import annotations

import base64
import copy

import pytest

from kubesim.objects import prepare
from kubesim.resources import (
    CONFIGMAPS, CRONJOBS, DEPLOYMENTS, JOBS, LIMITRANGES, NAMESPACES, PODS, REPLICASETS, SECRETS, SERVICES,
    by_key,
)

STATEFULSETS = by_key("apps", "statefulsets")
DAEMONSETS = by_key("apps", "daemonsets")
HPAS = by_key("autoscaling", "horizontalpodautoscalers")
TOKENREVIEWS = by_key("authentication.k8s.io", "tokenreviews")


try:
    from object_factories import deploy, job, pod, rejected, service
except ImportError:  # collected as part of a package
    from tests.kubesim.object_factories import deploy, job, pod, rejected, service


# -- decode-level errors (400) ----------------------------------------------------------------------

def test_yaml_boolean_label_is_a_decode_error():
    obj = deploy()
    obj["metadata"]["labels"]["x"] = True  # YAML "x: y" read as YAML 1.1
    err = rejected(DEPLOYMENTS, obj)
    assert err.code == 400 and err.reason == "BadRequest"
    assert err.message == ('Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal bool '
                           "into Go struct field ObjectMeta.metadata.labels of type string")


@pytest.mark.parametrize("rt, mutate, fragment", [
    (DEPLOYMENTS, lambda o: o["spec"].update(replicas="3"),
     "cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
    (DEPLOYMENTS, lambda o: o["spec"].update(replicas=1.5),
     "cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"),
    (DEPLOYMENTS, lambda o: o["spec"]["template"]["spec"].update(containers={"name": "x"}),
     "cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container"),
    (DEPLOYMENTS, lambda o: o["spec"]["template"]["spec"]["containers"][0]["ports"][0].update(containerPort="80"),
     "Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32"),
    (DEPLOYMENTS, lambda o: o["spec"]["template"]["spec"]["containers"][0].update(
        resources={"limits": {"memory": "64 megs"}}), "quantities must match the regular expression"),
    (DEPLOYMENTS, lambda o: o["spec"].update(paused="yes"),
     "Go struct field DeploymentSpec.spec.paused of type bool"),
    (DEPLOYMENTS, lambda o: o.update(metadata="api"),
     "Go struct field Deployment.metadata of type v1.ObjectMeta"),
    (DEPLOYMENTS, lambda o: o["spec"]["template"]["spec"]["containers"][0].update(
        env=[{"name": "A", "value": 1}]),
     "Go struct field EnvVar.spec.template.spec.containers.env.value of type string"),
    (PODS, lambda o: o["spec"]["containers"][0].update(livenessProbe={"httpGet": {"port": True}}),
     "cannot unmarshal bool into Go value of type int32"),
])
def test_type_errors(rt, mutate, fragment):
    obj = deploy() if rt is DEPLOYMENTS else pod()
    mutate(obj)
    err = rejected(rt, obj)
    assert err.code == 400
    assert fragment in err.message


def test_configmap_and_secret_data_types():
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"PORT": 8080}}
    assert "cannot unmarshal number into Go struct field ConfigMap.data of type string" in rejected(
        CONFIGMAPS, cm).message
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "not base64!"}}
    err = rejected(SECRETS, secret)
    assert err.code == 400 and "illegal base64 data at input byte 3" in err.message


def test_kind_and_api_version_must_match_the_url():
    obj = deploy()
    obj["apiVersion"] = "apps/v1beta1"
    err = rejected(DEPLOYMENTS, obj)
    assert err.code == 400
    assert err.message == "the API version in the data (apps/v1beta1) does not match the expected API version (apps/v1)"
    obj = deploy()
    obj["kind"] = "ReplicaSet"
    assert rejected(DEPLOYMENTS, obj).code == 400
    assert prepare(DEPLOYMENTS, {k: v for k, v in deploy().items() if k not in ("kind", "apiVersion")})


def test_non_object_body():
    assert rejected(PODS, ["not", "an", "object"]).code == 400


# -- defaults ---------------------------------------------------------------------------------------

def test_pod_defaults():
    out = prepare(PODS, pod(), None)
    spec, c = out["spec"], out["spec"]["containers"][0]
    assert spec["restartPolicy"] == "Always" and spec["dnsPolicy"] == "ClusterFirst"
    assert spec["schedulerName"] == "default-scheduler" and spec["terminationGracePeriodSeconds"] == 30
    assert spec["securityContext"] == {} and spec["enableServiceLinks"] is True
    assert spec["serviceAccountName"] == "default" and spec["serviceAccount"] == "default"
    assert {t["key"] for t in spec["tolerations"]} == {"node.kubernetes.io/not-ready",
                                                       "node.kubernetes.io/unreachable"}
    assert c["imagePullPolicy"] == "IfNotPresent"
    assert c["terminationMessagePath"] == "/dev/termination-log" and c["terminationMessagePolicy"] == "File"
    assert c["resources"] == {}
    assert out["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


@pytest.mark.parametrize("image, policy", [
    ("nginx", "Always"), ("nginx:latest", "Always"), ("nginx:1.25", "IfNotPresent"),
    ("registry:5000/team/app", "Always"), ("registry:5000/team/app:2", "IfNotPresent"),
    ("app@sha256:abcd", "IfNotPresent"),
])
def test_image_pull_policy(image, policy):
    out = prepare(PODS, pod(containers=[{"name": "c", "image": image}]), None)
    assert out["spec"]["containers"][0]["imagePullPolicy"] == policy


def test_container_defaults_ports_probes_env_and_requests_from_limits():
    c = {"name": "api", "image": "a:1", "ports": [{"containerPort": 80}],
         "readinessProbe": {"httpGet": {"port": 80}},
         "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
         "resources": {"limits": {"cpu": "0.5", "memory": "1024Mi"}}}
    out = prepare(PODS, pod(containers=[c], volumes=[{"name": "cfg", "configMap": {"name": "c"}}]), None)
    got = out["spec"]["containers"][0]
    assert got["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert got["readinessProbe"] == {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                                     "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    assert got["env"][0]["valueFrom"]["fieldRef"] == {"fieldPath": "metadata.name", "apiVersion": "v1"}
    assert got["resources"] == {"limits": {"cpu": "500m", "memory": "1Gi"},
                                "requests": {"cpu": "500m", "memory": "1Gi"}}
    assert out["spec"]["volumes"][0]["configMap"]["defaultMode"] == 420
    assert out["status"]["qosClass"] == "Guaranteed"
    burst = prepare(PODS, pod(containers=[{"name": "a", "image": "a:1", "resources": {"requests": {"cpu": "1"}}}]))
    assert burst["status"]["qosClass"] == "Burstable"


def test_deployment_defaults_and_template_keeps_pod_only_fields_out():
    out = prepare(DEPLOYMENTS, deploy(), None)
    spec = out["spec"]
    assert spec["replicas"] == 1 and spec["revisionHistoryLimit"] == 10 and spec["progressDeadlineSeconds"] == 600
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    tspec = spec["template"]["spec"]
    assert tspec["restartPolicy"] == "Always" and tspec["containers"][0]["ports"][0]["protocol"] == "TCP"
    assert "serviceAccountName" not in tspec and "tolerations" not in tspec
    assert out["status"] == {}
    partial = prepare(DEPLOYMENTS, deploy(strategy={"rollingUpdate": {"maxSurge": 1}}))
    assert partial["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": "25%"}
    recreate = prepare(DEPLOYMENTS, deploy(strategy={"type": "Recreate"}))
    assert recreate["spec"]["strategy"] == {"type": "Recreate"}


def test_service_defaults_and_deterministic_cluster_ip():
    out = prepare(SERVICES, service(), None)
    spec = out["spec"]
    assert spec["type"] == "ClusterIP" and spec["sessionAffinity"] == "None"
    assert spec["ports"] == [{"port": 80, "targetPort": 8080, "protocol": "TCP"}]
    assert spec["clusterIP"].startswith("10.") and spec["clusterIPs"] == [spec["clusterIP"]]
    assert spec["ipFamilies"] == ["IPv4"] and spec["ipFamilyPolicy"] == "SingleStack"
    assert prepare(SERVICES, service(), None)["spec"]["clusterIP"] == spec["clusterIP"]
    other = service()
    other["metadata"]["name"] = "web"
    assert prepare(SERVICES, other, None)["spec"]["clusterIP"] != spec["clusterIP"]
    no_target = prepare(SERVICES, service(ports=[{"port": 443}]), None)
    assert no_target["spec"]["ports"][0]["targetPort"] == 443
    headless = prepare(SERVICES, service(clusterIP="None"), None)
    assert headless["spec"]["clusterIP"] == "None" and headless["spec"]["clusterIPs"] == ["None"]
    node_port = prepare(SERVICES, service(type="NodePort"), None)["spec"]
    assert 30000 <= node_port["ports"][0]["nodePort"] <= 32767 and node_port["externalTrafficPolicy"] == "Cluster"


def test_job_and_cronjob_defaults():
    out = prepare(JOBS, job(), None)["spec"]
    assert (out["completions"], out["parallelism"], out["backoffLimit"]) == (1, 1, 6)
    assert out["completionMode"] == "NonIndexed" and out["suspend"] is False
    assert out["template"]["spec"]["terminationGracePeriodSeconds"] == 30
    work_queue = prepare(JOBS, job(parallelism=3), None)["spec"]
    assert "completions" not in work_queue and work_queue["parallelism"] == 3
    cj = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "default"},
          "spec": {"schedule": "0 3 * * *", "jobTemplate": job()["spec"] and {"spec": job()["spec"]}}}
    cspec = prepare(CRONJOBS, cj, None)["spec"]
    assert (cspec["concurrencyPolicy"], cspec["suspend"]) == ("Allow", False)
    assert (cspec["successfulJobsHistoryLimit"], cspec["failedJobsHistoryLimit"]) == (3, 1)
    assert cspec["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirst"


def test_namespace_secret_and_other_defaults():
    ns = prepare(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t1"}}, None)
    assert ns["spec"] == {"finalizers": ["kubernetes"]} and ns["status"] == {"phase": "Active"}
    finalized = dict(ns, spec={"finalizers": []}, status={"phase": "Terminating"})
    assert "finalizers" not in prepare(NAMESPACES, finalized, ns).get("spec", {})
    secret = prepare(SECRETS, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                               "data": {"a": base64.b64encode(b"1").decode()}, "stringData": {"b": "two"}}, None)
    assert secret["type"] == "Opaque" and "stringData" not in secret
    assert base64.b64decode(secret["data"]["b"]) == b"two" and base64.b64decode(secret["data"]["a"]) == b"1"
    sts = prepare(STATEFULSETS, {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                                 "spec": deploy()["spec"]}, None)["spec"]
    assert sts["podManagementPolicy"] == "OrderedReady" and sts["updateStrategy"]["rollingUpdate"] == {"partition": 0}
    lr = prepare(LIMITRANGES, {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l"},
                               "spec": {"limits": [{"type": "Container", "max": {"memory": "1024Mi"}}]}}, None)
    assert lr["spec"]["limits"][0]["default"] == {"memory": "1Gi"}
    assert lr["spec"]["limits"][0]["defaultRequest"] == {"memory": "1Gi"}


def test_nulls_and_empty_collections_are_dropped():
    obj = deploy()
    obj["metadata"]["annotations"] = {}
    obj["metadata"]["creationTimestamp"] = None
    obj["spec"]["template"]["metadata"]["creationTimestamp"] = None
    obj["spec"]["template"]["spec"]["containers"][0]["env"] = []
    out = prepare(DEPLOYMENTS, obj, None)
    assert "annotations" not in out["metadata"] and "creationTimestamp" not in out["metadata"]
    assert out["spec"]["template"]["metadata"] == {"labels": {"app": "api"}}
    assert "env" not in out["spec"]["template"]["spec"]["containers"][0]
    assert obj["metadata"]["creationTimestamp"] is None, "prepare must not mutate its input"


@pytest.mark.parametrize("rt, factory", [
    (PODS, pod), (DEPLOYMENTS, deploy), (SERVICES, service), (JOBS, job),
    (SERVICES, lambda: service(type="LoadBalancer")),
    (SECRETS, lambda: {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"a": "b"}}),
    (NAMESPACES, lambda: {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}),
    (REPLICASETS, lambda: dict(deploy(), kind="ReplicaSet")),
    (DAEMONSETS, lambda: dict(deploy(), kind="DaemonSet")),
])
def test_prepare_is_idempotent(rt, factory):
    once = prepare(rt, factory(), None)
    assert prepare(rt, copy.deepcopy(once), None) == once
    assert prepare(rt, copy.deepcopy(once), once) == once


# -- validation (422) -------------------------------------------------------------------------------

@pytest.mark.parametrize("rt, obj, message", [
    (DEPLOYMENTS, dict(deploy(), metadata={"name": "API"}),
     'Deployment.apps "API" is invalid: metadata.name: Invalid value: "API": a lowercase RFC 1123 subdomain'),
    (SERVICES, dict(service(), metadata={"name": "1web"}),
     'Service "1web" is invalid: metadata.name: Invalid value: "1web": a DNS-1035 label must consist'),
    (NAMESPACES, {"kind": "Namespace", "metadata": {"name": "a.b"}},
     'Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": a lowercase RFC 1123 label'),
    (PODS, dict(pod(), metadata={}),
     'Pod "" is invalid: metadata.name: Required value: name or generateName is required'),
    (PODS, pod(containers=[{"name": "api"}]), 'Pod "p" is invalid: spec.containers[0].image: Required value'),
    (PODS, pod(containers=[]), 'Pod "p" is invalid: spec.containers: Required value'),
    (PODS, pod(containers=[{"name": "Api", "image": "x"}]), 'spec.containers[0].name: Invalid value: "Api"'),
    (PODS, pod(containers=[{"name": "a", "image": "x", "ports": [{"containerPort": 70000}]}]),
     "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"),
    (PODS, pod(containers=[{"name": "a", "image": "x", "ports": [{"containerPort": 80, "protocol": "tcp"}]}]),
     'spec.containers[0].ports[0].protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"'),
    (PODS, pod(containers=[{"name": "a", "image": "x", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}]),
     'spec.containers[0].volumeMounts[0].name: Not found: "data"'),
    (PODS, pod(containers=[{"name": "a", "image": "x"}, {"name": "a", "image": "y"}]),
     'spec.containers[1].name: Duplicate value: "a"'),
    (PODS, pod(containers=[{"name": "a", "image": "x", "resources": {"requests": {"cpu": "2"},
                                                                      "limits": {"cpu": "1"}}}]),
     'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'),
    (PODS, pod(containers=[{"name": "a", "image": "x", "env": [{"name": "1BAD", "value": "v"}]}]),
     'spec.containers[0].env[0].name: Invalid value: "1BAD": a valid environment variable name'),
    (PODS, pod(restartPolicy="Sometimes"),
     'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'),
    (DEPLOYMENTS, deploy(selector=None), 'Deployment.apps "api" is invalid: spec.selector: Required value'),
    (DEPLOYMENTS, deploy(selector={"matchLabels": {"app": "web"}}),
     'spec.template.metadata.labels: Invalid value: map[string]string{"app":"api"}: `selector` does not match '
     'template `labels`'),
    (DEPLOYMENTS, deploy(selector={}), "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string"
                                       "(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector "
                                       "is invalid for deployment"),
    (DEPLOYMENTS, deploy(replicas=-1), "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
    (DEPLOYMENTS, deploy(strategy={"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}),
     "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"),
    (DEPLOYMENTS, deploy(strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}),
     "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"),
    (DEPLOYMENTS, deploy(strategy={"rollingUpdate": {"maxSurge": "lots"}}),
     'spec.strategy.rollingUpdate.maxSurge: Invalid value: "lots": a valid percent string'),
    (DEPLOYMENTS, dict(deploy(), metadata={"name": "api", "labels": {"bad key": "v"}}),
     'metadata.labels: Invalid value: "bad key": name part must consist of'),
    (DEPLOYMENTS, dict(deploy(), metadata={"name": "api", "labels": {"k": "v" * 64}}),
     "must be no more than 63 characters"),
    (JOBS, job(template={"spec": {"containers": [{"name": "m", "image": "m:1"}]}}),
     'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"'),
    (SERVICES, service(ports=[]), 'Service "api" is invalid: spec.ports: Required value'),
    (SERVICES, service(ports=[{"port": 80}, {"port": 81}]), "spec.ports[0].name: Required value"),
    (SERVICES, service(ports=[{"port": 0}]), "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535"),
    (SERVICES, service(ports=[{"port": 80, "nodePort": 31000}]),
     "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"),
    (SERVICES, service(type="NodePort", ports=[{"port": 80, "nodePort": 80}]),
     "spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range"),
    (SERVICES, service(clusterIP="1.2.3.4"), "failed to allocate IP 1.2.3.4: provided IP is not in the valid range"),
    (SERVICES, service(type="Magic"), 'spec.type: Unsupported value: "Magic"'),
    (CONFIGMAPS, {"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"bad key": "v"}},
     'data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters'),
    (SECRETS, {"kind": "Secret", "metadata": {"name": "s"}, "type": "kubernetes.io/tls"},
     "data[tls.crt]: Required value"),
    (CRONJOBS, {"kind": "CronJob", "metadata": {"name": "c"}, "spec": {"schedule": "* * *", "jobTemplate": {
        "spec": job()["spec"]}}}, 'spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3'),
    (CRONJOBS, {"kind": "CronJob", "metadata": {"name": "c" * 53}, "spec": {"schedule": "@hourly", "jobTemplate": {
        "spec": job()["spec"]}}}, "must be no more than 52 characters"),
    (HPAS, {"kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"}, "spec": {
        "scaleTargetRef": {"kind": "Deployment", "name": "api"}, "minReplicas": 5, "maxReplicas": 2}},
     "spec.minReplicas: Invalid value: 5: must be less than or equal to maxReplicas"),
])
def test_validation_errors(rt, obj, message):
    err = rejected(rt, obj)
    assert err.code == 422 and err.reason == "Invalid"
    assert message in err.message
    assert err.details["causes"] and err.details["name"] == (obj.get("metadata") or {}).get("name", "")


def test_several_errors_are_listed_together_with_reasons():
    err = rejected(PODS, pod(containers=[{"name": "a"}, {"image": "x"}]))
    assert err.message == ('Pod "p" is invalid: [spec.containers[0].image: Required value, '
                           'spec.containers[1].name: Required value]')
    assert [c["reason"] for c in err.details["causes"]] == ["FieldValueRequired", "FieldValueRequired"]
    assert [c["field"] for c in err.details["causes"]] == ["spec.containers[0].image", "spec.containers[1].name"]
    status = err.status()
    assert status["kind"] == "Status" and status["code"] == 422 and status["details"]["kind"] == "Pod"


def test_generate_name_is_accepted_and_checked():
    obj = pod()
    obj["metadata"] = {"generateName": "api-", "namespace": "default"}
    assert prepare(PODS, obj)["metadata"]["generateName"] == "api-"
    obj["metadata"] = {"generateName": "API-"}
    assert "metadata.generateName" in rejected(PODS, obj).message


def test_virtual_resources_skip_object_validation():
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "t"}}
    assert prepare(TOKENREVIEWS, review) == review
