"""LimitRange and ResourceQuota admission with the apiserver's messages, and quota status."""

from __future__ import annotations

import pytest

from kubesim.errors import ApiError
from kubesim.resources import CONFIGMAPS, LIMITRANGES, PODS, RESOURCEQUOTAS
from kubesim.workloads.admission import admit_object, admit_pod


def _pod(name="p", ns="default", **resources):
    c = {"name": "app", "image": "nginx:1.25"}
    if resources:
        c["resources"] = resources
    return {"metadata": {"name": name, "namespace": ns}, "spec": {"containers": [c]}}


def _quota(sim, hard, name="compute", ns="default", **spec):
    sim.store.create(RESOURCEQUOTAS, {"metadata": {"name": name, "namespace": ns}, "spec": {"hard": hard, **spec}})
    sim.reconcile()


def _limits(sim, item, name="limits", ns="default"):
    sim.store.create(LIMITRANGES, {"metadata": {"name": name, "namespace": ns}, "spec": {"limits": [item]}})


def _create(sim, pod):
    sim.store.create(PODS, admit_pod(sim.cluster, pod))
    sim.reconcile()


def test_limit_range_defaults_requests_and_limits(sim):
    _limits(sim, {"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
                  "defaultRequest": {"cpu": "100m"}})
    out = admit_pod(sim.cluster, _pod())
    res = out["spec"]["containers"][0]["resources"]
    assert res == {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}}
    assert out["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app")
    # explicit values win; a limit without a request requests the limit
    out = admit_pod(sim.cluster, _pod(limits={"memory": "1Gi"}))
    res = out["spec"]["containers"][0]["resources"]
    assert res["limits"]["memory"] == "1Gi" and res["requests"]["memory"] == "1Gi"


def test_limit_range_max_min_and_ratio_violations(sim):
    _limits(sim, {"type": "Container", "max": {"memory": "1Gi"}, "min": {"cpu": "100m"},
                  "maxLimitRequestRatio": {"memory": "2"}})
    with pytest.raises(ApiError) as err:
        admit_pod(sim.cluster, _pod(limits={"memory": "2Gi", "cpu": "1"}, requests={"memory": "2Gi", "cpu": "50m"}))
    assert err.value.code == 403 and err.value.reason == "Forbidden"
    assert err.value.message == ('pods "p" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, '
                                 "maximum memory usage per Container is 1Gi, but limit is 2Gi]")
    with pytest.raises(ApiError) as err:
        admit_pod(sim.cluster, _pod(limits={"memory": "1Gi", "cpu": "1"}, requests={"memory": "256Mi", "cpu": "1"}))
    assert err.value.message == ('pods "p" is forbidden: memory max limit to request ratio per Container is 2, '
                                 "but provided ratio is 4.000000")
    # max without an explicit limit: the default limit becomes the max, so this is admitted
    out = admit_pod(sim.cluster, _pod(requests={"cpu": "200m", "memory": "600Mi"}))
    assert out["spec"]["containers"][0]["resources"]["limits"]["memory"] == "1Gi"


def test_quota_exceeded_message(sim):
    _quota(sim, {"pods": "2", "requests.memory": "1Gi", "limits.memory": "2Gi"})
    _create(sim, _pod("a", requests={"memory": "512Mi"}, limits={"memory": "1Gi"}))
    with pytest.raises(ApiError) as err:
        admit_pod(sim.cluster, _pod("b", requests={"memory": "768Mi"}, limits={"memory": "1Gi"}))
    assert err.value.code == 403
    assert err.value.message == ('pods "b" is forbidden: exceeded quota: compute, requested: requests.memory=768Mi, '
                                 "used: requests.memory=512Mi, limited: requests.memory=1Gi")
    _create(sim, _pod("c", requests={"memory": "512Mi"}, limits={"memory": "1Gi"}))
    with pytest.raises(ApiError) as err:
        admit_pod(sim.cluster, _pod("d", requests={"memory": "1Mi"}, limits={"memory": "1Mi"}))
    assert err.value.message == ('pods "d" is forbidden: exceeded quota: compute, requested: '
                                 "limits.memory=1Mi,pods=1,requests.memory=1Mi, "
                                 "used: limits.memory=2Gi,pods=2,requests.memory=1Gi, "
                                 "limited: limits.memory=2Gi,pods=2,requests.memory=1Gi")


def test_quota_requires_resources_to_be_specified(sim):
    _quota(sim, {"requests.cpu": "2", "limits.memory": "4Gi"}, name="mem-quota")
    with pytest.raises(ApiError) as err:
        admit_pod(sim.cluster, _pod())
    assert err.value.message == ('pods "p" is forbidden: failed quota: mem-quota: must specify limits.memory for: app; '
                                 "requests.cpu for: app")
    # a LimitRange that supplies defaults makes the same pod admissible
    _limits(sim, {"type": "Container", "default": {"cpu": "200m", "memory": "128Mi"}})
    admit_pod(sim.cluster, _pod())


def test_quota_status_controller_tracks_usage(sim):
    _quota(sim, {"pods": "10", "requests.cpu": "4", "requests.memory": "8Gi", "count/configmaps": "5"})
    q = sim.store.get(RESOURCEQUOTAS, "default", "compute")
    assert q["status"] == {"hard": {"pods": "10", "requests.cpu": "4", "requests.memory": "8Gi",
                                    "count/configmaps": "5"},
                           "used": {"pods": "0", "requests.cpu": "0", "requests.memory": "0",
                                    "count/configmaps": "0"}}
    _create(sim, _pod("a", requests={"cpu": "250m", "memory": "1536Mi"}))
    _create(sim, _pod("b", requests={"cpu": "1", "memory": "512Mi"}))
    sim.configmap("cm", {"a": "b"})
    used = sim.store.get(RESOURCEQUOTAS, "default", "compute")["status"]["used"]
    assert used == {"pods": "2", "requests.cpu": "1250m", "requests.memory": "2Gi", "count/configmaps": "1"}
    sim.delete(PODS, "a")
    used = sim.store.get(RESOURCEQUOTAS, "default", "compute")["status"]["used"]
    assert used["pods"] == "1" and used["requests.memory"] == "512Mi"


def test_terminal_pods_release_quota(sim):
    _quota(sim, {"pods": "1"})
    _create(sim, {"metadata": {"name": "job", "namespace": "default"},
                  "spec": {"restartPolicy": "Never",
                           "containers": [{"name": "c", "image": "busybox:1.36", "command": ["true"]}]}})
    with pytest.raises(ApiError):
        admit_pod(sim.cluster, _pod("next"))
    sim.advance(5)
    assert sim.status("job")["phase"] == "Succeeded"
    admit_pod(sim.cluster, _pod("next"))


def test_quota_scopes(sim):
    _quota(sim, {"pods": "0"}, name="no-best-effort", scopes=["BestEffort"])
    with pytest.raises(ApiError):
        admit_pod(sim.cluster, _pod())
    admit_pod(sim.cluster, _pod(requests={"cpu": "10m"}))


def test_object_count_quota(sim):
    _quota(sim, {"configmaps": "1"}, name="objects")
    cm = {"metadata": {"name": "two", "namespace": "default"}, "data": {}}
    admit_object(sim.cluster, CONFIGMAPS, cm)
    sim.configmap("one", {})
    with pytest.raises(ApiError) as err:
        admit_object(sim.cluster, CONFIGMAPS, cm)
    assert err.value.message == ('configmaps "two" is forbidden: exceeded quota: objects, requested: configmaps=1, '
                                 "used: configmaps=1, limited: configmaps=1")


def test_admission_does_not_mutate_its_input(sim):
    _limits(sim, {"type": "Container", "default": {"cpu": "500m"}})
    pod = _pod()
    admit_pod(sim.cluster, pod)
    assert "resources" not in pod["spec"]["containers"][0]


def test_generated_names_appear_in_rejections(sim):
    _quota(sim, {"pods": "0"})
    pod = _pod()
    pod["metadata"] = {"generateName": "api-7d4b9c8d5-", "namespace": "default"}
    with pytest.raises(ApiError) as err:
        admit_pod(sim.cluster, pod)
    name = err.value.message.split('"')[1]
    assert name.startswith("api-7d4b9c8d5-") and len(name) == len("api-7d4b9c8d5-") + 5
