"""The controllers together with the real scheduler and kubelet (build_cluster), frozen clock.

Here pods become Ready (or fail) by their workload profiles, not by the test writing their status.
"""

from __future__ import annotations

import copy

import pytest
from controller_sim import condition, deployment, rollout_status

from kubesim import build
from kubesim.controllers import begin_delete
from kubesim.objects import prepare
from kubesim.resources import DEPLOYMENTS, ENDPOINTS, EVENTS, JOBS, NAMESPACES, PODS, SERVICES


@pytest.fixture
def cluster():
    return build.build_cluster(time_scale=0)


def create(cluster, rt, obj):
    created = cluster.store.create(rt, prepare(rt, copy.deepcopy(obj), None))
    cluster.reconcile()
    return created


def update(cluster, rt, name, fn, ns="default"):
    old = cluster.store.get(rt, ns, name)
    new = copy.deepcopy(old)
    fn(new)
    cluster.store.update(rt, prepare(rt, new, old))
    cluster.reconcile()


def web(cluster):
    return cluster.store.get(DEPLOYMENTS, "default", "web")


def set_image(image):
    return lambda d: d["spec"]["template"]["spec"]["containers"][0].update(image=image)


def test_rollout_completes_and_endpoints_follow_the_pods(cluster):
    create(cluster, DEPLOYMENTS, deployment(replicas=3, image="nginx:1.25"))
    create(cluster, SERVICES, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                               "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]}})
    cluster.advance(30)
    assert rollout_status(web(cluster)) == 'deployment "web" successfully rolled out'
    ep = cluster.store.get(ENDPOINTS, "default", "web")
    ips = sorted(a["ip"] for a in ep["subsets"][0]["addresses"])
    pod_ips = sorted(p["status"]["podIP"] for p in cluster.store.list(PODS, "default"))
    assert ips == pod_ips and len(ips) == 3
    update(cluster, DEPLOYMENTS, "web", set_image("nginx:1.26"))
    cluster.advance(60)
    d = web(cluster)
    assert rollout_status(d) == 'deployment "web" successfully rolled out'
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    images = {p["spec"]["containers"][0]["image"] for p in cluster.store.list(PODS, "default")}
    assert images == {"nginx:1.26"}


def test_unknown_tag_keeps_old_pods_serving_until_the_deadline(cluster):
    create(cluster, DEPLOYMENTS, deployment(replicas=3, image="nginx:1.25"))
    cluster.advance(30)
    update(cluster, DEPLOYMENTS, "web", set_image("nginx:9.99-missing"))
    cluster.advance(120)
    d = web(cluster)
    assert rollout_status(d) == 'Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been updated...'
    assert condition(d, "Available")["status"] == "True"
    cluster.advance(600)
    assert rollout_status(web(cluster)) == 'error: deployment "web" exceeded its progress deadline'
    running = [p for p in cluster.store.list(PODS, "default") if p["spec"]["containers"][0]["image"] == "nginx:1.25"]
    assert len(running) == 3


def test_jobs_run_to_completion_or_failure_by_their_command(cluster):
    def job(name, script, **spec):
        body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
                "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                    {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", script]}]}}}}
        body["spec"].update(spec)
        return body
    create(cluster, JOBS, job("ok", "echo done", completions=2))
    create(cluster, JOBS, job("bad", "exit 3", backoffLimit=1))
    cluster.advance(300)
    ok = cluster.store.get(JOBS, "default", "ok")
    assert condition(ok, "Complete")["status"] == "True" and ok["status"]["succeeded"] == 2
    bad = cluster.store.get(JOBS, "default", "bad")
    assert condition(bad, "Failed")["reason"] == "BackoffLimitExceeded" and bad["status"]["failed"] == 2


def test_deleting_a_namespace_leaves_nothing_behind(cluster):
    create(cluster, NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "trial-7"}})
    body = deployment(replicas=2, image="nginx:1.25")
    body["metadata"]["namespace"] = "trial-7"
    create(cluster, DEPLOYMENTS, body)
    cluster.advance(30)
    assert len(cluster.store.list(PODS, "trial-7")) == 2
    begin_delete(cluster, "trial-7")
    cluster.advance(5)
    assert cluster.store.find(NAMESPACES, "", "trial-7") is None
    assert not list(cluster.store.iter_namespace("trial-7"))
    assert not [e for e in cluster.store.list(EVENTS) if e["metadata"]["namespace"] == "trial-7"]
