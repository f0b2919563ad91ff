"""kube-state-metrics series for StatefulSets, DaemonSets and HPAs, as the standard alerts query them
(KubeStatefulSetReplicasMismatch, KubeDaemonSetMisScheduled, KubeHpaMaxedOut, rollout stuck)."""

from __future__ import annotations

from telemetry_sim import ShopSim

from kubesim.resources import DAEMONSETS, DEPLOYMENTS, HORIZONTALPODAUTOSCALERS, STATEFULSETS


def workload(kind: str, name: str, **spec) -> dict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": "shop"},
            "spec": {"selector": {"matchLabels": labels}, **spec, "template": {
                "metadata": {"labels": labels}, "spec": {"containers": [{"name": name, "image": "nginx:1.25"}]}}}}


def test_statefulset_and_daemonset_state_reaches_prometheus():
    sim = ShopSim(rules=None)
    sim.create(STATEFULSETS, workload("StatefulSet", "journal", serviceName="journal", replicas=2))
    sim.create(DAEMONSETS, workload("DaemonSet", "shipper"))
    sim.advance(120)
    assert sim.value('kube_statefulset_status_replicas_ready{statefulset="journal"}', "shop") == 2
    assert sim.value('kube_statefulset_replicas{statefulset="journal"}', "shop") == 2
    mismatch = ('kube_statefulset_status_replicas_ready{statefulset="journal"}'
                ' != kube_statefulset_replicas{statefulset="journal"}')
    assert sim.query(mismatch, "shop") == {}
    revisions = sim.query('kube_statefulset_status_update_revision{statefulset="journal"}', "shop")
    assert [dict(labels)["revision"] for labels in revisions] == [
        sim.cluster.store.get(STATEFULSETS, "shop", "journal")["status"]["updateRevision"]]
    assert sim.value('kube_daemonset_status_desired_number_scheduled{daemonset="shipper"}', "shop") == 1
    assert sim.value('kube_daemonset_status_number_ready{daemonset="shipper"}', "shop") == 1
    assert sim.value('kube_daemonset_status_number_misscheduled{daemonset="shipper"}', "shop") == 0

    sim.update(STATEFULSETS, "shop", "journal", lambda s: s["spec"].update(replicas=3))
    sim.update(STATEFULSETS, "shop", "journal", lambda s: s["spec"]["template"]["spec"]["containers"][0].update(
        image="nginx:no-such-tag"))
    sim.advance(120)
    assert sim.query(mismatch, "shop") != {}  # the third replica never becomes ready on a bad tag


def test_an_autoscaler_at_its_maximum_shows_in_prometheus():
    sim = ShopSim(rules=None)
    sim.update(DEPLOYMENTS, "shop", "frontend", lambda d: d["spec"]["template"]["spec"]["containers"][0].update(
        resources={"requests": {"cpu": "1m"}}))  # any real use is far above 10 % of 1m
    sim.create(HORIZONTALPODAUTOSCALERS, {
        "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "frontend", "namespace": "shop"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "frontend"},
                 "minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 10}})
    sim.advance(180)
    maxed = ('kube_horizontalpodautoscaler_status_current_replicas{horizontalpodautoscaler="frontend"}'
             ' == kube_horizontalpodautoscaler_spec_max_replicas{horizontalpodautoscaler="frontend"}')
    assert list(sim.query(maxed, "shop").values()) == [3.0]
