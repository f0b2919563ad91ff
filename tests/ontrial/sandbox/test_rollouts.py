"""Rollout state as ``kubectl rollout status`` reads it, for each workload kind."""

from __future__ import annotations

from ontrial.sandbox.rollouts import daemonset_pending, deployment_pending, statefulset_pending


def sts(replicas=3, generation=2, strategy=None, **status) -> dict:
    return {"metadata": {"name": "journal", "generation": generation},
            "spec": {"replicas": replicas, "updateStrategy": strategy or {"type": "RollingUpdate"}},
            "status": {"observedGeneration": 2, **status}}


def test_statefulset_needs_ready_pods_then_a_finished_update():
    assert statefulset_pending(sts(generation=3)) == "statefulset journal: waiting for spec update to be observed"
    assert statefulset_pending(sts(readyReplicas=1)) == "statefulset journal: waiting for 2 pods to be ready"
    rolling = sts(readyReplicas=3, updatedReplicas=1, currentRevision="journal-a", updateRevision="journal-b")
    assert statefulset_pending(rolling) == "statefulset journal: 1 pods at revision journal-b"
    done = sts(readyReplicas=3, updatedReplicas=3, currentRevision="journal-b", updateRevision="journal-b")
    assert statefulset_pending(done) is None
    partitioned = {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
    assert statefulset_pending(sts(strategy=partitioned, readyReplicas=3, updatedReplicas=0)) == \
        "statefulset journal: 0 out of 1 new pods have been updated"
    assert statefulset_pending(sts(strategy=partitioned, readyReplicas=3, updatedReplicas=1)) is None
    assert statefulset_pending(sts(strategy={"type": "OnDelete"}, readyReplicas=3, updateRevision="x")) is None


def test_daemonset_and_deployment_wording():
    ds = {"metadata": {"name": "shipper", "generation": 1},
          "status": {"observedGeneration": 1, "desiredNumberScheduled": 2, "updatedNumberScheduled": 2,
                     "numberAvailable": 1}}
    assert daemonset_pending(ds) == "daemonset shipper: 1 of 2 updated pods are available"
    ds["status"]["numberAvailable"] = 2
    assert daemonset_pending(ds) is None
    dep = {"metadata": {"name": "web", "generation": 1}, "spec": {"replicas": 2},
           "status": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": 2, "availableReplicas": 2}}
    assert deployment_pending(dep) == "web: 1 old replicas are pending termination"
