"""Crashing containers: exit codes, CrashLoopBackOff timing, lastState, OOMKilled, logs --previous."""

from __future__ import annotations

from kubesim.resources import EVENTS
from kubesim.workloads.logs import read_log


def _restart_times(sim, name, seconds, step=0.5):
    times, last = [], 0
    for _ in range(int(seconds / step)):
        sim.advance(step)
        count = sim.cs(name)["restartCount"]
        if count != last:
            times.append(sim.now())
            last = count
    return times


def test_missing_env_exits_1_with_fatal_line(sim):
    sim.pod("api", sim.api(db_url=None))
    sim.advance(2)  # pulled at 1.2s, dies at 1.7s
    cs = sim.cs("api")
    term = cs["state"]["terminated"]
    assert (term["exitCode"], term["reason"]) == (1, "Error")
    assert sim.secs(term["finishedAt"]) == 1
    assert sim.status("api")["phase"] == "Running"  # restartPolicy Always
    assert read_log(sim.cluster, sim.get("api"), "api", False, None, None, False).splitlines()[-1].endswith(
        "FATAL required env DB_URL not set")


def test_crash_loop_back_off_timing_and_status(sim):
    sim.pod("api", sim.api(db_url=None))
    restarts = _restart_times(sim, "api", 700)
    # first restart is immediate (1s sync), then 10s, 20s, 40s, ... after each crash (crash = start + 0.5s)
    gaps = [round(b - a, 1) for a, b in zip(restarts, restarts[1:])]
    assert gaps[:5] == [10.5, 20.5, 40.5, 80.5, 160.5]
    cs = sim.cs("api")
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert cs["state"]["waiting"]["message"].startswith("back-off 5m0s restarting failed container=api pod=api_default(")
    last = cs["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (1, "Error")
    assert sim.secs(last["finishedAt"]) - sim.secs(last["startedAt"]) in (0, 1)
    assert last["containerID"] == cs["containerID"]
    assert cs["ready"] is False and cs["started"] is False
    assert sim.condition("api", "Ready")["reason"] == "ContainersNotReady"
    back_off = sim.events("api", "BackOff")[0]
    assert back_off["type"] == "Warning"
    assert back_off["message"].startswith("Back-off restarting failed container api in pod api_default(")
    assert back_off["count"] == cs["restartCount"]


def test_status_alternates_error_and_crash_loop_back_off(sim):
    sim.pod("api", sim.api(db_url=None))
    seen = []
    for _ in range(120):
        sim.advance(0.5)
        state = sim.cs("api")["state"]
        label = (state.get("waiting") or {}).get("reason") or (state.get("terminated") or {}).get("reason") or "Running"
        if not seen or seen[-1] != label:
            seen.append(label)
    assert seen[:7] == ["ContainerCreating", "Running", "Error", "Running", "Error", "CrashLoopBackOff", "Running"]


def test_logs_previous_shows_the_crashed_instance(sim):
    sim.pod("api", sim.api(db_url=None))
    sim.advance(1.5)
    # the first container is still running: there is no previous one
    try:
        read_log(sim.cluster, sim.get("api"), "api", True, None, None, False)
        raise AssertionError("expected an error")
    except Exception as e:  # noqa: BLE001 - asserting the ApiError below
        assert getattr(e, "code", None) == 400
        assert e.message == 'previous terminated container "api" in pod "api" not found'
    sim.advance(15)
    previous = read_log(sim.cluster, sim.get("api"), "api", True, None, None, False)
    assert previous.splitlines()[-1].endswith("FATAL required env DB_URL not set")
    assert "INFO starting shop-api 1.0" in previous


def test_back_off_resets_after_ten_minutes_of_running(sim):
    sim.pod("sh", {"name": "c", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 700; exit 2"]})
    sim.advance(3000)
    cs = sim.cs("sh")
    # each instance ran for more than 2×5m, so every restart is immediate
    assert cs["restartCount"] == 4
    assert not sim.events("sh", "BackOff")


def test_oom_killed_when_limit_below_working_set(sim):
    sim.pod("oom", sim.api(resources={"limits": {"memory": "64Mi"}}))
    sim.advance(3)
    cs = sim.cs("oom")
    term = (cs["state"].get("terminated") or cs["lastState"].get("terminated"))
    assert (term["exitCode"], term["reason"]) == (137, "OOMKilled")
    sim.advance(200)
    cs = sim.cs("oom")
    assert cs["restartCount"] >= 4
    assert cs["lastState"]["terminated"]["reason"] == "OOMKilled"
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    oom = [e for e in sim.store.list(EVENTS, "default") if e["reason"] == "OOMKilling"]
    assert oom and oom[0]["involvedObject"]["kind"] == "Node"
    assert oom[0]["source"] == {"component": "kernel-monitor", "host": "kubesim-node-1"}
    assert oom[0]["message"].startswith("Memory cgroup out of memory: Killed process ")


def test_memory_growth_oom_after_minutes_with_growing_restarts(sim):
    sim.cluster.profiles.register({"image": "acme/leaky", "tags": ["1"], "ports": [8080],
                                   "memory": {"working_set_mi": 100, "growth_mi_per_min": 10}})
    sim.pod("leak", {"name": "app", "image": "acme/leaky:1", "resources": {"limits": {"memory": "200Mi"}}})
    sim.advance(9 * 60)
    assert "running" in sim.cs("leak")["state"]
    sim.advance(2 * 60)  # (200-100)/10 = 10 minutes after start
    cs = sim.cs("leak")
    assert cs["restartCount"] == 1
    assert cs["lastState"]["terminated"]["reason"] == "OOMKilled"
    started = sim.secs(cs["lastState"]["terminated"]["startedAt"])
    finished = sim.secs(cs["lastState"]["terminated"]["finishedAt"])
    assert 599 <= finished - started <= 601
    sim.advance(25 * 60)
    assert sim.cs("leak")["restartCount"] == 3


def test_restart_policy_never_and_on_failure(sim):
    sim.pod("never", sim.api(db_url=None), restartPolicy="Never")
    sim.pod("onfail", sim.api(db_url=None), restartPolicy="OnFailure")
    sim.pod("done", {"name": "c", "image": "busybox:1.36", "command": ["true"]}, restartPolicy="OnFailure")
    sim.advance(60)
    assert sim.status("never")["phase"] == "Failed"
    assert sim.cs("never")["restartCount"] == 0
    assert sim.condition("never", "Ready")["reason"] == "PodCompleted"
    assert sim.status("onfail")["phase"] == "Running"
    assert sim.cs("onfail")["restartCount"] >= 2
    assert sim.status("done")["phase"] == "Succeeded"
    assert sim.cs("done")["state"]["terminated"]["reason"] == "Completed"


def test_invalid_env_value_against_pattern(sim):
    sim.cluster.profiles.register({"image": "acme/port", "tags": ["1"],
                                   "requires_env": [{"name": "PORT", "pattern": "[0-9]+"}],
                                   "logs": {"fatal_invalid_env": "panic: strconv.Atoi: parsing {value!r}: invalid syntax"}})
    sim.pod("p", {"name": "c", "image": "acme/port:1", "env": [{"name": "PORT", "value": "eighty"}]})
    sim.advance(20)
    assert sim.cs("p")["lastState"]["terminated"]["exitCode"] == 1
    assert read_log(sim.cluster, sim.get("p"), "c", True, None, None, False) == \
        "panic: strconv.Atoi: parsing 'eighty': invalid syntax\n"
