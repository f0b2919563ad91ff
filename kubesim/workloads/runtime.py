"""Per-pod, per-container node state: what a real node remembers and the API does not show.

The kubelet derives pod status from this state, never the other way round, which is what makes
derived state sticky: a running container keeps the environment it started with even after its
ConfigMap is deleted. ``cluster.runtime`` is a ``Runtime``: a dict of pod uid → PodRuntime, plus
``ips`` (pod IP → uid), ``images`` (node → pulled images), ``readiness_overrides`` /
``readiness_checks`` (other modules' say in readiness) and the scheduler's bookkeeping. Other
modules read ``PodRuntime.container(name).run`` (a ``behaviour.Run``: env, files, stream,
started_at, listen_at, memory_limit) while ``phase == "running"``; only the kubelet writes.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from .logstream import LogStream, stable_int

EPS = 0.0005  # sim-second tolerance when comparing scheduled instants


def due(t: float | None, now: float) -> bool:
    return t is not None and t <= now + EPS


def at_ms(t: float) -> float:
    """Round to the millisecond grid the cluster's timers use, so wake-ups always land on time."""
    return round(t, 3)


class Backoff:
    """client-go flowcontrol.Backoff for one key: doubling delay, capped, reset after 2×cap idle."""

    def __init__(self, initial: float = 10.0, cap: float = 300.0):
        self.initial = initial
        self.cap = cap
        self.delay = 0.0  # 0: no entry yet
        self.last_update = 0.0

    def _expired(self, event_time: float) -> bool:
        return event_time - self.last_update > 2 * self.cap

    def in_backoff_since(self, event_time: float, now: float) -> bool:
        if self.delay == 0.0 or self._expired(event_time):
            return False
        return now - event_time < self.delay - EPS

    def next(self, event_time: float) -> None:
        if self.delay == 0.0 or self._expired(event_time):
            self.delay = self.initial
        else:
            self.delay = min(self.delay * 2, self.cap)
        self.last_update = event_time


def go_duration(seconds: float) -> str:
    """Go's time.Duration.String() for whole seconds: 10s, 1m20s, 5m0s."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m}m{s}s"
    h, m = divmod(m, 60)
    return f"{h}h{m}m{s}s"


@dataclass(frozen=True)
class Terminated:
    exit_code: int
    reason: str
    started_at: float | None  # None: the process never started (StartError)
    finished_at: float
    container_id: str
    message: str | None = None


@dataclass
class ProbeState:
    kind: str  # readiness | liveness | startup
    next_tick: float | None = None
    failures: int = 0
    successes: int = 0
    message: str | None = None


@dataclass
class ContainerRuntime:
    """One container slot of a pod across all its restarts."""

    name: str
    init: bool
    image: str
    phase: str = "created"  # see containers.PHASES
    next_at: float | None = None
    waiting_reason: str | None = None
    waiting_message: str | None = None
    attempts: int = 0  # containers created in this slot; restartCount = attempts - 1
    container_id: str | None = None
    image_id: str = ""
    image_resolved: str | None = None
    run: Any = None  # containers.Run while a container instance exists
    deaths: list[Terminated] = field(default_factory=list)
    streams: dict[str, LogStream] = field(default_factory=dict)
    pull_backoff: Backoff = field(default_factory=Backoff)
    crash_backoff: Backoff = field(default_factory=Backoff)
    ready: bool = False
    started: bool = False
    probes: dict[str, ProbeState] = field(default_factory=dict)
    finished_at: float | None = None  # for init containers: when it completed successfully
    pull_started: float = 0.0

    @property
    def restart_count(self) -> int:
        return max(0, self.attempts - 1)

    @property
    def last_death(self) -> Terminated | None:
        return self.deaths[-1] if self.deaths else None

    def keep_streams(self) -> None:
        """Keep logs only for the instances the API can still name (current, last, previous)."""
        keep = {d.container_id for d in self.deaths[-2:]}
        if self.container_id:
            keep.add(self.container_id)
        for cid in list(self.streams):
            if cid not in keep:
                del self.streams[cid]


@dataclass
class PodRuntime:
    uid: str
    namespace: str
    name: str
    node: str
    seen_at: float
    host_ip: str = ""
    pod_ip: str | None = None
    sandbox_at: float | None = None  # volumes mounted, sandbox up, IP assigned
    mount_event_at: float | None = None
    mount_backoff: Backoff = field(default_factory=lambda: Backoff(2.0, 122.0))
    init: list[ContainerRuntime] = field(default_factory=list)
    containers: list[ContainerRuntime] = field(default_factory=list)
    conditions: dict[str, tuple[str, float]] = field(default_factory=dict)
    synced: tuple[Any, ...] | None = None  # (pod resourceVersion, state fingerprint) of the last status sync

    def all_containers(self) -> list[ContainerRuntime]:
        return self.init + self.containers

    def container(self, name: str) -> ContainerRuntime | None:
        for c in self.all_containers():
            if c.name == name:
                return c
        return None


class ReadinessCheck(Protocol):
    """Extra readiness verdict from another module: a failure message, or None when healthy."""

    def __call__(self, cluster: Any, pod: dict, container: str) -> str | None: ...


POD_NETWORK = ipaddress.ip_network("10.244.0.0/16")


class Runtime(dict):
    """pod uid → PodRuntime, plus node-level state shared by all pods."""

    def __init__(self) -> None:
        super().__init__()
        self.images: dict[str, set[str]] = {}  # node → pulled image names
        self.ips: dict[str, str] = {}  # pod ip → pod uid
        # (namespace, pod name) → failure message: forces readiness probes to fail.
        self.readiness_overrides: dict[tuple[str, str], str] = {}
        self.readiness_checks: list[ReadinessCheck] = []
        # unschedulable pod uid → (message, last FailedScheduling event, namespace, scheduler epoch tried)
        self.scheduling: dict[str, tuple[str, float, str, int]] = {}

    def allocate_ip(self, uid: str) -> str:
        size = POD_NETWORK.num_addresses
        h = stable_int("pod-ip", uid)
        for probe in range(size):
            offset = (h + probe * 7919) % size
            if offset % 256 in (0, 1, 255):
                continue
            ip = str(POD_NETWORK.network_address + offset)
            if ip not in self.ips:
                self.ips[ip] = uid
                return ip
        raise RuntimeError("pod network exhausted")

    def drop(self, uid: str) -> PodRuntime | None:
        pr = self.pop(uid, None)
        if pr is not None and pr.pod_ip and self.ips.get(pr.pod_ip) == uid:
            del self.ips[pr.pod_ip]
        self.scheduling.pop(uid, None)
        return pr

    def set_readiness_override(self, cluster: Any, namespace: str, pod: str, message: str | None) -> None:
        """Force a pod's readiness probes to fail with ``message`` (None clears it)."""
        if message is None:
            self.readiness_overrides.pop((namespace, pod), None)
        else:
            self.readiness_overrides[(namespace, pod)] = message
        cluster.store.dirty.add(namespace)


OnEvent = Callable[..., None]
