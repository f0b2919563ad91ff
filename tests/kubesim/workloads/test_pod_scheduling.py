"""default-scheduler: binding, FailedScheduling wording, retries when capacity frees up."""

from __future__ import annotations

import copy

from kubesim import workloads
from kubesim.resources import NODES, PODS


def _big(memory="20Gi", cpu=None):
    requests = {"memory": memory}
    if cpu:
        requests["cpu"] = cpu
    return {"name": "c", "image": "registry.k8s.io/pause:3.9", "resources": {"requests": requests}}


def test_default_node_shape(sim):
    node = sim.store.get(NODES, "", "kubesim-node-1")
    st = node["status"]
    assert st["allocatable"]["cpu"] == "8" and st["allocatable"]["memory"] == "33554432Ki"
    assert st["allocatable"]["pods"] == "110"
    ready = next(c for c in st["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("True", "KubeletReady")
    info = st["nodeInfo"]
    assert info["kubeletVersion"].startswith("v1.") and info["containerRuntimeVersion"].startswith("containerd://")
    assert {"type": "InternalIP", "address": "172.18.0.2"} in st["addresses"]
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "kubesim-node-1"


def test_node_created_through_the_api_gets_a_status(sim):
    sim.store.create(NODES, {"metadata": {"name": "extra"}, "status": {"capacity": {"cpu": "2", "memory": "4Gi"}}})
    sim.reconcile()
    st = sim.store.get(NODES, "", "extra")["status"]
    assert st["nodeInfo"]["osImage"] and st["allocatable"]["cpu"] == "2"
    assert any(c["type"] == "Ready" for c in st["conditions"])


def test_pod_that_does_not_fit_is_pending_with_failed_scheduling(sim):
    sim.pod("huge", _big("64Gi"))
    st = sim.status("huge")
    assert st["phase"] == "Pending" and "nodeName" not in sim.get("huge")["spec"]
    cond = sim.condition("huge", "PodScheduled")
    expected = ("0/1 nodes are available: 1 Insufficient memory. preemption: 0/1 nodes are available: "
                "1 No preemption victims found for incoming pod.")
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", expected)
    ev = sim.events("huge", "FailedScheduling")
    assert len(ev) == 1 and ev[0]["type"] == "Warning" and ev[0]["message"] == expected
    assert ev[0]["source"] == {"component": "default-scheduler"}
    sim.pod("cpu", _big("1Gi", cpu="9"))
    assert "1 Insufficient cpu." in sim.condition("cpu", "PodScheduled")["message"]


def test_requests_fill_the_node_then_retry_when_a_pod_goes_away(sim):
    sim.pod("a", _big("20Gi"))
    sim.pod("b", _big("20Gi"), ns="other")
    assert sim.get("a")["spec"]["nodeName"] == "kubesim-node-1"
    assert sim.status("b", "other")["phase"] == "Pending"
    assert sim.messages("a", "Scheduled") == ["Successfully assigned default/a to kubesim-node-1"]
    sim.delete(PODS, "a")  # frees capacity in another namespace
    assert sim.get("b", "other")["spec"]["nodeName"] == "kubesim-node-1"
    assert sim.condition("b", "PodScheduled", "other")["status"] == "True"


def test_completed_pods_do_not_hold_capacity(sim):
    sim.pod("job", {**_big("20Gi"), "image": "busybox:1.36", "command": ["true"]}, restartPolicy="Never")
    sim.advance(5)
    assert sim.status("job")["phase"] == "Succeeded"
    sim.pod("next", _big("20Gi"))
    assert sim.get("next")["spec"].get("nodeName") == "kubesim-node-1"


def test_failed_scheduling_event_repeats_on_retries_not_on_every_write(sim):
    sim.pod("huge", _big("64Gi"))
    for i in range(5):
        sim.configmap(f"cm{i}", {"a": "b"})
    assert sim.events("huge", "FailedScheduling")[0]["count"] == 1
    sim.advance(301)
    assert sim.events("huge", "FailedScheduling")[0]["count"] == 2


def test_node_selector_taints_and_cordon(make_sim):
    sim = make_sim([workloads.NodeSpec("n1", labels={"disk": "ssd"}),
                    workloads.NodeSpec("n2", taints=({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},))])
    sim.pod("sel", {"name": "c", "image": "nginx:1.25"}, nodeSelector={"disk": "hdd"})
    msg = sim.condition("sel", "PodScheduled")["message"]
    assert msg == ("0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
                   "1 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/2 nodes are available: "
                   "2 Preemption is not helpful for scheduling.")
    sim.pod("tol", {"name": "c", "image": "nginx:1.25"}, nodeSelector={"kubernetes.io/hostname": "n2"},
            tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}])
    assert sim.get("tol")["spec"]["nodeName"] == "n2"
    sim.pod("aff", {"name": "c", "image": "nginx:1.25"}, affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]}}})
    assert sim.get("aff")["spec"]["nodeName"] == "n1"
    node = copy.deepcopy(sim.store.get(NODES, "", "n1"))
    node["spec"]["unschedulable"] = True
    sim.store.update(NODES, node)
    sim.reconcile()
    sim.pod("cordoned", {"name": "c", "image": "nginx:1.25"}, nodeSelector={"disk": "ssd"})
    assert "1 node(s) were unschedulable" in sim.condition("cordoned", "PodScheduled")["message"]
    node = copy.deepcopy(sim.store.get(NODES, "", "n1"))
    node["spec"]["unschedulable"] = False
    sim.store.update(NODES, node)
    sim.reconcile()
    assert sim.get("cordoned")["spec"]["nodeName"] == "n1"
    # the pod runs on its node, with that node's address
    sim.advance(5)
    assert sim.status("tol")["hostIP"] == "172.18.0.3"


def test_missing_persistent_volume_claim(sim):
    sim.pod("pvc", {"name": "c", "image": "nginx:1.25"},
            volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}])
    assert sim.condition("pvc", "PodScheduled")["message"] == (
        '0/1 nodes are available: persistentvolumeclaim "data" not found. preemption: 0/1 nodes are available: '
        "1 Preemption is not helpful for scheduling.")



def test_deleted_pending_pod_is_forgotten(sim):
    sim.pod("huge", _big("64Gi"))
    assert sim.cluster.runtime.scheduling
    sim.delete(PODS, "huge")
    assert not sim.cluster.runtime.scheduling
