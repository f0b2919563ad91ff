"""Application log lines that name the failing dependency, written into the kubelet's log buffers.

``workloads.logs`` only reads logs, so ``append_line`` is the write hook: it adds a line to the
running container instance's LogStream (the same buffer ``kubectl logs`` reads). Each scrape
interval logs at most a few lines per distinct failure, spread over the interval, so a failing
dependency is visible at once without flooding the bounded buffer.
"""

from __future__ import annotations

from typing import Any

from ..workloads.logstream import render_template, stable_int
from .appmetrics import Failure
from .graph import Instance

MAX_LINES_PER_FAILURE = 3


def append_line(cluster: Any, pod_uid: str, container: str, t: float, text: str) -> bool:
    """Append ``text`` at sim time ``t`` to the container's current log; False when it is not running."""
    pr = cluster.runtime.get(pod_uid)
    c = pr.container(container) if pr is not None else None
    run = c.run if c is not None else None
    if run is None or t < run.started_at:
        return False
    run.stream.add(round(t, 3), text, raw=True)
    return True


def _time_fields(cluster: Any, t: float) -> dict[str, Any]:
    when = cluster.clock.at(t)
    return {"now": when, "time": when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"}


def render(cluster: Any, inst: Instance, template: str, t: float, message: str) -> str:
    fields = _time_fields(cluster, t)
    fields.update(message=message, pod=inst.pod_name, namespace=inst.namespace, service=inst.service)
    return render_template(template, fields)


def failure_message(f: Failure) -> str:
    b = f.instance.behaviour
    if f.required:
        return f"{b.method} {b.path} {f.code}: error calling {f.call_name}: {f.message}"
    return f"calling {f.call_name} failed, continuing without it: {f.message}"


def _instants(start: float, end: float, n: int, *key: Any) -> list[float]:
    span = max(end - start, 0.001)
    return [start + span * (i + 1) / (n + 1) + (stable_int(*key, i) % 997) / 1000.0 * span / (n + 1) * 0.5
            for i in range(n)]


def log_failures(cluster: Any, failures: list[Failure], start: float, end: float) -> int:
    """Write up to MAX_LINES_PER_FAILURE lines per failure over (start, end]; returns lines written."""
    written = 0
    for f in failures:
        inst = f.instance
        template = inst.behaviour.error_format if f.required else inst.behaviour.warn_format
        message = failure_message(f)
        n = min(MAX_LINES_PER_FAILURE, f.count)
        for t in _instants(start, end, n, inst.uid, f.call_name, f.kind, end):
            if append_line(cluster, inst.uid, inst.container, min(t, end), render(cluster, inst, template, t, message)):
                written += 1
    return written


def log_rejections(cluster: Any, inst: Instance, count: int, start: float, end: float) -> int:
    """The callee's side of a bad token: it logs the 401s it answered."""
    b = inst.behaviour
    message = f"{b.method} {b.path} 401: unauthorized request: {b.auth_error}"
    written = 0
    for t in _instants(start, end, min(MAX_LINES_PER_FAILURE, count), inst.uid, "401", end):
        if append_line(cluster, inst.uid, inst.container, min(t, end), render(cluster, inst, b.warn_format, t, message)):
            written += 1
    return written
