"""Deployment controller: ReplicaSet identity, revisions, rolling/recreate updates, status and events."""

from __future__ import annotations

import copy

from controller_sim import Sim, condition, deployment, rollout_status

from kubesim.controllers.common import template_hash
from kubesim.resources import DEPLOYMENTS, PODS, REPLICASETS, RESOURCEQUOTAS

REAL_HASH_CHARS = set("456789bcdf")  # what safe-encoding a decimal FNV-32a can produce


def set_image(image: str):
    def fn(d):
        d["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return fn


def rs_by_revision(sim: Sim, d: dict) -> dict[int, dict]:
    return {int(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]): rs
            for rs in sim.replicasets(d)}


def test_new_deployment_gets_a_hashed_replicaset_with_pods_and_events():
    sim = Sim()
    d = sim.create(DEPLOYMENTS, deployment(replicas=3))
    [rs] = sim.replicasets(d)
    name = rs["metadata"]["name"]
    h = name.removeprefix("web-")
    assert len(h) in (9, 10) and set(h) <= REAL_HASH_CHARS
    assert rs["metadata"]["labels"]["pod-template-hash"] == h
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": h}
    assert rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] == h
    ref = rs["metadata"]["ownerReferences"][0]
    assert ref == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": d["metadata"]["uid"],
                   "controller": True, "blockOwnerDeletion": True}
    ann = rs["metadata"]["annotations"]
    assert ann["deployment.kubernetes.io/revision"] == "1"
    assert ann["deployment.kubernetes.io/desired-replicas"] == "3"
    assert ann["deployment.kubernetes.io/max-replicas"] == "4"
    pods = sim.pods(rs)
    assert len(pods) == 3 and all(p["metadata"]["name"].startswith(name + "-") for p in pods)
    assert sim.messages(d, "ScalingReplicaSet") == [f"Scaled up replica set {name} to 3"]
    d = sim.get(DEPLOYMENTS, "web")
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert rollout_status(d) == 'Waiting for deployment "web" rollout to finish: 0 of 3 updated replicas are available...'
    assert condition(d, "Available")["reason"] == "MinimumReplicasUnavailable"


def test_ready_pods_complete_the_rollout_with_real_conditions():
    sim = Sim()
    sim.create(DEPLOYMENTS, deployment(replicas=2))
    sim.ready_all()
    d = sim.get(DEPLOYMENTS, "web")
    st = d["status"]
    assert (st["replicas"], st["updatedReplicas"], st["readyReplicas"], st["availableReplicas"]) == (2, 2, 2, 2)
    assert "unavailableReplicas" not in st
    assert st["observedGeneration"] == d["metadata"]["generation"]
    assert [c["type"] for c in st["conditions"]] == ["Available", "Progressing"]
    assert condition(d, "Available")["reason"] == "MinimumReplicasAvailable"
    progressing = condition(d, "Progressing")
    assert progressing["reason"] == "NewReplicaSetAvailable"
    assert progressing["message"].endswith("has successfully progressed.")
    assert rollout_status(d) == 'deployment "web" successfully rolled out'


def test_quiescent_cluster_writes_nothing_more():
    sim = Sim()
    sim.create(DEPLOYMENTS, deployment(replicas=3))
    sim.ready_all()
    rv = sim.store.resource_version
    sim.store.dirty.update({"default", ""})
    sim.reconcile()
    sim.advance(3600)
    assert sim.store.resource_version == rv


def test_template_hash_is_a_stable_function_of_the_normalised_template():
    t = deployment()["spec"]["template"]
    same = copy.deepcopy(t)
    same["metadata"]["creationTimestamp"] = None
    same["metadata"]["labels"]["pod-template-hash"] = "whatever"
    assert template_hash(t) == template_hash(same)
    other = copy.deepcopy(t)
    other["spec"]["containers"][0]["image"] = "shop/api:1.1"
    assert template_hash(other) != template_hash(t)
    assert template_hash(t, 1) != template_hash(t)


def test_rolling_update_surges_and_drains_step_by_step():
    sim = Sim()
    d = sim.create(DEPLOYMENTS, deployment(replicas=4))
    sim.ready_all()
    [old] = sim.replicasets(d)
    sim.edit(DEPLOYMENTS, "web", set_image("shop/api:1.1"))
    revs = rs_by_revision(sim, d)
    new = revs[2]
    assert revs[1]["metadata"]["name"] == old["metadata"]["name"]
    # maxSurge 25% of 4 → 1 extra pod; maxUnavailable 25% → 1 may be missing: new 1, old 3, then new 2
    # (5 pods in all) while the new pods are not ready yet.
    assert new["spec"]["replicas"] == 2 and revs[1]["spec"]["replicas"] == 3
    d = sim.get(DEPLOYMENTS, "web")
    assert rollout_status(d) == 'Waiting for deployment "web" rollout to finish: 2 out of 4 new replicas have been updated...'
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    sim.ready_all()
    revs = rs_by_revision(sim, d)
    assert revs[2]["spec"]["replicas"] == 4 and revs[1]["spec"]["replicas"] == 0
    assert len(sim.pods(revs[2])) == 4 and not sim.pods(revs[1])
    new_name, old_name = revs[2]["metadata"]["name"], old["metadata"]["name"]
    msgs = sim.messages(d, "ScalingReplicaSet")
    assert msgs[:4] == [f"Scaled up replica set {old_name} to 4", f"Scaled up replica set {new_name} to 1",
                        f"Scaled down replica set {old_name} to 3", f"Scaled up replica set {new_name} to 2"]
    assert msgs[-1] == f"Scaled down replica set {old_name} to 0"
    assert rollout_status(sim.get(DEPLOYMENTS, "web")) == 'deployment "web" successfully rolled out'


def test_bad_image_rollout_sticks_and_exceeds_progress_deadline():
    sim = Sim()
    d = sim.create(DEPLOYMENTS, deployment(replicas=3))
    sim.ready_all()
    sim.edit(DEPLOYMENTS, "web", set_image("shop/api:does-not-exist"))
    revs = rs_by_revision(sim, d)
    assert revs[2]["spec"]["replicas"] == 1 and revs[1]["spec"]["replicas"] == 3
    sim.advance(300)
    d = sim.get(DEPLOYMENTS, "web")
    assert rollout_status(d) == 'Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been updated...'
    assert condition(d, "Progressing")["status"] == "True"
    assert condition(d, "Available")["status"] == "True"  # the old pods keep serving
    sim.advance(301)
    d = sim.get(DEPLOYMENTS, "web")
    progressing = condition(d, "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("False", "ProgressDeadlineExceeded")
    assert progressing["message"] == f'ReplicaSet "{revs[2]["metadata"]["name"]}" has timed out progressing.'
    assert rollout_status(d) == 'error: deployment "web" exceeded its progress deadline'
    assert d["status"]["unavailableReplicas"] == 1
    assert len(sim.pods(revs[1])) == 3


def test_undo_reuses_the_old_replicaset_and_records_revision_history():
    sim = Sim()
    d = sim.create(DEPLOYMENTS, deployment(replicas=2))
    sim.ready_all()
    sim.edit(DEPLOYMENTS, "web", set_image("shop/api:1.1"))
    sim.ready_all()
    first = rs_by_revision(sim, d)[1]

    def undo(obj):  # what `kubectl rollout undo` sends: the old template, hash label removed, nulls included
        template = copy.deepcopy(first["spec"]["template"])
        del template["metadata"]["labels"]["pod-template-hash"]
        template["metadata"]["creationTimestamp"] = None
        obj["spec"]["template"] = template
    sim.edit(DEPLOYMENTS, "web", undo)
    sim.ready_all()
    revs = rs_by_revision(sim, d)
    assert sorted(revs) == [2, 3]
    assert revs[3]["metadata"]["name"] == first["metadata"]["name"]
    assert revs[3]["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"] == "1"
    assert revs[3]["spec"]["replicas"] == 2 and revs[2]["spec"]["replicas"] == 0
    assert len(sim.replicasets(d)) == 2
    assert sim.get(DEPLOYMENTS, "web")["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"


def test_change_cause_reaches_the_new_replicaset_but_skip_list_does_not():
    sim = Sim()
    body = deployment(replicas=1)
    body["metadata"]["annotations"] = {"kubernetes.io/change-cause": "initial",
                                       "kubectl.kubernetes.io/last-applied-configuration": "{}"}
    d = sim.create(DEPLOYMENTS, body)

    def bump(obj):
        obj["metadata"]["annotations"]["kubernetes.io/change-cause"] = "kubectl set image web app=shop/api:1.1"
        set_image("shop/api:1.1")(obj)
    sim.edit(DEPLOYMENTS, "web", bump)
    revs = rs_by_revision(sim, d)
    assert revs[1]["metadata"]["annotations"]["kubernetes.io/change-cause"] == "initial"
    assert revs[2]["metadata"]["annotations"]["kubernetes.io/change-cause"] == "kubectl set image web app=shop/api:1.1"
    assert all("kubectl.kubernetes.io/last-applied-configuration" not in rs["metadata"]["annotations"]
               for rs in revs.values())


def test_scaling_resizes_the_active_replicaset_and_its_annotations():
    sim = Sim()
    d = sim.create(DEPLOYMENTS, deployment(replicas=2))
    sim.ready_all()
    sim.edit(DEPLOYMENTS, "web", lambda o: o["spec"].update(replicas=5))
    [rs] = sim.replicasets(d)
    assert rs["spec"]["replicas"] == 5
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] == "5"
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] == "7"
    assert sim.messages(d, "ScalingReplicaSet")[-1] == f"Scaled up replica set {rs['metadata']['name']} to 5"
    sim.edit(DEPLOYMENTS, "web", lambda o: o["spec"].update(replicas=1))
    [rs] = sim.replicasets(d)
    assert rs["spec"]["replicas"] == 1 and len(sim.pods(rs)) == 1
    assert sim.messages(d, "ScalingReplicaSet")[-1] == f"Scaled down replica set {rs['metadata']['name']} to 1"


def test_scaling_mid_rollout_is_proportional():
    sim = Sim()
    d = sim.create(DEPLOYMENTS, deployment(replicas=10))
    sim.ready_all()
    sim.edit(DEPLOYMENTS, "web", set_image("shop/api:broken"))
    revs = rs_by_revision(sim, d)
    # surge 3 (25% of 10, rounded up), unavailable 2 (rounded down): new 3, old down to 8, then new up to 5.
    assert (revs[2]["spec"]["replicas"], revs[1]["spec"]["replicas"]) == (5, 8)
    sim.edit(DEPLOYMENTS, "web", lambda o: o["spec"].update(replicas=20))
    revs = rs_by_revision(sim, d)
    total = revs[1]["spec"]["replicas"] + revs[2]["spec"]["replicas"]
    assert total == 25  # 20 + 25% surge, shared in proportion to the sizes before: 8→15, 5→10
    assert (revs[1]["spec"]["replicas"], revs[2]["spec"]["replicas"]) == (15, 10)


def test_paused_deployment_scales_but_does_not_roll_out_until_resumed():
    sim = Sim()
    d = sim.create(DEPLOYMENTS, deployment(replicas=2))
    sim.ready_all()
    sim.edit(DEPLOYMENTS, "web", lambda o: o["spec"].update(paused=True))
    assert condition(sim.get(DEPLOYMENTS, "web"), "Progressing")["reason"] == "DeploymentPaused"
    sim.edit(DEPLOYMENTS, "web", set_image("shop/api:1.1"))
    sim.edit(DEPLOYMENTS, "web", lambda o: o["spec"].update(replicas=3))
    [rs] = sim.replicasets(d)
    assert rs["spec"]["replicas"] == 3
    d = sim.get(DEPLOYMENTS, "web")
    assert d["status"]["observedGeneration"] == d["metadata"]["generation"]
    sim.edit(DEPLOYMENTS, "web", lambda o: o["spec"].update(paused=False))
    assert len(sim.replicasets(d)) == 2
    sim.ready_all()
    d = sim.get(DEPLOYMENTS, "web")
    assert rollout_status(d) == 'deployment "web" successfully rolled out'
    assert condition(d, "Progressing")["reason"] == "NewReplicaSetAvailable"


def test_restart_annotation_on_the_template_rolls_out_a_new_replicaset():
    sim = Sim()
    d = sim.create(DEPLOYMENTS, deployment(replicas=1))
    sim.ready_all()

    def restart(obj):
        obj["spec"]["template"]["metadata"]["annotations"] = {"kubectl.kubernetes.io/restartedAt": "2026-03-02T12:00:00Z"}
    sim.edit(DEPLOYMENTS, "web", restart)
    sim.ready_all()
    revs = rs_by_revision(sim, d)
    assert sorted(revs) == [1, 2]
    assert revs[2]["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"]
    assert [p["metadata"]["name"].rsplit("-", 1)[0] for p in sim.pods()] == [revs[2]["metadata"]["name"]]


def test_recreate_strategy_empties_the_old_replicaset_before_creating_the_new():
    sim = Sim()
    d = sim.create(DEPLOYMENTS, deployment(replicas=2, strategy={"type": "Recreate"}))
    sim.ready_all()
    sim.edit(DEPLOYMENTS, "web", set_image("shop/api:1.1"), reconcile=False)
    sim.reconcile()
    revs = rs_by_revision(sim, d)
    assert revs[1]["spec"]["replicas"] == 0
    assert revs[2]["spec"]["replicas"] == 2
    msgs = sim.messages(d, "ScalingReplicaSet")
    assert msgs[-2:] == [f"Scaled down replica set {revs[1]['metadata']['name']} to 0",
                         f"Scaled up replica set {revs[2]['metadata']['name']} to 2"]
    assert all(p["metadata"]["name"].startswith(revs[2]["metadata"]["name"]) for p in sim.pods())


def test_revision_history_limit_deletes_the_oldest_empty_replicasets():
    sim = Sim()
    d = sim.create(DEPLOYMENTS, deployment(replicas=1, revisionHistoryLimit=1))
    for tag in ("1.1", "1.2", "1.3"):
        sim.ready_all()
        sim.edit(DEPLOYMENTS, "web", set_image(f"shop/api:{tag}"))
    sim.ready_all()
    assert sorted(rs_by_revision(sim, d)) == [3, 4]


def test_min_ready_seconds_delays_availability_on_the_sim_clock():
    sim = Sim()
    d = sim.create(DEPLOYMENTS, deployment(replicas=2, minReadySeconds=30))
    [rs] = sim.replicasets(d)
    assert rs["spec"]["minReadySeconds"] == 30
    sim.ready_all()
    d = sim.get(DEPLOYMENTS, "web")
    assert d["status"].get("availableReplicas", 0) == 0 and d["status"]["readyReplicas"] == 2
    sim.advance(31)
    d = sim.get(DEPLOYMENTS, "web")
    assert d["status"]["availableReplicas"] == 2
    assert rollout_status(d) == 'deployment "web" successfully rolled out'


def test_orphaned_replicaset_is_adopted_by_a_matching_deployment():
    sim = Sim()
    d = sim.create(DEPLOYMENTS, deployment(replicas=1))
    [rs] = sim.replicasets(d)

    def orphan(obj):
        obj["metadata"].pop("ownerReferences")
    sim.edit(REPLICASETS, rs["metadata"]["name"], orphan, reconcile=False)
    sim.reconcile()
    [again] = sim.replicasets(d)
    assert again["metadata"]["uid"] == rs["metadata"]["uid"]
    assert len(sim.list(REPLICASETS)) == 1


def test_empty_selector_is_refused_with_an_event():
    sim = Sim()
    body = deployment(replicas=1)
    body["spec"]["selector"] = {}
    d = sim.store.create(DEPLOYMENTS, body)
    sim.reconcile()
    assert not sim.list(REPLICASETS) and not sim.list(PODS)
    assert sim.messages(d, "SelectingAll") == ["This deployment is selecting all pods. A non-empty selector is required."]


def test_quota_rejection_surfaces_as_replica_failure_on_the_deployment():
    sim = Sim()
    sim.create(RESOURCEQUOTAS, {"apiVersion": "v1", "kind": "ResourceQuota",
                                "metadata": {"name": "pods", "namespace": "default"}, "spec": {"hard": {"pods": "1"}}})
    d = sim.create(DEPLOYMENTS, deployment(replicas=2))
    sim.ready_all()
    d = sim.get(DEPLOYMENTS, "web")
    failure = condition(d, "ReplicaFailure")
    assert (failure["status"], failure["reason"]) == ("True", "FailedCreate")
    assert "exceeded quota: pods" in failure["message"]
    assert rollout_status(d) == 'Waiting for deployment "web" rollout to finish: 1 out of 2 new replicas have been updated...'
    sim.edit(RESOURCEQUOTAS, "pods", lambda q: q["spec"].update(hard={"pods": "2"}))
    sim.ready_all()
    d = sim.get(DEPLOYMENTS, "web")
    assert condition(d, "ReplicaFailure") is None
    assert rollout_status(d) == 'deployment "web" successfully rolled out'
