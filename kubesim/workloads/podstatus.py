"""Pod status as the kubelet reports it, derived from the node's runtime state.

Follows the kubelet's rules: container states and lastState (a crash-looping container shows
``waiting: CrashLoopBackOff`` with the crash in ``lastState``), phase from the container counts
(kubelet getPhase), conditions with transition times, and the QoS class.
"""

from __future__ import annotations

from typing import Any

from ..clock import rfc3339
from .containers import BACKOFF, CONFIG_ERROR, CREATED, DONE, EXITED, PULL_ERROR, PULLING, RUNNING
from .context import SyncContext
from .runtime import ContainerRuntime, Terminated
from .units import parse_cpu_millis, parse_memory_bytes

EPOCH = "1970-01-01T00:00:00Z"


def _ts(sc: SyncContext, t: float) -> str:
    return rfc3339(sc.cluster.clock.at(t))


def _terminated(sc: SyncContext, d: Terminated) -> dict[str, Any]:
    out: dict[str, Any] = {"exitCode": d.exit_code, "reason": d.reason}
    if d.message:
        out["message"] = d.message
    out["startedAt"] = EPOCH if d.started_at is None else _ts(sc, d.started_at)
    out["finishedAt"] = _ts(sc, d.finished_at)
    out["containerID"] = d.container_id
    return out


def init_done(c: ContainerRuntime) -> bool:
    return c.phase == DONE and bool(c.deaths) and c.deaths[-1].exit_code == 0


def container_status(sc: SyncContext, c: ContainerRuntime, initializing: bool) -> dict[str, Any]:
    spec = sc.spec_of(c)
    state: dict[str, Any]
    last: Terminated | None = None
    if c.phase == RUNNING and c.run is not None:
        state = {"running": {"startedAt": _ts(sc, c.run.started_at)}}
        last = c.last_death
    elif c.phase in (EXITED, DONE) and c.deaths:
        state = {"terminated": _terminated(sc, c.deaths[-1])}
        last = c.deaths[-2] if len(c.deaths) > 1 else None
    else:
        reason = c.waiting_reason
        if c.phase == CREATED or (c.phase == PULLING and not reason):
            reason = "PodInitializing" if (initializing or c.init) and c.phase == CREATED else "ContainerCreating"
        waiting: dict[str, Any] = {"reason": reason}
        if c.waiting_message and c.phase in (PULL_ERROR, CONFIG_ERROR, BACKOFF, PULLING):
            waiting["message"] = c.waiting_message
        state = {"waiting": waiting}
        last = c.last_death
    status: dict[str, Any] = {
        "name": c.name,
        "state": state,
        "lastState": {"terminated": _terminated(sc, last)} if last else {},
        "ready": init_done(c) if c.init else bool(c.ready and c.phase == RUNNING),
        "restartCount": c.restart_count,
        "image": c.image_resolved if c.image_resolved and c.image == spec.get("image") else str(spec.get("image", "")),
        "imageID": c.image_id if c.image == spec.get("image") else "",
    }
    cid = c.container_id if c.phase == RUNNING else (c.deaths[-1].container_id if c.deaths else None)
    if cid:
        status["containerID"] = cid
    status["started"] = bool(c.started and c.phase == RUNNING)
    return status


def pod_phase(sc: SyncContext) -> str:
    pr = sc.pr
    policy = sc.restart_policy()
    for c in pr.init:
        if init_done(c):
            continue
        if c.phase == DONE and policy == "Never":
            return "Failed"
        return "Pending"
    running = waiting = stopped = succeeded = 0
    for c in pr.containers:
        if c.phase == RUNNING:
            running += 1
        elif c.phase in (EXITED, DONE):
            stopped += 1
            succeeded += 1 if c.deaths and c.deaths[-1].exit_code == 0 else 0
        elif c.deaths:
            stopped += 1
        else:
            waiting += 1
    if waiting:
        return "Pending"
    if running:
        return "Running"
    if stopped:
        if policy == "Always":
            return "Running"
        if stopped == succeeded:
            return "Succeeded"
        if policy == "Never":
            return "Failed"
        return "Running"
    return "Pending"


def qos_class(pod: dict[str, Any]) -> str:
    spec = pod.get("spec") or {}
    containers = [c for c in (spec.get("containers") or []) + (spec.get("initContainers") or []) if isinstance(c, dict)]
    any_set, guaranteed = False, True
    for c in containers:
        res = c.get("resources") or {}
        requests, limits = res.get("requests") or {}, res.get("limits") or {}
        for name in ("cpu", "memory"):
            req, lim = requests.get(name, limits.get(name)), limits.get(name)
            if req is not None or lim is not None:
                any_set = True
            if lim is None or req is None:
                guaranteed = False
                continue
            parse = parse_cpu_millis if name == "cpu" else parse_memory_bytes
            if parse(req) != parse(lim):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _condition(sc: SyncContext, type_: str, ok: bool, now: float, reason: str | None = None,
               message: str | None = None) -> dict[str, Any]:
    status = "True" if ok else "False"
    prev = sc.pr.conditions.get(type_)
    if prev is None or prev[0] != status:
        sc.pr.conditions[type_] = (status, now)
    cond: dict[str, Any] = {"type": type_, "status": status,
                            "lastTransitionTime": _ts(sc, sc.pr.conditions[type_][1])}
    if not ok and reason:
        cond["reason"] = reason
    if not ok and message:
        cond["message"] = message
    return cond


def build_status(sc: SyncContext, now: float) -> dict[str, Any]:
    pr = sc.pr
    old = sc.pod.get("status") or {}
    phase = pod_phase(sc)
    pending_init = [c.name for c in pr.init if not init_done(c)]
    initializing = bool(pending_init)
    finished = phase in ("Succeeded", "Failed")
    unready = sorted(c.name for c in pr.containers if not (c.ready and c.phase == RUNNING))
    conditions = [
        _condition(sc, "PodReadyToStartContainers", pr.sandbox_at is not None and not finished, now),
        _condition(sc, "Initialized", not initializing, now, "ContainersNotInitialized",
                   f"containers with incomplete status: [{' '.join(pending_init)}]"),
    ]
    ready_reason = "PodCompleted" if finished else "ContainersNotReady"
    ready_msg = None if finished else f"containers with unready status: [{' '.join(unready)}]"
    conditions.append(_condition(sc, "Ready", not unready and not finished, now, ready_reason, ready_msg))
    conditions.append(_condition(sc, "ContainersReady", not unready and not finished, now, ready_reason, ready_msg))
    scheduled = next((c for c in old.get("conditions") or [] if isinstance(c, dict) and c.get("type") == "PodScheduled"),
                     None)
    if scheduled is None or scheduled.get("status") != "True":
        scheduled = {"type": "PodScheduled", "status": "True", "lastTransitionTime": _ts(sc, pr.seen_at)}
    conditions.append(scheduled)
    status: dict[str, Any] = {"phase": phase, "conditions": conditions, "hostIP": sc.node.host_ip,
                              "hostIPs": [{"ip": sc.node.host_ip}]}
    if pr.pod_ip:
        status["podIP"] = pr.pod_ip
        status["podIPs"] = [{"ip": pr.pod_ip}]
    status["startTime"] = _ts(sc, pr.seen_at)
    if pr.init:
        status["initContainerStatuses"] = [container_status(sc, c, True) for c in pr.init]
    status["containerStatuses"] = [container_status(sc, c, initializing)
                                   for c in sorted(pr.containers, key=lambda c: c.name)]
    status["qosClass"] = old.get("qosClass") or qos_class(sc.pod)
    for key in ("reason", "message", "nominatedNodeName"):
        if key in old:
            status[key] = old[key]
    return status
