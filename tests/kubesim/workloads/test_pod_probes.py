"""Readiness and liveness probes judged against the profile; dependencies and overrides."""

from __future__ import annotations

import copy

from kubesim.resources import PODS, SERVICES


def _http(path, port, **extra):
    return {"httpGet": {"path": path, "port": port}, **extra}


def test_readiness_probe_wrong_path_is_404_and_never_ready(sim):
    sim.pod("web", {"name": "web", "image": "nginx:1.25", "readinessProbe": _http("/healthz", 80)})
    sim.advance(60)
    cs = sim.cs("web")
    assert "running" in cs["state"] and cs["ready"] is False and cs["restartCount"] == 0
    assert sim.status("web")["phase"] == "Running"
    assert sim.condition("web", "Ready")["status"] == "False"
    unhealthy = sim.events("web", "Unhealthy")
    assert [e["message"] for e in unhealthy] == ["Readiness probe failed: HTTP probe failed with statuscode: 404"]
    assert unhealthy[0]["type"] == "Warning" and unhealthy[0]["count"] == 5  # every 10s from 12.4s (the 2.4s tick found it starting)


def test_readiness_probe_wrong_port_is_connection_refused(sim):
    sim.pod("web", {"name": "web", "image": "nginx:1.25", "ports": [{"name": "http", "containerPort": 80}],
                    "readinessProbe": {"tcpSocket": {"port": 8080}}})
    sim.pod("named", {"name": "web", "image": "nginx:1.25", "ports": [{"name": "http", "containerPort": 80}],
                      "readinessProbe": _http("/", "http")})
    sim.advance(40)
    ip = sim.status("web")["podIP"]
    assert sim.messages("web", "Unhealthy") == [
        f"Readiness probe failed: dial tcp {ip}:8080: connect: connection refused"]
    assert sim.cs("named")["ready"] is True


def test_readiness_follows_dependency_service_endpoints(sim):
    sim.cluster.profiles.register({"image": "acme/front", "tags": ["1"], "ports": [8080],
                                   "readiness": {"path": "/ready", "port": 8080, "depends_on": ["backend"]}})
    sim.pod("front", {"name": "app", "image": "acme/front:1", "readinessProbe": _http("/ready", 8080, periodSeconds=5)})
    sim.advance(30)
    assert sim.cs("front")["ready"] is False
    assert sim.messages("front", "Unhealthy") == ["Readiness probe failed: HTTP probe failed with statuscode: 503"]
    from kubesim.workloads.logs import read_log

    log = read_log(sim.cluster, sim.get("front"), "app", False, None, None, False)
    assert "dependency backend is not ready" in log
    sim.service("backend", selector={"app": "backend"})
    sim.advance(10)
    assert sim.cs("front")["ready"] is False, "a Service without ready pods is still unavailable"
    sim.pod("backend-1", {"name": "c", "image": "nginx:1.25"}, labels={"app": "backend"})
    sim.advance(10)
    assert sim.cs("backend-1")["ready"] is True
    assert sim.cs("front")["ready"] is True
    # the backend goes away: after failureThreshold (3) failed probes the front end is not ready
    sim.delete(PODS, "backend-1")
    sim.advance(5)
    assert sim.cs("front")["ready"] is True
    sim.advance(15)
    assert sim.cs("front")["ready"] is False


def test_readiness_dependency_uses_endpoints_when_present(sim):
    from kubesim.resources import ENDPOINTS

    sim.cluster.profiles.register({"image": "acme/front", "tags": ["1"], "ports": [8080],
                                   "readiness": {"path": "/ready", "port": 8080, "depends_on": ["db.other"]}})
    sim.service("db", ns="other")
    sim.store.create(ENDPOINTS, {"metadata": {"name": "db", "namespace": "other"},
                                 "subsets": [{"addresses": [{"ip": "10.244.9.9"}], "ports": [{"port": 80}]}]})
    sim.pod("front", {"name": "app", "image": "acme/front:1", "readinessProbe": _http("/ready", 8080)})
    sim.advance(20)
    assert sim.cs("front")["ready"] is True


def test_readiness_override_forces_not_ready(sim):
    sim.pod("web", {"name": "web", "image": "nginx:1.25", "readinessProbe": _http("/", 80, periodSeconds=5)})
    sim.advance(10)
    assert sim.cs("web")["ready"] is True
    sim.cluster.runtime.set_readiness_override(sim.cluster, "default", "web", "HTTP probe failed with statuscode: 500")
    sim.advance(16)
    assert sim.cs("web")["ready"] is False
    assert sim.messages("web", "Unhealthy") == ["Readiness probe failed: HTTP probe failed with statuscode: 500"]
    sim.cluster.runtime.set_readiness_override(sim.cluster, "default", "web", None)
    sim.advance(6)
    assert sim.cs("web")["ready"] is True


def test_readiness_checks_hook(sim):
    calls = []

    def check(cluster, pod, container):
        calls.append((pod["metadata"]["name"], container))
        return "HTTP probe failed with statuscode: 502" if pod["metadata"]["name"] == "sick" else None

    sim.cluster.runtime.readiness_checks.append(check)
    sim.pod("fine", {"name": "web", "image": "nginx:1.25", "readinessProbe": _http("/", 80)})
    sim.pod("sick", {"name": "web", "image": "nginx:1.25", "readinessProbe": _http("/", 80)})
    sim.advance(30)
    assert sim.cs("fine")["ready"] is True and sim.cs("sick")["ready"] is False
    assert ("sick", "web") in calls


def test_liveness_failure_kills_and_restarts(sim):
    sim.pod("live", {"name": "web", "image": "nginx:1.25",
                     "livenessProbe": _http("/", 8080, periodSeconds=5, failureThreshold=2, initialDelaySeconds=3)})
    sim.advance(12)
    cs = sim.cs("live")
    assert cs["restartCount"] == 1
    assert cs["lastState"]["terminated"]["reason"] == "Completed"  # nginx exits 0 on SIGTERM
    assert sim.messages("live", "Killing") == ["Container web failed liveness probe, will be restarted"]
    assert sim.events("live", "Unhealthy")[0]["message"].startswith('Liveness probe failed: Get "http://')
    sim.advance(300)
    assert sim.cs("live")["state"]["waiting"]["reason"] == "CrashLoopBackOff"


def test_aggressive_liveness_kills_slow_starter(sim):
    sim.pod("slow", {"name": "app", "image": "kubesim/http-service:1.0",
                     "livenessProbe": _http("/livez", 8080, periodSeconds=1, failureThreshold=1)})
    sim.pod("ok", {"name": "app", "image": "kubesim/http-service:1.0",
                   "livenessProbe": _http("/livez", 8080, periodSeconds=10, failureThreshold=3)})
    sim.advance(60)
    assert sim.cs("slow")["restartCount"] >= 2
    assert sim.cs("ok")["restartCount"] == 0 and sim.cs("ok")["ready"] is True


def test_startup_probe_gates_readiness(sim):
    sim.pod("sp", {"name": "app", "image": "kubesim/http-service:1.0",
                   "startupProbe": _http("/healthz", 8080, periodSeconds=2, failureThreshold=30)})
    sim.advance(3)
    assert sim.cs("sp")["started"] is False and sim.cs("sp")["ready"] is False
    sim.advance(5)
    assert sim.cs("sp")["started"] is True and sim.cs("sp")["ready"] is True


def test_cpu_limit_below_need_slows_start_up(sim):
    probe = _http("/readyz", 8080, periodSeconds=1)
    sim.pod("fast", {"name": "app", "image": "kubesim/http-service:1.0", "readinessProbe": probe})
    sim.pod("slow", {"name": "app", "image": "kubesim/http-service:1.0", "readinessProbe": probe,
                     "resources": {"limits": {"cpu": "5m"}}})
    sim.advance(8)
    assert sim.cs("fast")["ready"] is True and sim.cs("slow")["ready"] is False
    sim.advance(15)
    assert sim.cs("slow")["ready"] is True


def test_probe_on_service_changes_is_rechecked_without_polling(sim):
    """Healthy probes schedule no wake-ups; a change in the namespace re-checks them."""
    sim.cluster.profiles.register({"image": "acme/front", "tags": ["1"], "ports": [8080],
                                   "readiness": {"path": "/ready", "port": 8080, "depends_on": ["db"]}})
    sim.service("db")
    sim.pod("db-0", {"name": "c", "image": "nginx:1.25"}, labels={})
    svc = copy.deepcopy(sim.store.get(SERVICES, "default", "db"))
    svc["spec"]["selector"] = {"role": "db"}
    sim.store.update(SERVICES, svc)
    sim.pod("db-1", {"name": "c", "image": "nginx:1.25"}, labels={"role": "db"})
    sim.pod("front", {"name": "app", "image": "acme/front:1", "readinessProbe": _http("/ready", 8080)})
    sim.advance(30)
    assert sim.cs("front")["ready"] is True
    assert sim.cluster.next_wakeup() is None
