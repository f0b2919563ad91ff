"""Startup, liveness and readiness probes, judged against the image profile.

A probe passes when the app listens on the probed port (after its start-up time) and serves the
path; readiness also needs the profile's dependencies (Services with ready endpoints) and no
override from another module. Probes tick on the kubelet's period only while they fail; a
passing probe sleeps and is re-checked whenever the namespace changes, so healthy pods cost no
wake-ups.
"""

from __future__ import annotations

import math
from typing import Any

from .context import SyncContext
from .runtime import EPS, ContainerRuntime, ProbeState, at_ms

KINDS = ("startup", "liveness", "readiness")
SPEC_KEYS = {"startup": "startupProbe", "liveness": "livenessProbe", "readiness": "readinessProbe"}
LABEL = {"startup": "Startup", "liveness": "Liveness", "readiness": "Readiness"}


def probe_spec(sc: SyncContext, c: ContainerRuntime, kind: str) -> dict[str, Any] | None:
    spec = sc.spec_of(c).get(SPEC_KEYS[kind])
    return spec if isinstance(spec, dict) else None


def _int(probe: dict[str, Any], key: str, default: int, minimum: int) -> int:
    value = probe.get(key, default)
    return max(minimum, value) if isinstance(value, int) and not isinstance(value, bool) else default


def timing(probe: dict[str, Any]) -> tuple[int, int, int, int]:
    """(initialDelaySeconds, periodSeconds, failureThreshold, successThreshold) with API defaults."""
    return (_int(probe, "initialDelaySeconds", 0, 0), _int(probe, "periodSeconds", 10, 1),
            _int(probe, "failureThreshold", 3, 1), _int(probe, "successThreshold", 1, 1))


def _port(sc: SyncContext, c: ContainerRuntime, value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value or "")
    if text.isdigit():
        return int(text)
    for p in sc.spec_of(c).get("ports") or []:
        if isinstance(p, dict) and p.get("name") == text:
            return p.get("containerPort")
    return None


def evaluate(sc: SyncContext, c: ContainerRuntime, kind: str, probe: dict[str, Any], t: float) -> tuple[bool, str | None, bool]:
    """(passed, failure message, quiet) — quiet failures happen while the app is still starting."""
    run = c.run
    if run is None:
        return False, None, True
    ip = sc.pr.pod_ip or ""
    listening = run.app and t >= run.listen_at - EPS
    profile = run.profile
    handler = next((h for h in ("httpGet", "tcpSocket", "grpc", "exec") if isinstance(probe.get(h), dict)), None)
    if handler in ("httpGet", "tcpSocket", "grpc"):
        port = _port(sc, c, probe[handler].get("port"))
        open_port = listening and (port in profile.ports if profile.ports else port is not None)
        if handler == "httpGet":
            path = str(probe[handler].get("path") or "/")
            scheme = str(probe[handler].get("scheme") or "HTTP").lower()
            if not open_port:
                return (False, f'Get "{scheme}://{ip}:{port}{path}": dial tcp {ip}:{port}: connect: connection refused',
                        not listening and run.app)
            if not profile.serves_path(path):
                return False, "HTTP probe failed with statuscode: 404", False
        elif not open_port:
            msg = (f"dial tcp {ip}:{port}: connect: connection refused" if handler == "tcpSocket"
                   else f'timeout: failed to connect service "{ip}:{port}" within 1s')
            return False, msg, not listening and run.app
    elif handler == "exec" and run.app and not listening:
        return False, "command timed out", True
    if kind == "readiness":
        reason = readiness_blocker(sc, c, handler)
        if reason:
            return False, reason, False
    return True, None, False


def readiness_blocker(sc: SyncContext, c: ContainerRuntime, handler: str | None) -> str | None:
    """Why the app answers its readiness probe with an error even though it runs."""
    runtime = sc.cluster.runtime
    override = runtime.readiness_overrides.get((sc.namespace, sc.pr.name))
    if override:
        return override
    for check in runtime.readiness_checks:
        verdict = check(sc.cluster, sc.pod, c.name)
        if verdict:
            return verdict
    dep = unavailable_dependency(sc, c)
    if dep is not None and handler == "httpGet":
        return "HTTP probe failed with statuscode: 503"
    return None


def unavailable_dependency(sc: SyncContext, c: ContainerRuntime) -> str | None:
    """The first of the profile's readiness dependencies without a ready endpoint."""
    run = c.run
    readiness = run.profile.readiness if run is not None and run.app else None
    for dep in readiness.depends_on if readiness else ():
        if not sc.service_ready(dep):
            return dep
    return None


def start(sc: SyncContext, c: ContainerRuntime, t: float) -> None:
    """A container instance started: arm its probes (readiness/liveness wait for startup)."""
    c.probes = {}
    for kind in KINDS:
        probe = probe_spec(sc, c, kind)
        if probe is not None and not c.init:
            c.probes[kind] = ProbeState(kind)
    c.started = "startup" not in c.probes
    c.ready = False
    if "startup" in c.probes:
        c.probes["startup"].next_tick = at_ms(t + timing(probe_spec(sc, c, "startup") or {})[0])
    else:
        _arm_after_start(sc, c, t)
    if "readiness" not in c.probes and c.started:
        c.ready = True


def _arm_after_start(sc: SyncContext, c: ContainerRuntime, t: float) -> None:
    for kind in ("liveness", "readiness"):
        if kind in c.probes:
            c.probes[kind].next_tick = at_ms(t + timing(probe_spec(sc, c, kind) or {})[0])


def next_tick(c: ContainerRuntime) -> float | None:
    ticks = [p.next_tick for p in c.probes.values() if p.next_tick is not None]
    return min(ticks) if ticks else None


def tick(sc: SyncContext, c: ContainerRuntime, t: float) -> str | None:
    """Run the probes due at ``t``; returns a kill reason ("liveness"/"startup") when one trips."""
    for kind in KINDS:
        ps = c.probes.get(kind)
        probe = probe_spec(sc, c, kind)
        if ps is None or probe is None or ps.next_tick is None or ps.next_tick > t + EPS:
            continue
        _, period, failure_threshold, success_threshold = timing(probe)
        ok, message, quiet = evaluate(sc, c, kind, probe, t)
        if ok:
            ps.failures, ps.successes, ps.message = 0, ps.successes + 1, None
            ps.next_tick = None
            if kind == "startup":
                c.started = True
                _arm_after_start(sc, c, t)
                if "readiness" not in c.probes:
                    c.ready = True
            elif kind == "readiness" and ps.successes >= success_threshold:
                c.ready = True
            elif kind == "readiness":
                ps.next_tick = at_ms(t + period)
            continue
        ps.failures, ps.successes, ps.message = ps.failures + 1, 0, message
        ps.next_tick = at_ms(t + period)
        if not quiet and message:
            sc.event(c, "Warning", "Unhealthy", f"{LABEL[kind]} probe failed: {message}")
        dep = unavailable_dependency(sc, c) if kind == "readiness" and not quiet else None
        if dep is not None and c.run is not None:  # the app says why it answers 503
            c.run.stream.add(t, c.run.profile.logs.dependency_unavailable.replace("{name}", dep))
        if ps.failures >= failure_threshold:
            if kind == "readiness":
                c.ready = False
            else:
                return kind
    return None


def recheck(sc: SyncContext, c: ContainerRuntime, now: float) -> None:
    """Wake sleeping probes whose verdict changed since they last passed (state changed elsewhere)."""
    for kind in ("liveness", "readiness"):
        ps = c.probes.get(kind)
        probe = probe_spec(sc, c, kind)
        if ps is None or probe is None or ps.next_tick is not None or not c.started:
            continue
        ok, _, _ = evaluate(sc, c, kind, probe, now)
        if not ok:
            delay, period, _, _ = timing(probe)
            run = c.run
            origin = (run.started_at if run else now) + delay
            k = max(0, math.ceil((now - origin - EPS) / period))
            ps.next_tick = at_ms(origin + k * period)
