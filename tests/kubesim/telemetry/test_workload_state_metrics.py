"""kube-state-metrics series for StatefulSets and DaemonSets, as the standard alerts query them
(KubeStatefulSetReplicasMismatch, KubeDaemonSetMisScheduled, rollout stuck)."""

from __future__ import annotations

from telemetry_sim import ShopSim

from kubesim.resources import DAEMONSETS, STATEFULSETS


def workload(kind: str, name: str, **spec) -> dict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": "shop"},
            "spec": {"selector": {"matchLabels": labels}, **spec, "template": {
                "metadata": {"labels": labels}, "spec": {"containers": [{"name": name, "image": "nginx:1.25"}]}}}}


def test_statefulset_and_daemonset_state_reaches_prometheus():
    sim = ShopSim(rules=None)
    sim.create(STATEFULSETS, workload("StatefulSet", "ledger", serviceName="ledger", replicas=2))
    sim.create(DAEMONSETS, workload("DaemonSet", "shipper"))
    sim.advance(120)
    assert sim.value('kube_statefulset_status_replicas_ready{statefulset="ledger"}', "shop") == 2
    assert sim.value('kube_statefulset_replicas{statefulset="ledger"}', "shop") == 2
    mismatch = ('kube_statefulset_status_replicas_ready{statefulset="ledger"}'
                ' != kube_statefulset_replicas{statefulset="ledger"}')
    assert sim.query(mismatch, "shop") == {}
    revisions = sim.query('kube_statefulset_status_update_revision{statefulset="ledger"}', "shop")
    assert [dict(labels)["revision"] for labels in revisions] == [
        sim.cluster.store.get(STATEFULSETS, "shop", "ledger")["status"]["updateRevision"]]
    assert sim.value('kube_daemonset_status_desired_number_scheduled{daemonset="shipper"}', "shop") == 1
    assert sim.value('kube_daemonset_status_number_ready{daemonset="shipper"}', "shop") == 1
    assert sim.value('kube_daemonset_status_number_misscheduled{daemonset="shipper"}', "shop") == 0

    sim.update(STATEFULSETS, "shop", "ledger", lambda s: s["spec"].update(replicas=3))
    sim.update(STATEFULSETS, "shop", "ledger", lambda s: s["spec"]["template"]["spec"]["containers"][0].update(
        image="nginx:no-such-tag"))
    sim.advance(120)
    assert sim.query(mismatch, "shop") != {}  # the third replica never becomes ready on a bad tag
