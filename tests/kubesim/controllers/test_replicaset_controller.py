"""ReplicaSet controller: pods from the template, replacement, deletion preference, adoption, status."""

from __future__ import annotations

import copy

from controller_sim import Sim

from kubesim.resources import PODS, REPLICASETS, RESOURCEQUOTAS


def replicaset(name: str = "cache", replicas: int = 3, min_ready: int = 0) -> dict:
    labels = {"app": name, "tier": "backend"}
    body = {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": labels, "annotations": {"team": "core"}},
                              "spec": {"containers": [{"name": "redis", "image": "redis:7"}]}}},
    }
    if min_ready:
        body["spec"]["minReadySeconds"] = min_ready
    return body


def scale(n: int):
    return lambda rs: rs["spec"].update(replicas=n)


def test_pods_are_built_from_the_template_with_generated_names_and_owner():
    sim = Sim()
    rs = sim.create(REPLICASETS, replicaset())
    pods = sim.pods(rs)
    assert len(pods) == 3
    for pod in pods:
        m = pod["metadata"]
        assert m["generateName"] == "cache-" and len(m["name"]) == len("cache-") + 5
        assert m["labels"] == {"app": "cache", "tier": "backend"}
        assert m["annotations"] == {"team": "core"}
        assert m["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "cache",
                                         "uid": rs["metadata"]["uid"], "controller": True,
                                         "blockOwnerDeletion": True}]
        assert pod["spec"]["containers"][0]["image"] == "redis:7"
        assert pod["status"]["phase"] == "Pending"
    assert sorted(sim.messages(rs, "SuccessfulCreate")) == sorted(f"Created pod: {p['metadata']['name']}" for p in pods)
    events = sim.events(rs, "SuccessfulCreate")
    assert events[0]["source"] == {"component": "replicaset-controller"}
    status = sim.get(REPLICASETS, "cache")["status"]
    assert status == {"replicas": 3, "fullyLabeledReplicas": 3, "observedGeneration": 1}


def test_status_counts_ready_and_available_pods():
    sim = Sim()
    rs = sim.create(REPLICASETS, replicaset())
    sim.make_ready(sim.pods(rs)[:2])
    status = sim.get(REPLICASETS, "cache")["status"]
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"]) == (3, 2, 2)


def test_min_ready_seconds_makes_ready_pods_available_later():
    sim = Sim()
    rs = sim.create(REPLICASETS, replicaset(replicas=1, min_ready=10))
    sim.make_ready(sim.pods(rs))
    status = sim.get(REPLICASETS, "cache")["status"]
    assert status["readyReplicas"] == 1 and "availableReplicas" not in status
    sim.advance(9)
    assert "availableReplicas" not in sim.get(REPLICASETS, "cache")["status"]
    sim.advance(2)
    assert sim.get(REPLICASETS, "cache")["status"]["availableReplicas"] == 1


def test_deleted_and_failed_pods_are_replaced():
    sim = Sim()
    rs = sim.create(REPLICASETS, replicaset())
    victim = sim.pods(rs)[0]
    sim.store.delete(PODS, "default", victim["metadata"]["name"])
    sim.reconcile()
    pods = sim.pods(rs)
    assert len(pods) == 3 and victim["metadata"]["uid"] not in {p["metadata"]["uid"] for p in pods}
    sim.finish_pod(pods[0], "Failed")
    active = [p for p in sim.pods(rs) if p["status"]["phase"] != "Failed"]
    assert len(active) == 3
    assert sim.get(REPLICASETS, "cache")["status"]["replicas"] == 3


def test_scale_down_removes_unscheduled_then_unready_then_newest():
    sim = Sim()
    rs = sim.create(REPLICASETS, replicaset(replicas=4))
    pods = sorted(sim.pods(rs), key=lambda p: p["metadata"]["name"])
    sim.make_ready(pods[0])
    sim.advance(5)
    sim.make_ready(pods[1])
    sim.make_running_unready(pods[2])
    # pods[3] stays unscheduled (no nodeName): it goes first, then the running-but-unready one.
    sim.edit(REPLICASETS, "cache", scale(2))
    left = {p["metadata"]["name"] for p in sim.pods(rs)}
    assert left == {pods[0]["metadata"]["name"], pods[1]["metadata"]["name"]}
    deleted = sim.messages(rs, "SuccessfulDelete")
    assert sorted(deleted) == sorted(f"Deleted pod: {p['metadata']['name']}" for p in pods[2:])
    # Of two ready pods the one ready for the shorter time goes first.
    sim.edit(REPLICASETS, "cache", scale(1))
    assert [p["metadata"]["name"] for p in sim.pods(rs)] == [pods[0]["metadata"]["name"]]


def test_matching_orphan_pods_are_adopted_and_relabelled_pods_released():
    sim = Sim()
    orphan = {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "stray", "namespace": "default", "labels": {"app": "cache"}},
              "spec": {"containers": [{"name": "redis", "image": "redis:7"}]}}
    sim.create(PODS, orphan, reconcile=False)
    rs = sim.create(REPLICASETS, replicaset(replicas=2))
    pods = sim.pods(rs)
    assert "stray" in {p["metadata"]["name"] for p in pods} and len(pods) == 2

    def relabel(pod):
        pod["metadata"]["labels"] = {"app": "debug"}
    sim.edit(PODS, "stray", relabel)
    assert "ownerReferences" not in sim.get(PODS, "stray")["metadata"]
    assert len(sim.pods(rs)) == 2 and "stray" not in {p["metadata"]["name"] for p in sim.pods(rs)}
    status = sim.get(REPLICASETS, "cache")["status"]
    assert status["replicas"] == 2


def test_pods_owned_by_another_controller_are_left_alone():
    sim = Sim()
    first = sim.create(REPLICASETS, replicaset(replicas=1))
    second = copy.deepcopy(replicaset(replicas=1))
    second["metadata"]["name"] = "cache-two"
    other = sim.create(REPLICASETS, second)
    assert len(sim.pods(first)) == 1 and len(sim.pods(other)) == 1


def test_generation_change_is_observed():
    sim = Sim()
    sim.create(REPLICASETS, replicaset(replicas=1))
    sim.edit(REPLICASETS, "cache", scale(2))
    rs = sim.get(REPLICASETS, "cache")
    assert rs["metadata"]["generation"] == 2 and rs["status"]["observedGeneration"] == 2


def test_quota_rejection_records_failed_create_and_retries_with_back_off():
    sim = Sim()
    sim.create(RESOURCEQUOTAS, {"apiVersion": "v1", "kind": "ResourceQuota",
                                "metadata": {"name": "pods", "namespace": "default"}, "spec": {"hard": {"pods": "2"}}})
    rs = sim.create(REPLICASETS, replicaset(replicas=3))
    assert len(sim.pods(rs)) == 2
    [event] = sim.events(rs, "FailedCreate")
    assert event["type"] == "Warning"
    assert event["message"].startswith('Error creating: pods "cache-')
    assert "is forbidden: exceeded quota: pods" in event["message"]
    cond = next(c for c in sim.get(REPLICASETS, "cache")["status"]["conditions"] if c["type"] == "ReplicaFailure")
    assert (cond["status"], cond["reason"]) == ("True", "FailedCreate")
    assert cond["message"] == event["message"].removeprefix("Error creating: ")
    def attempts() -> int:
        return sum(e["count"] for e in sim.events(rs, "FailedCreate"))
    sim.reconcile()
    assert attempts() == 1  # no retry before the back-off
    sim.advance(60)
    assert 3 <= attempts() <= 8  # 1 s doubling: retries at 1, 3, 7, 15, 31 s...
    # Raising the quota ends the back-off at once.
    sim.edit(RESOURCEQUOTAS, "pods", lambda q: q["spec"].update(hard={"pods": "5"}))
    assert len(sim.pods(rs)) == 3
    assert "conditions" not in sim.get(REPLICASETS, "cache")["status"]
