"""The pod table: READY, the STATUS reason logic and RESTARTS exactly as the apiserver's
printPod derives them, so agents read the same signals (CrashLoopBackOff, OOMKilled,
Init:..., Terminating) they would on a real cluster."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .common import (AGE, NAME, Obj, Printer, as_dict, as_int, as_list, col, dig, meta, name, parse_time,
                     since, wide)

POD_COLUMNS = (
    NAME,
    col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
    col("Status", "The aggregate status of the containers in this pod."),
    col("Restarts", "The number of times the containers in this pod have been restarted and when the last "
                    "container in this pod has restarted."),
    AGE,
    wide("IP", "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet "
               "allocated."),
    wide("Node", "NodeName indicates in which node this pod is scheduled."),
    wide("Nominated Node", "nominatedNodeName is set only when this pod preempts other pods on the node."),
    wide("Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness."),
)

NODE_UNREACHABLE_REASON = "NodeLost"


def _restartable(container: Any) -> bool:
    return isinstance(container, dict) and container.get("restartPolicy") == "Always"


def _condition_true(status: dict[str, Any], type_: str) -> bool:
    return any(isinstance(c, dict) and c.get("type") == type_ and c.get("status") == "True"
               for c in as_list(status.get("conditions")))


def _later(current: datetime | None, candidate: Any) -> datetime | None:
    t = parse_time(candidate)
    if t is not None and (current is None or current < t):
        return t
    return current


def _terminated_reason(term: dict[str, Any], prefix: str = "") -> str:
    if term.get("reason"):
        return prefix + str(term["reason"])
    if as_int(term.get("signal")):
        return f"{prefix}Signal:{as_int(term.get('signal'))}"
    return f"{prefix}ExitCode:{as_int(term.get('exitCode'))}"


def pod_summary(pod: Obj, now: datetime) -> tuple[str, str, str]:
    """(READY, STATUS, RESTARTS) cells of one pod."""
    spec = as_dict(pod.get("spec"))
    status = as_dict(pod.get("status"))
    total = len(as_list(spec.get("containers")))
    ready = 0
    restarts = 0
    ri_restarts = 0
    last_restart: datetime | None = None
    last_ri_restart: datetime | None = None

    phase = status.get("phase") or "Pending"
    reason = status.get("reason") or phase
    for cond in as_list(status.get("conditions")):
        if isinstance(cond, dict) and cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"

    init_specs = {c.get("name"): c for c in as_list(spec.get("initContainers")) if isinstance(c, dict)}
    total += sum(1 for c in init_specs.values() if _restartable(c))
    n_init = len(init_specs)

    initializing = False
    for i, cs in enumerate(as_list(status.get("initContainerStatuses"))):
        if not isinstance(cs, dict):
            continue
        state = as_dict(cs.get("state"))
        last_term = as_dict(dig(cs, "lastState", "terminated", default={}))
        count = as_int(cs.get("restartCount"))
        restarts += count
        if "terminated" in as_dict(cs.get("lastState")):
            last_restart = _later(last_restart, last_term.get("finishedAt"))
        restartable = _restartable(init_specs.get(cs.get("name")))
        if restartable:
            ri_restarts += count
            if "terminated" in as_dict(cs.get("lastState")):
                last_ri_restart = _later(last_ri_restart, last_term.get("finishedAt"))
        term = state.get("terminated")
        waiting = state.get("waiting")
        if isinstance(term, dict) and as_int(term.get("exitCode")) == 0:
            continue
        if restartable and cs.get("started") is True:
            if cs.get("ready"):
                ready += 1
            continue
        if isinstance(term, dict):
            reason = _terminated_reason(term, "Init:")
        elif isinstance(waiting, dict) and waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = "Init:" + str(waiting["reason"])
        else:
            reason = f"Init:{i}/{n_init}"
        initializing = True
        break

    if not initializing or _condition_true(status, "Initialized"):
        restarts = ri_restarts
        last_restart = last_ri_restart
        has_running = False
        for cs in reversed(as_list(status.get("containerStatuses"))):
            if not isinstance(cs, dict):
                continue
            restarts += as_int(cs.get("restartCount"))
            if "terminated" in as_dict(cs.get("lastState")):
                last_restart = _later(last_restart, dig(cs, "lastState", "terminated", "finishedAt"))
            state = as_dict(cs.get("state"))
            waiting, term = state.get("waiting"), state.get("terminated")
            if isinstance(waiting, dict) and waiting.get("reason"):
                reason = str(waiting["reason"])
            elif isinstance(term, dict):
                reason = _terminated_reason(term)
            elif cs.get("ready") and isinstance(state.get("running"), dict):
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true(status, "Ready") else "NotReady"

    if meta(pod).get("deletionTimestamp"):
        if status.get("reason") == NODE_UNREACHABLE_REASON:
            reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            reason = "Terminating"

    restarts_cell = str(restarts)
    if restarts != 0 and last_restart is not None:
        restarts_cell = f"{restarts} ({since(last_restart, now)} ago)"
    return f"{ready}/{total}", str(reason), restarts_cell


def _pod_ip(status: dict[str, Any]) -> str:
    ips = [p for p in as_list(status.get("podIPs")) if isinstance(p, dict) and p.get("ip")]
    if ips:
        return str(ips[0]["ip"])
    return str(status.get("podIP") or "<none>")


def _readiness_gates(spec: dict[str, Any], status: dict[str, Any]) -> str:
    gates = [g for g in as_list(spec.get("readinessGates")) if isinstance(g, dict)]
    if not gates:
        return "<none>"
    true = 0
    for gate in gates:
        for cond in as_list(status.get("conditions")):
            if isinstance(cond, dict) and cond.get("type") == gate.get("conditionType"):
                true += cond.get("status") == "True"
                break
    return f"{true}/{len(gates)}"


def pod_cells(pod: Obj, now: datetime) -> list[Any]:
    spec = as_dict(pod.get("spec"))
    status = as_dict(pod.get("status"))
    ready, reason, restarts = pod_summary(pod, now)
    return [
        name(pod), ready, reason, restarts, since(meta(pod).get("creationTimestamp"), now),
        _pod_ip(status),
        str(spec.get("nodeName") or "<none>"),
        str(status.get("nominatedNodeName") or "<none>"),
        _readiness_gates(spec, status),
    ]


def pod_conditions(pod: Obj) -> list[dict[str, str]] | None:
    """Row conditions the server marks finished pods with."""
    phase = dig(pod, "status", "phase")
    if phase == "Succeeded":
        return [{"type": "Completed", "status": "True", "reason": "Succeeded",
                 "message": "The pod has completed successfully."}]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return None


POD_PRINTER = Printer(POD_COLUMNS, pod_cells, pod_conditions)
