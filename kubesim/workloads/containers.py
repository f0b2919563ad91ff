"""The per-container state machine: pull → configure → run → exit → back-off → restart.

Each transition happens at a scheduled sim instant (``ContainerRuntime.next_at``); ``drive``
replays every transition due up to now in order, so the timeline (and every timestamp in the
status) is the same whether the cluster is reconciled once a second or once an hour.
"""

from __future__ import annotations

import hashlib

from ..resources import NODES
from . import behaviour, probes
from .behaviour import Run
from .commands import ScriptContext
from .context import SYNC_DELAY, SyncContext
from .logstream import LogStream
from .podconfig import ConfigError, resolve_env, resolve_files
from .profiles import Resolution
from .runtime import ContainerRuntime, Terminated, at_ms, due, go_duration

CREATED, PULLING, PULL_ERROR, CONFIG_ERROR = "created", "pulling", "pull_error", "config_error"
RUNNING, EXITED, BACKOFF, DONE = "running", "exited", "backoff", "done"
PHASES = (CREATED, PULLING, PULL_ERROR, CONFIG_ERROR, RUNNING, EXITED, BACKOFF, DONE)
CONFIG_RETRY = 10.0
MAX_STEPS = 10_000


def _hex(*parts: object, n: int = 64) -> str:
    return hashlib.sha256("/".join(str(p) for p in parts).encode()).hexdigest()[:n]


def default_pull_policy(image: str, resolution: Resolution) -> str:
    tag = resolution.ref.tag
    return "Always" if (tag is None and not resolution.ref.digest) or tag == "latest" else "IfNotPresent"


def _waiting(c: ContainerRuntime, reason: str | None, message: str | None = None) -> None:
    c.waiting_reason, c.waiting_message = reason, message


# -- transitions ----------------------------------------------------------------------------

def begin(sc: SyncContext, c: ContainerRuntime, t: float) -> None:
    """Try to (re)start: make sure the image is on the node, then configure and start."""
    spec = sc.spec_of(c)
    c.image = str(spec.get("image") or "")
    res = sc.cluster.profiles.resolve(c.image)
    policy = str(spec.get("imagePullPolicy") or default_pull_policy(c.image, res))
    cache = sc.cluster.runtime.images.setdefault(sc.node.name, set())
    present = res.profile is not None and res.ref.full_name in cache
    if policy != "Always" and present:
        sc.event(c, "Normal", "Pulled", f'Container image "{c.image}" already present on machine')
        create(sc, c, t)
        return
    if policy == "Never":
        msg = f'Container image "{c.image}" is not present with pull policy of Never'
        _waiting(c, "ErrImageNeverPull", msg)
        sc.event(c, "Warning", "Failed", "Error: ErrImageNeverPull")
        c.phase, c.next_at = PULL_ERROR, at_ms(t + CONFIG_RETRY)
        return
    sc.event(c, "Normal", "Pulling", f'Pulling image "{c.image}"')
    if c.attempts == 0 and c.waiting_reason in (None, "PodInitializing"):
        _waiting(c, "ContainerCreating")
    duration = res.profile.pull_duration(c.image) if res.profile else 0.4 + int(_hex(c.image, n=4), 16) % 800 / 1000
    c.pull_started = t
    c.phase, c.next_at = PULLING, at_ms(t + duration)


def _pull_error(res: Resolution) -> str:
    full = res.ref.full_name
    if res.problem == "unknown_tag":
        return (f'rpc error: code = NotFound desc = failed to pull and unpack image "{full}": '
                f'failed to resolve reference "{full}": {full}: not found')
    return (f'rpc error: code = Unknown desc = failed to pull and unpack image "{full}": failed to resolve reference '
            f'"{full}": pull access denied, repository does not exist or may require authorization: '
            f"server message: insufficient_scope: authorization failed")


def pulled(sc: SyncContext, c: ContainerRuntime, t: float, started_pull: float) -> None:
    res = sc.cluster.profiles.resolve(c.image)
    if res.profile is None:
        err = _pull_error(res)
        sc.event(c, "Warning", "Failed", f'Failed to pull image "{c.image}": {err}')
        sc.event(c, "Warning", "Failed", "Error: ErrImagePull")
        _waiting(c, "ErrImagePull", err)
        c.pull_backoff.next(t)
        c.phase, c.next_at = PULL_ERROR, at_ms(t + SYNC_DELAY)
        return
    sc.cluster.runtime.images.setdefault(sc.node.name, set()).add(res.ref.full_name)
    took = max(0.0, t - started_pull)
    size = res.profile.size_bytes(c.image)
    sc.event(c, "Normal", "Pulled", f'Successfully pulled image "{c.image}" in {took:.3f}s ({took:.3f}s including '
                                    f"waiting). Image size: {size} bytes.")
    c.pull_backoff.delay = 0.0
    create(sc, c, t)


def pull_error_step(sc: SyncContext, c: ContainerRuntime, t: float) -> None:
    failed_at = c.pull_backoff.last_update
    if c.waiting_reason == "ErrImagePull" and c.pull_backoff.in_backoff_since(failed_at, t):
        msg = f'Back-off pulling image "{c.image}"'
        _waiting(c, "ImagePullBackOff", msg)
        sc.event(c, "Normal", "BackOff", msg)
        sc.event(c, "Warning", "Failed", "Error: ImagePullBackOff")
        c.next_at = at_ms(failed_at + c.pull_backoff.delay)
        return
    begin(sc, c, t)


def config_ready(sc: SyncContext, c: ContainerRuntime) -> bool:
    try:
        resolve_env(sc.cluster.store, sc.pod, sc.spec_of(c), sc.pr.pod_ip or "", sc.node.host_ip,
                    sc.node.cpu_millis, sc.node.memory_bytes)
        return True
    except ConfigError:
        return False


def create(sc: SyncContext, c: ContainerRuntime, t: float) -> None:
    spec = sc.spec_of(c)
    try:
        env = resolve_env(sc.cluster.store, sc.pod, spec, sc.pr.pod_ip or "", sc.node.host_ip,
                          sc.node.cpu_millis, sc.node.memory_bytes)
    except ConfigError as e:
        _waiting(c, "CreateContainerConfigError", str(e))
        sc.event(c, "Warning", "Failed", f"Error: {e}")
        c.phase, c.next_at = CONFIG_ERROR, at_ms(t + CONFIG_RETRY)
        return
    files, _ = resolve_files(sc.cluster.store, sc.pod, spec)
    start(sc, c, t, env, files)


def start(sc: SyncContext, c: ContainerRuntime, t: float, env: dict[str, str], files: dict[str, str]) -> None:
    res = sc.cluster.profiles.resolve(c.image)
    profile = res.profile
    assert profile is not None
    c.attempts += 1
    cid = "containerd://" + _hex(sc.seed, sc.pr.uid, c.name, c.attempts)
    c.container_id = cid
    c.image_resolved = res.ref.full_name
    full = res.ref.full_name
    repo = full.split("@", 1)[0] if res.ref.digest else full.rsplit(":", 1)[0]
    c.image_id = f"{repo}@sha256:{_hex('image', profile.image, res.ref.tag or res.ref.digest)}"
    spec = sc.spec_of(c)
    mem_limit, cpu_limit = behaviour.container_limits(spec)
    fields = {"pod": sc.pr.name, "namespace": sc.namespace, "container": c.name, "pod_ip": sc.pr.pod_ip or "",
              "host_ip": sc.node.host_ip, "node": sc.node.name, "image": c.image, "tag": res.ref.tag or "latest",
              "port": profile.ports[0] if profile.ports else "", "env": _Env(env)}
    stream = LogStream(cid, f"{sc.seed}/{sc.pr.uid}/{c.name}/{c.attempts}", sc.cluster.clock.at, fields)
    run = Run(container_id=cid, started_at=t, env=dict(env), files=dict(files), profile=profile, app=True,
              listen_at=at_ms(t + behaviour.startup_seconds(profile, cpu_limit)),
              memory_limit=mem_limit or sc.node.memory_bytes, cpu_limit_millis=cpu_limit, stream=stream)
    run.script_ctx = ScriptContext(env=dict(env), files=dict(files), hostname=sc.pr.name, namespace=sc.namespace,
                                   resolve=sc.resolve,
                                   date=lambda off, t0=t: sc.cluster.clock.at(t0 + off).strftime("%a %b %d %H:%M:%S UTC %Y"))
    behaviour.plan_run(run, spec)
    c.run = run
    c.streams[cid] = stream
    c.keep_streams()
    _waiting(c, None)
    sc.event(c, "Normal", "Created", f"Created container {c.name}")
    if run.start_error:
        sc.event(c, "Warning", "Failed", f"Error: {run.start_error}")
    else:
        sc.event(c, "Normal", "Started", f"Started container {c.name}")
    c.phase = RUNNING
    probes.start(sc, c, t)
    _schedule_running(c)


class _Env(dict):
    def __missing__(self, key: str) -> str:
        return ""


def _schedule_running(c: ContainerRuntime) -> None:
    run = c.run
    times = [x for x in (run.exit_at if run else None, probes.next_tick(c)) if x is not None]
    c.next_at = min(times) if times else None


def terminate(sc: SyncContext, c: ContainerRuntime, t: float, code: int, reason: str, message: str | None = None) -> None:
    run = c.run
    assert run is not None
    run.stream.finish(t)
    started = None if run.start_error else run.started_at
    c.deaths.append(Terminated(code, reason, started, t, run.container_id, message))
    del c.deaths[:-3]
    c.run = None
    c.ready = c.started = False
    c.probes = {}
    c.keep_streams()
    if reason == "OOMKilled":
        sc.cluster.events.record(
            sc.cluster.store.find(NODES, "", sc.node.name) or {"kind": "Node", "apiVersion": "v1",
                                                               "metadata": {"name": sc.node.name}},
            "Warning", "OOMKilling",
            f"Memory cgroup out of memory: Killed process {1000 + int(_hex(run.container_id, n=4), 16) % 30000} "
            f"({run.profile.image.rsplit('/', 1)[-1]}) total-vm:{run.memory_limit // 1024 + 150000}kB, "
            f"anon-rss:{run.memory_limit // 1024}kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1024kB "
            f"oom_score_adj:{_oom_score_adj(sc)}",
            "kernel-monitor", host=sc.node.name)
    c.phase, c.next_at = EXITED, at_ms(t + SYNC_DELAY)


def _oom_score_adj(sc: SyncContext) -> int:
    qos = (sc.pod.get("status") or {}).get("qosClass")
    return {"Guaranteed": -997, "BestEffort": 1000}.get(str(qos), 999)


def kill(sc: SyncContext, c: ContainerRuntime, t: float, message: str) -> None:
    """The kubelet stops a running container (probe failure, spec change, pod deletion)."""
    run = c.run
    assert run is not None
    sc.event(c, "Normal", "Killing", message)
    run.stream.truncate_after(t)
    run.stream.stop_periodic(t)
    run.stream.add_many(t, run.profile.logs.shutdown if run.app else ())
    code = run.profile.exit_codes.sigterm if run.app else 137
    terminate(sc, c, t, code, "Completed" if code == 0 else "Error")


def should_restart(sc: SyncContext, c: ContainerRuntime, exit_code: int) -> bool:
    policy = sc.restart_policy()
    if c.init:
        return exit_code != 0 and policy != "Never"
    return policy == "Always" or (policy == "OnFailure" and exit_code != 0)


def exited_step(sc: SyncContext, c: ContainerRuntime, t: float) -> None:
    death = c.deaths[-1]
    if not should_restart(sc, c, death.exit_code):
        c.phase, c.next_at = DONE, None
        if c.init and death.exit_code == 0:
            c.finished_at = t
        return
    if c.crash_backoff.in_backoff_since(death.finished_at, t):
        delay = go_duration(c.crash_backoff.delay)
        _waiting(c, "CrashLoopBackOff", f"back-off {delay} restarting failed container={c.name} pod={sc.pod_ref}")
        sc.event(c, "Warning", "BackOff", f"Back-off restarting failed container {c.name} in pod {sc.pod_ref}")
        c.phase, c.next_at = BACKOFF, at_ms(death.finished_at + c.crash_backoff.delay)
        return
    c.crash_backoff.next(death.finished_at)
    begin(sc, c, t)


def backoff_step(sc: SyncContext, c: ContainerRuntime, t: float) -> None:
    c.crash_backoff.next(c.deaths[-1].finished_at)
    begin(sc, c, t)


def running_step(sc: SyncContext, c: ContainerRuntime, t: float) -> None:
    run = c.run
    assert run is not None
    if due(run.exit_at, t) and (probes.next_tick(c) is None or run.exit_at <= probes.next_tick(c)):
        terminate(sc, c, run.exit_at, run.exit_code, run.exit_reason, run.exit_message)
        return
    tripped = probes.tick(sc, c, t)
    if tripped:
        kill(sc, c, t, f"Container {c.name} failed {tripped} probe, will be restarted")
        return
    _schedule_running(c)


def step(sc: SyncContext, c: ContainerRuntime, t: float) -> None:
    """Perform the transition scheduled for ``t``."""
    if c.phase == CREATED:
        begin(sc, c, t)
    elif c.phase == PULLING:
        pulled(sc, c, t, c.pull_started)
    elif c.phase == PULL_ERROR:
        pull_error_step(sc, c, t)
    elif c.phase == CONFIG_ERROR:
        begin(sc, c, t)
    elif c.phase == RUNNING:
        running_step(sc, c, t)
    elif c.phase == EXITED:
        exited_step(sc, c, t)
    elif c.phase == BACKOFF:
        backoff_step(sc, c, t)


def drive(sc: SyncContext, c: ContainerRuntime, now: float) -> None:
    """Replay every transition due up to ``now``."""
    for _ in range(MAX_STEPS):
        if not due(c.next_at, now):
            return
        t = c.next_at
        assert t is not None
        c.next_at = None
        step(sc, c, t)
