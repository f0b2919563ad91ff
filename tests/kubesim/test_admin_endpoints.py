"""kubesim's own admin endpoints: clock, API fault injection and workload profile registration."""

from __future__ import annotations

import time
from typing import Iterator

import httpx
import pytest

from kubesim import embedded


@pytest.fixture
def sim() -> Iterator[embedded.Embedded]:
    server = embedded.start(time_scale=0, seed=5)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def admin(sim) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sim.url, timeout=30, headers={"Authorization": f"Bearer {sim.admin_token}"}) as c:
        yield c


def test_clock_advance_moves_simulated_time(admin):
    before = admin.get("/kubesim/v1/clock").json()
    assert before["timeScale"] == 0
    after = admin.post("/kubesim/v1/clock/advance", json={"seconds": 90}).json()
    assert after["seconds"] == pytest.approx(before["seconds"] + 90)
    assert after["now"] > before["now"]
    assert admin.post("/kubesim/v1/clock/advance", json={"seconds": -1}).status_code == 422
    assert admin.post("/kubesim/v1/clock/advance", json={"secs": 1}).status_code == 400
    assert admin.post("/kubesim/v1/clock/advance", content=b"{nope").status_code == 400
    assert admin.get("/kubesim/v1/clock/advance").status_code == 405
    assert admin.get("/kubesim/v1/nothing").status_code == 404


def test_error_faults_hit_only_matching_requests_until_cleared(admin):
    resp = admin.post("/kubesim/v1/faults", json={"error_rate": 1.0, "paths": ["/api/v1/namespaces/default/configmaps"],
                                                  "methods": ["GET"], "seed": 1})
    assert resp.status_code == 200 and resp.json()["error_rate"] == 1.0
    hit = admin.get("/api/v1/namespaces/default/configmaps")
    assert hit.status_code == 500
    assert hit.json()["reason"] == "InternalError" and "injected" in hit.json()["message"]
    assert admin.get("/api/v1/namespaces/default/pods").status_code == 200  # other path
    assert admin.post("/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "ok"}}).status_code == 201
    assert admin.get("/kubesim/v1/faults").json()["injected"] == 1
    assert admin.delete("/kubesim/v1/faults").status_code == 200
    assert admin.get("/api/v1/namespaces/default/configmaps").status_code == 200
    assert admin.get("/kubesim/v1/faults").json() == {}


def test_error_rate_is_a_seeded_fraction(admin):
    def run() -> list[int]:
        admin.post("/kubesim/v1/faults", json={"error_rate": 0.3, "seed": 42})
        codes = [admin.get("/api/v1/namespaces").status_code for _ in range(200)]
        admin.delete("/kubesim/v1/faults")
        return codes

    first, second = run(), run()
    assert first == second  # same seed, same failures
    assert 30 <= first.count(500) <= 90 and set(first) == {200, 500}


def test_timeout_faults_hang_then_answer_504(admin):
    admin.post("/kubesim/v1/faults", json={"timeout_rate": 1.0, "timeout_seconds": 0.3})
    started = time.monotonic()
    resp = admin.get("/api/v1/namespaces")
    assert resp.status_code == 504 and resp.json()["reason"] == "Timeout"
    assert time.monotonic() - started >= 0.3
    assert admin.get("/kubesim/v1/clock").status_code == 200  # admin paths are never faulted
    assert admin.get("/healthz").status_code == 200


def test_bad_fault_settings_are_rejected(admin):
    for body in ({"error_rate": 2}, {"error_rate": "x"}, {"paths": "/api"}, {"methods": ["FETCH"]},
                 {"error_rate": 0.7, "timeout_rate": 0.7}, {"bogus": 1}, [1]):
        assert admin.post("/kubesim/v1/faults", json=body).status_code in (400, 422), body


def test_registered_profiles_make_images_runnable(sim, admin):
    pod = {"metadata": {"name": "custom"}, "spec": {"containers": [{"name": "c", "image": "acme/custom:2.0"}]}}
    assert admin.post("/api/v1/namespaces/default/pods", json=pod).status_code == 201
    sim.advance(30)
    waiting = admin.get("/api/v1/namespaces/default/pods/custom").json()["status"]["containerStatuses"][0]["state"]
    assert "waiting" in waiting  # unknown image: ErrImagePull / ImagePullBackOff
    resp = admin.post("/kubesim/v1/profiles", json={"profiles": [{"image": "acme/custom", "tags": ["2.0"],
                                                                  "startup_seconds": 1}]})
    assert resp.json() == {"registered": 1}
    sim.advance(600)
    state = admin.get("/api/v1/namespaces/default/pods/custom").json()["status"]["containerStatuses"][0]["state"]
    assert "running" in state, state
    assert admin.post("/kubesim/v1/profiles", json=[{"image": "acme/bad:tag"}]).status_code == 422
    assert admin.post("/kubesim/v1/profiles", json={"image": "x"}).status_code == 400


def test_admin_endpoints_need_the_admin_token(sim):
    assert httpx.get(f"{sim.url}/kubesim/v1/clock").status_code == 401
    assert httpx.get(f"{sim.url}/kubesim/v1/clock", headers={"Authorization": "Bearer wrong"}).status_code == 401


def test_telemetry_routes_are_absent_when_telemetry_is_not_attached():
    from kubesim.build import build_cluster

    with embedded.start(cluster=build_cluster(time_scale=0, with_telemetry=False)) as bare:
        with httpx.Client(base_url=bare.url, headers={"Authorization": f"Bearer {bare.admin_token}"}) as admin:
            for path in ("/prometheus/api/v1/query", "/kubesim/v1/namespaces/default/rules"):
                resp = admin.get(path, params={"query": "up"})
                assert resp.status_code == 404 and resp.json()["reason"] == "NotFound", path


def test_telemetry_routes_answer_by_default(admin):
    resp = admin.get("/prometheus/api/v1/query", params={"query": "vector(1)"})
    assert resp.status_code == 200 and resp.json()["data"]["result"][0]["value"][1] == "1"
