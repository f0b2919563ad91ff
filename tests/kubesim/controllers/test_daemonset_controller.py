"""DaemonSet controller without a kubelet: placement by node, replacement of failed pods, status."""

from __future__ import annotations

from controller_sim import Sim

from kubesim.controllers.daemonset import target_node
from kubesim.resources import DAEMONSETS, NODES


def daemonset(**template_spec) -> dict:
    labels = {"app": "shipper"}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "shipper", "namespace": "default"},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                "containers": [{"name": "shipper", "image": "ops/shipper:1.0"}], **template_spec}}}}


def node(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def test_one_pinned_pod_per_fitting_node_and_failed_pods_are_replaced():
    sim = Sim()
    sim.create(NODES, node("kubesim-node-1", disk="ssd"))
    sim.create(NODES, node("kubesim-node-2"))
    ds = sim.create(DAEMONSETS, daemonset(nodeSelector={"disk": "ssd"}))
    pods = sim.pods(ds)
    assert [target_node(p) for p in pods] == ["kubesim-node-1"]
    tolerated = {(t["key"], t["effect"]) for t in pods[0]["spec"]["tolerations"]}
    assert ("node.kubernetes.io/unschedulable", "NoSchedule") in tolerated
    assert ("node.kubernetes.io/not-ready", "NoExecute") in tolerated
    status = sim.get(DAEMONSETS, "shipper")["status"]
    assert (status["desiredNumberScheduled"], status["currentNumberScheduled"], status["numberReady"]) == (1, 1, 0)

    sim.make_ready(pods)
    status = sim.get(DAEMONSETS, "shipper")["status"]
    assert (status["numberReady"], status["numberAvailable"], status["updatedNumberScheduled"]) == (1, 1, 1)
    assert "numberUnavailable" not in status

    sim.finish_pod(sim.pods(ds)[0], "Failed")
    replacement = sim.pods(ds)
    assert len(replacement) == 1 and replacement[0]["metadata"]["uid"] != pods[0]["metadata"]["uid"]
    assert sim.messages(ds, "SuccessfulDelete") == [f"Deleted pod: {pods[0]['metadata']['name']}"]
    assert sim.get(DAEMONSETS, "shipper")["status"]["numberUnavailable"] == 1
