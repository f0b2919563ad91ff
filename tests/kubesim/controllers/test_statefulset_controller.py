"""StatefulSet controller: ordered pods with stable names, revisions, rolling updates, claims."""

from __future__ import annotations

from controller_sim import Sim

from kubesim.controllers import delete_with_propagation
from kubesim.resources import CONTROLLERREVISIONS, PERSISTENTVOLUMECLAIMS, PODS, STATEFULSETS


def statefulset(name: str = "db", replicas: int = 3, image: str = "shop/db:1.0", **spec) -> dict:
    labels = {"app": name}
    body = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"serviceName": name, "replicas": replicas, "selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"containers": [{"name": "db", "image": image}]}}}}
    body["spec"].update(spec)
    return body


def names(sim: Sim, sts: dict) -> list[str]:
    return sorted(p["metadata"]["name"] for p in sim.pods(sts))


def revision_of(pod: dict) -> str:
    return pod["metadata"]["labels"]["controller-revision-hash"]


def set_image(sim: Sim, image: str, name: str = "db") -> dict:
    def change(obj: dict) -> None:
        obj["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return sim.edit(STATEFULSETS, name, change)


def test_ordered_ready_creates_one_ordinal_at_a_time_with_stable_identity():
    sim = Sim()
    sts = sim.create(STATEFULSETS, statefulset())
    assert names(sim, sts) == ["db-0"]  # db-1 waits until db-0 is Running and Ready
    sim.make_running_unready(sim.pods(sts))
    assert names(sim, sts) == ["db-0"]
    sim.make_ready(sim.pods(sts))
    assert names(sim, sts) == ["db-0", "db-1"]
    sim.ready_all(sts)
    pods = {p["metadata"]["name"]: p for p in sim.pods(sts)}
    assert sorted(pods) == ["db-0", "db-1", "db-2"]
    db1 = pods["db-1"]
    assert (db1["spec"]["hostname"], db1["spec"]["subdomain"]) == ("db-1", "db")
    assert db1["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert db1["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "1"
    status = sim.get(STATEFULSETS, "db")["status"]
    assert (status["replicas"], status["readyReplicas"], status["updatedReplicas"]) == (3, 3, 3)
    assert status["currentRevision"] == status["updateRevision"] == revision_of(db1)
    assert sim.messages(sts, "SuccessfulCreate") == [f"create Pod db-{i} in StatefulSet db successful"
                                                     for i in range(3)]


def test_parallel_creates_everything_at_once_and_a_deleted_pod_comes_back_with_its_name():
    sim = Sim()
    sts = sim.create(STATEFULSETS, statefulset(podManagementPolicy="Parallel"))
    assert names(sim, sts) == ["db-0", "db-1", "db-2"]
    uid = next(p for p in sim.pods(sts) if p["metadata"]["name"] == "db-1")["metadata"]["uid"]
    sim.store.delete(PODS, "default", "db-1")
    sim.reconcile()
    again = next(p for p in sim.pods(sts) if p["metadata"]["name"] == "db-1")
    assert again["metadata"]["uid"] != uid
    sim.finish_pod(again, "Failed")  # a failed pod is replaced under the same name
    replaced = next(p for p in sim.pods(sts) if p["metadata"]["name"] == "db-1")
    assert replaced["metadata"]["uid"] != again["metadata"]["uid"] and replaced["status"]["phase"] == "Pending"


def test_scale_down_removes_the_highest_ordinal_first_and_waits_while_a_pod_is_unready():
    sim = Sim()
    sts = sim.create(STATEFULSETS, statefulset(replicas=4))
    sim.ready_all(sts)
    sim.make_running_unready([p for p in sim.pods(sts) if p["metadata"]["name"] == "db-0"])
    sim.edit(STATEFULSETS, "db", lambda o: o["spec"].update(replicas=1))
    assert names(sim, sts) == ["db-0", "db-1", "db-2", "db-3"]  # OrderedReady: not while db-0 is unready
    sim.make_ready([p for p in sim.pods(sts) if p["metadata"]["name"] == "db-0"])
    assert names(sim, sts) == ["db-0"]
    assert sim.messages(sts, "SuccessfulDelete") == [f"delete Pod db-{i} in StatefulSet db successful"
                                                     for i in (3, 2, 1)]


def test_rolling_update_replaces_from_the_highest_ordinal_and_waits_for_readiness():
    sim = Sim()
    sts = sim.create(STATEFULSETS, statefulset())
    sim.ready_all(sts)
    old = sim.get(STATEFULSETS, "db")["status"]["currentRevision"]
    set_image(sim, "shop/db:2.0")
    status = sim.get(STATEFULSETS, "db")["status"]
    new = status["updateRevision"]
    assert new != old and status["currentRevision"] == old
    replaced = [p for p in sim.pods(sts) if revision_of(p) == new]
    assert [p["metadata"]["name"] for p in replaced] == ["db-2"]  # recreated at once, not Ready yet
    assert replaced[0]["spec"]["containers"][0]["image"] == "shop/db:2.0"
    sim.reconcile()
    assert [p["metadata"]["name"] for p in sim.pods(sts) if revision_of(p) == new] == ["db-2"]  # waits
    sim.ready_all(sts)
    status = sim.get(STATEFULSETS, "db")["status"]
    assert {revision_of(p) for p in sim.pods(sts)} == {new}
    assert status["currentRevision"] == new and status["updatedReplicas"] == status["currentReplicas"] == 3
    revisions = sorted((r["revision"], r["metadata"]["name"]) for r in sim.list(CONTROLLERREVISIONS))
    assert revisions == [(1, old), (2, new)]


def test_partition_keeps_lower_ordinals_on_the_old_revision_and_on_delete_waits_for_deletes():
    sim = Sim()
    sts = sim.create(STATEFULSETS, statefulset(updateStrategy={"type": "RollingUpdate",
                                                               "rollingUpdate": {"partition": 2}}))
    sim.ready_all(sts)
    set_image(sim, "shop/db:2.0")
    sim.ready_all(sts)
    images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"] for p in sim.pods(sts)}
    assert images == {"db-0": "shop/db:1.0", "db-1": "shop/db:1.0", "db-2": "shop/db:2.0"}
    status = sim.get(STATEFULSETS, "db")["status"]
    assert status["updatedReplicas"] == 1 and status["currentRevision"] != status["updateRevision"]

    other = Sim()
    sts = other.create(STATEFULSETS, statefulset(updateStrategy={"type": "OnDelete"}))
    other.ready_all(sts)
    set_image(other, "shop/db:2.0")
    other.ready_all(sts)
    assert {p["spec"]["containers"][0]["image"] for p in other.pods(sts)} == {"shop/db:1.0"}


def test_going_back_to_an_old_template_renumbers_its_revision():
    sim = Sim()
    sts = sim.create(STATEFULSETS, statefulset())
    sim.ready_all(sts)
    first = sim.get(STATEFULSETS, "db")["status"]["updateRevision"]
    set_image(sim, "shop/db:2.0")
    sim.ready_all(sts)
    set_image(sim, "shop/db:1.0")
    sim.ready_all(sts)
    revisions = {r["metadata"]["name"]: r["revision"] for r in sim.list(CONTROLLERREVISIONS)}
    assert revisions[first] == 3 and len(revisions) == 2
    assert sim.get(STATEFULSETS, "db")["status"]["currentRevision"] == first


def test_claims_are_made_per_pod_and_kept_unless_the_policy_says_delete():
    claim = {"metadata": {"name": "data"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    sim = Sim()
    sts = sim.create(STATEFULSETS, statefulset(replicas=2, volumeClaimTemplates=[claim]))
    sim.ready_all(sts)
    claims = {c["metadata"]["name"]: c for c in sim.list(PERSISTENTVOLUMECLAIMS)}
    assert sorted(claims) == ["data-db-0", "data-db-1"]
    assert claims["data-db-0"]["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                                             "capacity": {"storage": "1Gi"}}
    volumes = next(p for p in sim.pods(sts) if p["metadata"]["name"] == "db-1")["spec"]["volumes"]
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-1"}} in volumes
    assert "ownerReferences" not in claims["data-db-0"]["metadata"]  # Retain: they outlive the set

    doomed = Sim()
    policy = {"whenDeleted": "Delete", "whenScaled": "Retain"}
    sts = doomed.create(STATEFULSETS, statefulset(replicas=1, volumeClaimTemplates=[claim],
                                                  persistentVolumeClaimRetentionPolicy=policy))
    owner = doomed.list(PERSISTENTVOLUMECLAIMS)[0]["metadata"]["ownerReferences"][0]
    assert owner["uid"] == sts["metadata"]["uid"] and owner["controller"] is False
    delete_with_propagation(doomed.cluster, STATEFULSETS, "default", "db")
    doomed.reconcile()
    assert doomed.list(PERSISTENTVOLUMECLAIMS) == [] and doomed.pods(sts) == []
