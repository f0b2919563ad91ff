"""A healthy pod: scheduled, pulled, created, started, ready — with the status a kubelet writes."""

from __future__ import annotations

import ipaddress

from kubesim.resources import PODS


def test_pod_goes_running_and_ready_with_real_events(sim):
    sim.pod("web", {"name": "web", "image": "nginx:1.25"})
    st = sim.status("web")
    assert st["phase"] == "Pending"
    assert sim.cs("web")["state"] == {"waiting": {"reason": "ContainerCreating"}}
    sim.advance(5)
    st = sim.status("web")
    assert st["phase"] == "Running"
    cs = sim.cs("web")
    assert cs["ready"] is True and cs["started"] is True and cs["restartCount"] == 0
    assert "running" in cs["state"] and cs["lastState"] == {}
    assert cs["image"] == "docker.io/library/nginx:1.25"
    assert cs["imageID"].startswith("docker.io/library/nginx@sha256:")
    assert cs["containerID"].startswith("containerd://")
    assert [e["reason"] for e in sim.events("web")] == ["Scheduled", "Pulling", "Pulled", "Created", "Started"]
    assert sim.messages("web") == [
        "Successfully assigned default/web to kubesim-node-1",
        'Pulling image "nginx:1.25"',
        'Successfully pulled image "nginx:1.25" in 2.400s (2.400s including waiting). Image size: 72950000 bytes.',
        "Created container web",
        "Started container web",
    ]
    kubelet_events = sim.events("web")[1:]
    assert all(e["source"] == {"component": "kubelet", "host": "kubesim-node-1"} for e in kubelet_events)
    assert all(e["involvedObject"]["fieldPath"] == "spec.containers{web}" for e in kubelet_events)


def test_status_fields_conditions_ips_and_qos(sim):
    sim.pod("web", {"name": "web", "image": "nginx:1.25",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                  "limits": {"cpu": "100m", "memory": "64Mi"}}})
    sim.advance(5)
    st = sim.status("web")
    assert [c["type"] for c in st["conditions"]] == [
        "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
    assert all(c["status"] == "True" for c in st["conditions"])
    assert st["hostIP"] == "172.18.0.2" and st["hostIPs"] == [{"ip": "172.18.0.2"}]
    assert ipaddress.ip_address(st["podIP"]) in ipaddress.ip_network("10.244.0.0/16")
    assert st["podIPs"] == [{"ip": st["podIP"]}]
    assert st["qosClass"] == "Guaranteed"
    assert sim.secs(st["startTime"]) == 0
    sim.pod("be", {"name": "c", "image": "nginx:1.25"})
    assert sim.status("be")["qosClass"] == "BestEffort"
    sim.pod("bu", {"name": "c", "image": "nginx:1.25", "resources": {"requests": {"cpu": "10m"}}})
    assert sim.status("bu")["qosClass"] == "Burstable"


def test_pod_ips_are_deterministic_and_unique(sim, make_sim):
    for i in range(20):
        sim.pod(f"p{i}", {"name": "c", "image": "registry.k8s.io/pause:3.9"})
    ips = [sim.status(f"p{i}")["podIP"] for i in range(20)]
    assert len(set(ips)) == 20
    again = make_sim()
    for i in range(20):
        again.pod(f"p{i}", {"name": "c", "image": "registry.k8s.io/pause:3.9"})
    # uids come from the seeded store, so the same seed gives the same addresses
    assert [again.status(f"p{i}")["podIP"] for i in range(20)] == ips


def test_readiness_waits_for_startup_then_condition_flips(sim):
    probe = {"httpGet": {"path": "/readyz", "port": 8080}, "periodSeconds": 5}
    sim.pod("svc", {"name": "app", "image": "kubesim/http-service:1.0", "readinessProbe": probe})
    sim.advance(2.5)  # pulled at 1.8s, listening at 4.8s
    cs = sim.cs("svc")
    assert "running" in cs["state"] and cs["ready"] is False
    ready = sim.condition("svc", "Ready")
    assert ready["status"] == "False" and ready["reason"] == "ContainersNotReady"
    assert ready["message"] == "containers with unready status: [app]"
    sim.advance(5)
    assert sim.cs("svc")["ready"] is True
    assert sim.condition("svc", "Ready")["status"] == "True"
    assert sim.secs(sim.condition("svc", "Ready")["lastTransitionTime"]) == 6  # first passing tick: 1.8 + 5 → 6.8
    assert not sim.events("svc", "Unhealthy"), "start-up probe failures are not reported"


def test_second_pod_finds_image_already_present(sim):
    sim.pod("a", {"name": "c", "image": "nginx:1.25"})
    sim.advance(5)
    sim.pod("b", {"name": "c", "image": "nginx:1.25"})
    sim.advance(1)
    assert sim.messages("b", "Pulled") == ['Container image "nginx:1.25" already present on machine']
    assert sim.cs("b")["ready"] is True
    # :latest (and untagged) images are pulled every time (imagePullPolicy defaults to Always)
    sim.pod("c", {"name": "c", "image": "nginx"})
    sim.advance(5)
    sim.pod("d", {"name": "c", "image": "nginx"})
    assert sim.messages("d", "Pulling") == ['Pulling image "nginx"']


def test_idle_reconcile_writes_nothing(sim):
    sim.pod("web", {"name": "web", "image": "nginx:1.25"})
    sim.advance(30)
    rv = sim.store.resource_version
    pod_rv = sim.get("web")["metadata"]["resourceVersion"]
    sim.store.dirty.add("default")
    sim.reconcile()
    sim.advance(600)
    assert sim.get("web")["metadata"]["resourceVersion"] == pod_rv
    assert sim.store.resource_version == rv
    assert sim.cluster.next_wakeup() is None, "a healthy pod needs no wake-ups"


def test_pod_bound_to_a_missing_node_is_left_alone(sim):
    sim.pod("ghost", {"name": "c", "image": "nginx:1.25"}, nodeName="no-such-node")
    sim.advance(10)
    assert sim.get("ghost").get("status") in (None, {})


def test_deleted_pod_drops_runtime_state_and_reports_killing(sim):
    sim.pod("web", {"name": "web", "image": "nginx:1.25"})
    sim.advance(5)
    uid = sim.get("web")["metadata"]["uid"]
    ip = sim.status("web")["podIP"]
    assert uid in sim.cluster.runtime
    sim.delete(PODS, "web")
    assert uid not in sim.cluster.runtime
    assert ip not in sim.cluster.runtime.ips
    assert sim.messages("web", "Killing") == ["Stopping container web"]


def test_graceful_deletion_stops_containers_then_removes_pod(sim):
    import copy

    sim.pod("web", {"name": "web", "image": "nginx:1.25"})
    sim.advance(5)
    pod = copy.deepcopy(sim.get("web"))
    pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    pod["metadata"]["finalizers"] = ["example.com/hold"]
    sim.store.update(PODS, pod)
    sim.reconcile()
    assert sim.messages("web", "Killing") == ["Stopping container web"]
    cs = sim.cs("web")
    assert cs["state"]["terminated"]["reason"] == "Completed"  # nginx exits 0 on SIGTERM
    pod = copy.deepcopy(sim.get("web"))
    pod["metadata"]["finalizers"] = []
    sim.store.update(PODS, pod)
    sim.reconcile()
    assert sim.store.find(PODS, "default", "web") is None
