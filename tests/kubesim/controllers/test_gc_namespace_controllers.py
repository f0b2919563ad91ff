"""Garbage collection and deletion propagation; namespace termination; per-namespace defaults."""

from __future__ import annotations

import ssl

import pytest
from controller_sim import Sim, condition, deployment

from kubesim.controllers import begin_delete, delete_with_propagation
from kubesim.controllers.serviceaccount import ROOT_CA_NAME
from kubesim.errors import ApiError
from kubesim.resources import CLUSTERROLES, CONFIGMAPS, DEPLOYMENTS, NAMESPACES, PODS, REPLICASETS, SERVICEACCOUNTS, SERVICES


def cm(name: str, ns: str = "default", **meta) -> dict:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": {"k": "v"}}
    body["metadata"].update(meta)
    return body


def ref(owner: dict, **extra) -> dict:
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], **extra}


# -- garbage collection ---------------------------------------------------------------------------
def test_background_delete_cascades_deployment_replicaset_pods():
    sim = Sim()
    sim.create(DEPLOYMENTS, deployment(replicas=2))
    assert len(sim.list(PODS)) == 2
    gone = delete_with_propagation(sim.cluster, DEPLOYMENTS, "default", "web", "Background")
    assert gone["metadata"]["name"] == "web" and sim.find(DEPLOYMENTS, "web") is None
    sim.reconcile()
    assert not sim.list(REPLICASETS) and not sim.list(PODS)


def test_orphan_keeps_dependents_without_the_owner_reference():
    sim = Sim()
    d = sim.create(DEPLOYMENTS, deployment(replicas=2))
    [rs] = sim.replicasets(d)
    marked = delete_with_propagation(sim.cluster, DEPLOYMENTS, "default", "web", "Orphan")
    assert marked["metadata"]["finalizers"] == ["orphan"] and marked["metadata"]["deletionTimestamp"]
    sim.reconcile()
    assert sim.find(DEPLOYMENTS, "web") is None
    kept = sim.get(REPLICASETS, rs["metadata"]["name"])
    assert "ownerReferences" not in kept["metadata"]
    assert len(sim.pods(kept)) == 2
    # A new Deployment with the same selector and template adopts the orphan instead of duplicating it.
    d2 = sim.create(DEPLOYMENTS, deployment(replicas=2))
    [adopted] = sim.replicasets(d2)
    assert adopted["metadata"]["uid"] == rs["metadata"]["uid"] and len(sim.list(PODS)) == 2


def test_foreground_deletes_dependents_before_the_owner():
    sim = Sim()
    sim.create(DEPLOYMENTS, deployment(replicas=2))
    marked = delete_with_propagation(sim.cluster, DEPLOYMENTS, "default", "web", "Foreground")
    assert marked["metadata"]["finalizers"] == ["foregroundDeletion"]
    sim.reconcile()
    assert not sim.list(DEPLOYMENTS) and not sim.list(REPLICASETS) and not sim.list(PODS)


def test_dangling_reference_is_dropped_when_another_owner_remains():
    sim = Sim()
    a = sim.create(CONFIGMAPS, cm("owner-a"))
    b = sim.create(CONFIGMAPS, cm("owner-b"))
    sim.create(CONFIGMAPS, cm("child", ownerReferences=[ref(a), ref(b)]))
    sim.store.delete(CONFIGMAPS, "default", "owner-a")
    sim.reconcile()
    assert sim.get(CONFIGMAPS, "child")["metadata"]["ownerReferences"] == [ref(b)]
    sim.store.delete(CONFIGMAPS, "default", "owner-b")
    sim.reconcile()
    assert sim.find(CONFIGMAPS, "child") is None


def test_owner_matched_by_uid_not_name():
    sim = Sim()
    a = sim.create(CONFIGMAPS, cm("owner"))
    sim.create(CONFIGMAPS, cm("child", ownerReferences=[ref(a)]))
    sim.store.delete(CONFIGMAPS, "default", "owner")
    sim.create(CONFIGMAPS, cm("owner"), reconcile=False)  # same name, new uid
    sim.reconcile()
    assert sim.find(CONFIGMAPS, "child") is None


def test_dependents_of_a_deleted_cluster_scoped_owner_are_collected_in_any_namespace():
    sim = Sim()
    sim.add_namespace("team-a")
    role = sim.create(CLUSTERROLES, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                     "metadata": {"name": "reader"}, "rules": []})
    sim.create(CONFIGMAPS, cm("child", ns="team-a", ownerReferences=[ref(role)]))
    sim.store.delete(CLUSTERROLES, "", "reader")
    sim.reconcile()
    assert sim.find(CONFIGMAPS, "child", ns="team-a") is None


def test_unknown_owner_kinds_are_not_collected():
    sim = Sim()
    sim.create(CONFIGMAPS, cm("child", ownerReferences=[{"apiVersion": "example.com/v1", "kind": "Widget",
                                                         "name": "w", "uid": "1234"}]))
    assert sim.find(CONFIGMAPS, "child") is not None


def test_finalizers_hold_a_deleted_object_until_removed():
    sim = Sim()
    sim.create(CONFIGMAPS, cm("held", finalizers=["example.com/keep"]))
    marked = delete_with_propagation(sim.cluster, CONFIGMAPS, "default", "held")
    assert marked["metadata"]["deletionTimestamp"]
    sim.reconcile()
    assert sim.find(CONFIGMAPS, "held") is not None
    sim.edit(CONFIGMAPS, "held", lambda o: o["metadata"].pop("finalizers"), prepared=False)
    assert sim.find(CONFIGMAPS, "held") is None


def test_invalid_propagation_policy_is_422():
    sim = Sim()
    sim.create(CONFIGMAPS, cm("x"))
    with pytest.raises(ApiError) as err:
        delete_with_propagation(sim.cluster, CONFIGMAPS, "default", "x", "Sideways")
    assert err.value.code == 422


# -- namespaces -----------------------------------------------------------------------------------
def test_namespace_deletion_removes_everything_then_the_namespace():
    sim = Sim()
    sim.add_namespace("trial-1")
    body = deployment(replicas=2)
    body["metadata"]["namespace"] = "trial-1"
    sim.create(DEPLOYMENTS, body)
    sim.create(CONFIGMAPS, cm("settings", ns="trial-1"))
    assert len(sim.list(PODS, "trial-1")) == 2
    marked = begin_delete(sim.cluster, "trial-1")
    assert marked["status"]["phase"] == "Terminating" and marked["metadata"]["deletionTimestamp"]
    sim.reconcile()
    assert sim.find(NAMESPACES, "trial-1", ns="") is None
    assert not list(sim.store.iter_namespace("trial-1"))


def test_namespace_with_finalized_content_stays_terminating_with_conditions():
    sim = Sim()
    sim.add_namespace("stuck")
    sim.create(CONFIGMAPS, cm("held", ns="stuck", finalizers=["example.com/keep"]))
    begin_delete(sim.cluster, "stuck")
    sim.reconcile()
    ns = sim.get(NAMESPACES, "stuck", ns="")
    assert ns["status"]["phase"] == "Terminating"
    assert condition(ns, "NamespaceContentRemaining")["message"] == \
        "Some resources are remaining: configmaps has 1 resource instances"
    assert condition(ns, "NamespaceFinalizersRemaining")["message"] == \
        "Some content in the namespace has finalizers remaining: example.com/keep in 1 resource instances"
    assert sim.find(SERVICEACCOUNTS, "default", ns="stuck") is None  # not recreated while terminating
    sim.edit(CONFIGMAPS, "held", lambda o: o["metadata"].pop("finalizers"), ns="stuck", prepared=False)
    assert sim.find(NAMESPACES, "stuck", ns="") is None


def test_system_namespaces_cannot_be_deleted():
    sim = Sim()
    with pytest.raises(ApiError) as err:
        begin_delete(sim.cluster, "default")
    assert err.value.code == 403


def test_no_new_pods_in_a_terminating_namespace():
    sim = Sim()
    sim.add_namespace("going")
    sim.create(CONFIGMAPS, cm("held", ns="going", finalizers=["example.com/keep"]))
    begin_delete(sim.cluster, "going")
    body = deployment(replicas=1)
    body["metadata"]["namespace"] = "going"
    sim.store.create(DEPLOYMENTS, body)  # as if it raced the DELETE
    sim.reconcile()
    assert not sim.list(PODS, "going") and not sim.list(REPLICASETS, "going")


# -- service accounts and root CA -----------------------------------------------------------------
def test_every_namespace_gets_default_service_account_and_root_ca():
    sim = Sim()
    sim.add_namespace("team-a")
    assert sim.find(SERVICEACCOUNTS, "default", ns="team-a") is not None
    ca = sim.get(CONFIGMAPS, ROOT_CA_NAME, ns="team-a")
    assert ssl.PEM_cert_to_DER_cert(ca["data"]["ca.crt"])  # a real, parseable certificate
    assert "kubernetes.io/description" in ca["metadata"]["annotations"]
    sim.store.delete(SERVICEACCOUNTS, "team-a", "default")
    sim.edit(CONFIGMAPS, ROOT_CA_NAME, lambda o: o.update(data={"ca.crt": "tampered"}), ns="team-a")
    assert sim.find(SERVICEACCOUNTS, "default", ns="team-a") is not None
    assert sim.get(CONFIGMAPS, ROOT_CA_NAME, ns="team-a")["data"] == ca["data"]


def test_services_do_not_get_deleted_by_gc():
    sim = Sim()
    sim.create(SERVICES, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api", "namespace": "default"},
                          "spec": {"selector": {"app": "api"}, "ports": [{"port": 80}]}})
    sim.reconcile()
    assert sim.find(SERVICES, "api") is not None
