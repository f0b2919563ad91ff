"""pods/log: container logs as the kubelet serves them, with the kubelet's error wording.

Which instance's log is served follows kubelet validateContainerLogStatus: the running
container, else the terminated one, else the last terminated one (so a crash-looping
container's current log is its latest crash); ``previous`` always means lastState.terminated.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..clock import parse_rfc3339
from ..errors import ApiError
from .logstream import line_timestamp


def _bad(message: str) -> ApiError:
    return ApiError(400, message, "BadRequest")


def _names(spec: dict[str, Any], key: str) -> list[str]:
    return [str(c.get("name")) for c in spec.get(key) or [] if isinstance(c, dict)]


def _pick_container(pod: dict[str, Any], container: str | None) -> str:
    spec = pod.get("spec") or {}
    name = pod["metadata"]["name"]
    names, inits = _names(spec, "containers"), _names(spec, "initContainers")
    if not container:
        if len(names) == 1:
            return names[0]
        msg = f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]"
        if inits:
            msg += f" or one of the init containers: [{' '.join(inits)}]"
        raise _bad(msg)
    if container not in names and container not in inits:
        raise _bad(f"container {container} is not valid for pod {name}")
    return container


def _container_id(pod: dict[str, Any], container: str, previous: bool) -> str | None:
    """The container ID whose log to serve, or ApiError(400) with the kubelet's reason why not."""
    status = pod.get("status") or {}
    name = pod["metadata"]["name"]
    statuses = [s for s in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or [])
                if isinstance(s, dict) and s.get("name") == container]
    if not statuses:
        raise _bad(f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating')
    cs = statuses[0]
    state, last = cs.get("state") or {}, (cs.get("lastState") or {}).get("terminated")
    if previous:
        if not last or not last.get("containerID"):
            raise _bad(f'previous terminated container "{container}" in pod "{name}" not found')
        return last["containerID"]
    if "running" in state:
        return cs.get("containerID")
    if "terminated" in state:
        cid = state["terminated"].get("containerID") or (last or {}).get("containerID")
        if not cid:
            raise _bad(f'container "{container}" in pod "{name}" is terminated')
        return cid
    if last:
        if not last.get("containerID"):
            raise _bad(f'container "{container}" in pod "{name}" is terminated')
        return last["containerID"]
    reason = (state.get("waiting") or {}).get("reason")
    if reason == "ErrImagePull":
        raise _bad(f'container "{container}" in pod "{name}" is waiting to start: image can\'t be pulled')
    if reason == "ImagePullBackOff":
        raise _bad(f'container "{container}" in pod "{name}" is waiting to start: trying and failing to pull image')
    if reason:
        raise _bad(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    raise _bad(f'container "{container}" in pod "{name}" is waiting to start - no logs yet')


def read_log(cluster: Any, pod: dict[str, Any], container: str | None = None, previous: bool = False,
             tail_lines: int | None = None, limit_bytes: int | None = None, timestamps: bool = False,
             since_seconds: int | None = None, since_time: str | None = None) -> str:
    """The log text (lines end with a newline), or ApiError(400) with kubelet wording."""
    name = _pick_container(pod, container)
    if not (pod.get("spec") or {}).get("nodeName"):
        return ""
    cid = _container_id(pod, name, previous)
    pr = cluster.runtime.get(pod["metadata"].get("uid", ""))
    c = pr.container(name) if pr is not None else None
    stream = c.streams.get(cid) if c is not None and cid else None
    if stream is None:
        return ""
    now = cluster.now_s()
    wall = cluster.clock.at
    lines = [(t, f"{line_timestamp(wall, t, i)} {s}" if timestamps else s) for i, (t, s) in enumerate(stream.lines(now))]
    start = 0.0
    if since_seconds is not None and since_seconds > 0:
        start = now - since_seconds
    if since_time:
        try:
            start = max(start, (parse_rfc3339(since_time) - cluster.clock.at(0)).total_seconds())
        except ValueError:
            raise _bad(f'parsing time "{since_time}" as "2006-01-02T15:04:05Z07:00": cannot parse') from None
    if start:
        lines = [(t, s) for t, s in lines if t >= start - 1e-9]
    if tail_lines is not None and tail_lines >= 0:
        lines = lines[len(lines) - tail_lines:] if tail_lines < len(lines) else lines
        if tail_lines == 0:
            lines = []
    text = "".join(f"{s}\n" for _, s in lines)
    if limit_bytes is not None and limit_bytes >= 0:
        data = text.encode()[:limit_bytes]
        text = data.decode("utf-8", "ignore")
    return text


def log_lines(cluster: Any, pod: dict[str, Any], container: str) -> list[tuple[datetime, str]]:
    """(wall time, line) for the container's current instance — for telemetry and tests."""
    pr = cluster.runtime.get(pod["metadata"].get("uid", ""))
    c = pr.container(container) if pr is not None else None
    if c is None:
        return []
    cid = c.container_id if c.run is not None else (c.deaths[-1].container_id if c.deaths else None)
    stream = c.streams.get(cid) if cid else None
    if stream is None:
        return []
    return [(cluster.clock.at(t), s) for t, s in stream.lines(cluster.now_s())]
