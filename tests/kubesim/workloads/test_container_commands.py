"""Command-driven images (busybox), run-to-completion images, init containers, wrong binaries."""

from __future__ import annotations

from kubesim.workloads.commands import ScriptContext, run_argv
from kubesim.workloads.logs import read_log


def _log(sim, name, container=None, previous=False):
    return read_log(sim.cluster, sim.get(name), container, previous, None, None, False)


def _ctx(**services):
    return ScriptContext(env={"NAME": "world"}, files={"/etc/motd": "hello\n"}, hostname="pod-1", namespace="ns",
                         resolve=lambda host: services.get(host.split(".")[0]))


def test_interpreter_sequences_sleep_echo_exit():
    out = run_argv(["sh", "-c", 'echo "hi $NAME"; sleep 2; echo done && exit 3; echo never'], _ctx())
    assert out.kind == "exit" and out.exit_code == 3 and out.end == 2
    assert out.lines == [(0, "hi world"), (2, "done")]


def test_interpreter_loops_and_failures():
    forever = run_argv(["sh", "-c", "while true; do echo tick; sleep 5; done"], _ctx())
    assert forever.kind == "forever" and forever.periodic == (0.0, 5.0, "tick")
    assert run_argv(["sleep", "infinity"], _ctx()).kind == "forever"
    assert run_argv(["sh", "-c", "tail -f /dev/null"], _ctx()).kind == "forever"
    missing = run_argv(["sh", "-c", "frobnicate --now"], _ctx())
    assert (missing.exit_code, missing.lines) == (127, [(0, "sh: frobnicate: not found")])
    assert run_argv(["cat", "/etc/motd"], _ctx()).lines == [(0, "hello")]
    assert run_argv(["sh", "-c", "cat /nope || exit 4"], _ctx()).exit_code == 4
    assert run_argv(["sh"], _ctx()).kind == "exit"  # no script, no tty: exits 0
    assert run_argv(["sh", "-c", "[ -f /etc/motd ] && echo yes"], _ctx()).lines == [(0, "yes")]
    blocked = run_argv(["sh", "-c", "until nslookup db; do echo waiting; sleep 2; done; echo ready"], _ctx())
    assert blocked.kind == "blocked" and blocked.blocked_on == "db"
    resolved = run_argv(["sh", "-c", "until nslookup db; do sleep 2; done; echo ready"], _ctx(db="10.96.0.7"))
    assert resolved.kind == "exit" and resolved.lines[-1] == (0, "ready")


def test_busybox_runs_its_command(sim):
    sim.pod("bb", {"name": "sh", "image": "busybox:1.36",
                   "command": ["sh", "-c", "echo start; sleep 5; echo bye; exit 3"]}, restartPolicy="Never")
    sim.advance(3)
    assert "running" in sim.cs("bb")["state"]
    assert _log(sim, "bb") == "start\n"
    sim.advance(5)
    term = sim.cs("bb")["state"]["terminated"]
    assert (term["exitCode"], term["reason"]) == (3, "Error")
    assert sim.status("bb")["phase"] == "Failed"
    assert _log(sim, "bb") == "start\nbye\n"


def test_busybox_args_replace_default_command(sim):
    sim.pod("args", {"name": "sh", "image": "busybox:1.36", "args": ["sh", "-c", "echo from args"]},
            restartPolicy="Never")
    sim.pod("bare", {"name": "sh", "image": "busybox:1.36"})
    sim.advance(30)
    assert _log(sim, "args") == "from args\n"
    # a bare busybox runs "sh", which exits at once: a Deployment of it crash-loops with Completed
    cs = sim.cs("bare")
    assert cs["lastState"]["terminated"]["reason"] == "Completed"
    assert cs["restartCount"] >= 2


def test_while_loop_logs_grow_lazily_from_the_clock(sim):
    sim.pod("loop", {"name": "sh", "image": "busybox:1.36",
                     "command": ["sh", "-c", "while true; do echo ping; sleep 10; done"]})
    sim.advance(3601)
    lines = _log(sim, "loop").splitlines()
    assert lines[:2] == ["ping", "ping"] and len(lines) == 361
    sim.advance(7 * 24 * 3600)  # a week: the ring buffer keeps the last 5000 lines, nothing is stored per line
    assert len(_log(sim, "loop").splitlines()) == 5000


def test_job_image_runs_to_completion(sim):
    sim.pod("pi", {"name": "pi", "image": "perl:5.34.0", "command": ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]},
            restartPolicy="Never")
    sim.advance(10)
    assert sim.status("pi")["phase"] == "Running"
    sim.advance(10)
    st = sim.status("pi")
    assert st["phase"] == "Succeeded"
    term = sim.cs("pi")["state"]["terminated"]
    assert (term["exitCode"], term["reason"]) == (0, "Completed")
    assert _log(sim, "pi").startswith("3.14159265358979")
    assert sim.condition("pi", "Ready")["reason"] == "PodCompleted"


def test_init_container_blocks_until_service_exists(sim):
    sim.pod("app", {"name": "web", "image": "nginx:1.25"},
            initContainers=[{"name": "wait-db", "image": "busybox:1.36",
                             "command": ["sh", "-c", "until nslookup db; do echo waiting for db; sleep 2; done"]}])
    sim.advance(30)
    st = sim.status("app")
    assert st["phase"] == "Pending"
    assert sim.cs("app", init=True)["state"]["running"]
    assert sim.cs("app")["state"] == {"waiting": {"reason": "PodInitializing"}}
    init = sim.condition("app", "Initialized")
    assert (init["status"], init["reason"], init["message"]) == (
        "False", "ContainersNotInitialized", "containers with incomplete status: [wait-db]")
    assert "** server can't find db.default.svc.cluster.local: NXDOMAIN" in _log(sim, "app", "wait-db")
    sim.service("db")
    sim.advance(8)
    assert sim.cs("app", init=True)["state"]["terminated"]["reason"] == "Completed"
    assert sim.cs("app", init=True)["ready"] is True
    assert sim.status("app")["phase"] == "Running" and sim.cs("app")["ready"] is True


def test_failing_init_container_crash_loops_and_blocks_app(sim):
    sim.pod("app", {"name": "web", "image": "nginx:1.25"},
            initContainers=[{"name": "migrate", "image": "busybox:1.36", "command": ["sh", "-c", "echo boom; exit 1"]}])
    sim.advance(60)
    init = sim.cs("app", init=True)
    assert init["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert init["lastState"]["terminated"]["exitCode"] == 1 and init["restartCount"] >= 2
    assert sim.status("app")["phase"] == "Pending"
    assert sim.cs("app")["state"]["waiting"]["reason"] == "PodInitializing"
    assert sim.events("app", "BackOff")[0]["involvedObject"]["fieldPath"] == "spec.initContainers{migrate}"


def test_init_containers_run_in_order(sim):
    sim.pod("seq", {"name": "web", "image": "nginx:1.25"},
            initContainers=[{"name": "one", "image": "busybox:1.36", "command": ["sleep", "5"]},
                            {"name": "two", "image": "busybox:1.36", "command": ["sleep", "5"]}])
    sim.advance(60)
    one, two = sim.cs("seq", "one", init=True), sim.cs("seq", "two", init=True)
    assert sim.secs(two["state"]["terminated"]["startedAt"]) >= sim.secs(one["state"]["terminated"]["finishedAt"])
    assert sim.cs("seq")["ready"] is True


def test_wrong_binary_is_a_start_error(sim):
    sim.pod("geo", sim.api(command=["/app/geo"]))
    sim.advance(30)
    cs = sim.cs("geo")
    last = cs["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (128, "StartError")
    assert last["startedAt"] == "1970-01-01T00:00:00Z"
    assert 'exec: "/app/geo": executable file not found in $PATH' in last["message"]
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    failed = sim.messages("geo", "Failed")
    assert failed and failed[0].startswith("Error: failed to create containerd task")
    assert not sim.events("geo", "Started")
    # the image's own entrypoint is fine
    sim.pod("ok", sim.api(command=["/app/api"], args=["--port=8080"]))
    sim.advance(5)
    assert sim.cs("ok")["ready"] is True
