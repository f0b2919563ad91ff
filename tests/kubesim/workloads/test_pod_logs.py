"""pods/log: selection, tail/limit/timestamps/since, error wording, determinism."""

from __future__ import annotations

import re

import pytest

from kubesim.errors import ApiError
from kubesim.workloads.logs import read_log


def _read(sim, name, container=None, previous=False, tail=None, limit=None, ts=False, **kw):
    return read_log(sim.cluster, sim.get(name), container, previous, tail, limit, ts, **kw)


def _instant(stamp):
    base, _, frac = stamp[:-1].partition(".")
    return base, int(frac.ljust(9, "0"))


def _error(sim, name, container=None, previous=False):
    with pytest.raises(ApiError) as err:
        _read(sim, name, container, previous)
    assert err.value.code == 400 and err.value.reason == "BadRequest"
    return err.value.message


def test_container_selection_errors(sim):
    sim.pod("two", [{"name": "a", "image": "nginx:1.25"}, {"name": "b", "image": "nginx:1.25"}],
            initContainers=[{"name": "i", "image": "busybox:1.36", "command": ["true"]}])
    assert _error(sim, "two") == ("a container name must be specified for pod two, choose one of: [a b] "
                                  "or one of the init containers: [i]")
    assert _error(sim, "two", "zzz") == "container zzz is not valid for pod two"


def test_waiting_container_messages(sim):
    sim.pod("new", {"name": "c", "image": "nginx:1.25"})
    assert _error(sim, "new", "c") == 'container "c" in pod "new" is waiting to start: ContainerCreating'
    sim.pod("init", {"name": "c", "image": "nginx:1.25"},
            initContainers=[{"name": "i", "image": "busybox:1.36", "command": ["sleep", "100"]}])
    sim.advance(2)
    assert _error(sim, "init", "c") == 'container "c" in pod "init" is waiting to start: PodInitializing'


def test_unscheduled_pod_has_empty_log(sim):
    sim.pod("huge", {"name": "c", "image": "nginx:1.25", "resources": {"requests": {"memory": "1Ti"}}})
    assert _read(sim, "huge") == ""


def test_tail_limit_timestamps_and_since(sim):
    sim.pod("web", {"name": "web", "image": "nginx:1.25"})
    sim.advance(300)
    full = _read(sim, "web").splitlines()
    assert full[0].startswith("/docker-entrypoint.sh:") and len(full) > 30
    assert _read(sim, "web", tail=3).splitlines() == full[-3:]
    assert _read(sim, "web", tail=0) == ""
    assert _read(sim, "web", limit=20) == "\n".join(full)[:20]
    stamped = _read(sim, "web", ts=True).splitlines()
    assert len(stamped) == len(full)
    for line, plain in zip(stamped, full):
        stamp, _, rest = line.partition(" ")
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z", stamp), stamp
        assert rest == plain
    instants = [_instant(line.split(" ", 1)[0]) for line in stamped]
    assert instants == sorted(instants) and len(set(instants)) == len(instants)
    assert _read(sim, "web", ts=True, tail=2).splitlines() == stamped[-2:]
    recent = _read(sim, "web", since_seconds=60).splitlines()
    assert 5 <= len(recent) <= 7  # one access-log line every 10s
    with pytest.raises(ApiError):
        _read(sim, "web", since_time="yesterday")


def test_logs_are_deterministic_per_seed(sim, make_sim):
    sim.pod("svc", {"name": "app", "image": "kubesim/http-service:1.0"})
    sim.advance(600)
    other = make_sim()
    other.pod("svc", {"name": "app", "image": "kubesim/http-service:1.0"})
    other.advance(600)
    strip = [line.split(" ", 1)[1] for line in _read(sim, "svc").splitlines()]
    assert strip == [line.split(" ", 1)[1] for line in _read(other, "svc").splitlines()]
    assert any("duration=" in line for line in strip)


def test_current_log_of_crash_looping_container_is_the_last_crash(sim):
    sim.pod("api", sim.api(db_url=None))
    sim.advance(20)
    state = sim.cs("api")["state"]
    assert "waiting" in state
    current = _read(sim, "api", "api")
    previous = _read(sim, "api", "api", previous=True)
    assert current == previous and current.splitlines()[-1].endswith("FATAL required env DB_URL not set")


def test_previous_of_running_restarted_container(sim):
    sim.pod("sh", {"name": "c", "image": "busybox:1.36", "command": ["sh", "-c", "echo run; date; sleep 30; exit 1"]})
    sim.advance(35)
    assert "running" in sim.cs("sh")["state"]
    current, previous = _read(sim, "sh", "c").splitlines(), _read(sim, "sh", "c", previous=True).splitlines()
    assert current[0] == previous[0] == "run"
    assert current[1] != previous[1]  # `date` printed different times


def test_json_log_templates_keep_their_braces(sim):
    sim.cluster.profiles.register({
        "image": "acme/json", "tags": ["1"],
        "logs": {"ready": ['{"level":"info","msg":"listening","pod":"{pod}","db":"{env[DB_URL]}"}'],
                 "running": ['{"level":"info","msg":"GET /","ms":{ms}}'], "running_period_seconds": 5}})
    sim.pod("j", {"name": "c", "image": "acme/json:1", "env": [{"name": "DB_URL", "value": "pg://x"}]})
    sim.advance(12)
    lines = _read(sim, "j").splitlines()
    assert lines[0] == '{"level":"info","msg":"listening","pod":"j","db":"pg://x"}'
    assert re.fullmatch(r'\{"level":"info","msg":"GET /","ms":\d+\}', lines[1])
