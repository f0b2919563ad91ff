"""A per-namespace Alertmanager: groups alerts, applies group_wait / group_interval / repeat_interval on
the simulated clock, and POSTs version-4 webhook payloads to the namespace's receiver URL.

Delivery runs on a worker thread (the cluster's control loop never waits on a network call) with a
few retries; every payload is also kept, with its delivery outcome, for the admin endpoint.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from .rules import Alert, NamespaceRules, Rule

log = logging.getLogger("kubesim.telemetry.alertmanager")
ZERO_TIME = "0001-01-01T00:00:00Z"
KEEP_NOTIFICATIONS = 200
FNV_OFFSET, FNV_PRIME = 14695981039346656037, 1099511628211


def fingerprint(labels: dict[str, str]) -> str:
    """Alertmanager's label-set fingerprint: FNV-1a 64 over sorted names and values, 0xff separated."""
    h = FNV_OFFSET
    for name in sorted(labels):
        for chunk in (name.encode(), b"\xff", labels[name].encode(), b"\xff"):
            for byte in chunk:
                h = ((h ^ byte) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


@dataclass(frozen=True)
class Receiver:
    url: str | None = None
    name: str = "kubesim"
    group_by: tuple[str, ...] = ("alertname",)  # ("...",) groups by every label
    group_wait: float = 0.0
    group_interval: float = 60.0
    repeat_interval: float = 4 * 3600.0
    send_resolved: bool = True


@dataclass
class _GroupState:
    created: float
    last_sent: float | None = None
    firing: frozenset[str] = frozenset()
    resolved: frozenset[str] = frozenset()


@dataclass
class Notification:
    namespace: str
    url: str | None
    payload: dict[str, Any]
    sim_time: str
    delivered: bool | None = None  # None: pending or no URL
    error: str = ""
    attempts: int = 0


class Notifier:
    """Delivers payloads on a daemon thread; ``flush`` waits until the queue is empty."""

    def __init__(self, retries: int = 3, timeout: float = 5.0):
        self.retries = retries
        self.timeout = timeout
        self._queue: queue.Queue[Notification] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, n: Notification) -> None:
        if not n.url:
            return
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="kubesim-alertmanager", daemon=True)
                self._thread.start()
        self._queue.put(n)

    def flush(self, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)
        return not self._queue.unfinished_tasks

    def _run(self) -> None:
        with httpx.Client(timeout=self.timeout) as client:
            while True:
                n = self._queue.get()
                try:
                    self._deliver(client, n)
                finally:
                    self._queue.task_done()

    def _deliver(self, client: httpx.Client, n: Notification) -> None:
        for attempt in range(1, self.retries + 1):
            n.attempts = attempt
            try:
                resp = client.post(n.url or "", json=n.payload, headers={"User-Agent": "Alertmanager/0.27.0"})
                if resp.status_code < 300:
                    n.delivered, n.error = True, ""
                    return
                n.error = f"webhook answered {resp.status_code}"
                if resp.status_code < 500 and resp.status_code != 429:
                    break
            except httpx.HTTPError as e:
                n.error = f"{type(e).__name__}: {e}"
            time.sleep(min(2.0, 0.25 * 2 ** attempt))
        n.delivered = False
        log.warning("alert webhook to %s failed: %s", n.url, n.error)


@dataclass
class Alertmanager:
    notifier: Notifier
    clock: Any
    external_url: str = "http://kubesim/alertmanager"
    prometheus_url: str = "http://kubesim/prometheus"
    groups: dict[str, dict[str, _GroupState]] = field(default_factory=dict)
    sent: dict[str, deque[Notification]] = field(default_factory=dict)

    def _rfc3339(self, unix: float) -> str:
        from datetime import datetime, timezone

        return datetime.fromtimestamp(unix, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + \
            f"{int(round(unix * 1000)) % 1000:03d}Z"

    def _alert_json(self, rule: Rule, a: Alert) -> dict[str, Any]:
        labels = dict(a.labels)
        firing = a.state == "firing"
        return {
            "status": "firing" if firing else "resolved",
            "labels": labels,
            "annotations": dict(a.annotations),
            "startsAt": self._rfc3339(a.fired_at or a.active_at),
            "endsAt": ZERO_TIME if firing else self._rfc3339(a.resolved_at or a.active_at),
            "generatorURL": f"{self.prometheus_url}/graph?g0.expr={quote(rule.expr, safe='')}&g0.tab=1",
            "fingerprint": fingerprint(labels),
        }

    def process(self, rules: NamespaceRules, receiver: Receiver, now: float) -> None:
        """Run one dispatch pass for a namespace at unix time ``now``."""
        ns = rules.namespace
        states = self.groups.setdefault(ns, {})
        grouped: dict[str, tuple[dict[str, str], list[tuple[Rule, Alert]]]] = {}
        for rule, a in rules.alerts():
            if a.state == "pending" or (a.state == "inactive" and not a.fired_at):
                continue
            labels = dict(a.labels)
            keys = sorted(labels) if "..." in receiver.group_by else receiver.group_by
            glabels = {k: labels[k] for k in keys if labels.get(k)}
            gkey = "{}:{" + ",".join(f'{k}="{v}"' for k, v in sorted(glabels.items())) + "}"
            grouped.setdefault(gkey, (glabels, []))[1].append((rule, a))
        for gkey, (glabels, members) in grouped.items():
            firing = frozenset(fingerprint(dict(a.labels)) for _, a in members if a.state == "firing")
            resolved = frozenset(fingerprint(dict(a.labels)) for _, a in members if a.state != "firing")
            st = states.get(gkey)
            if st is None:
                if not firing:
                    continue
                st = states[gkey] = _GroupState(now)
            if not self._due(st, receiver, firing, resolved, now):
                continue
            if not firing and not receiver.send_resolved:
                del states[gkey]
                continue
            shown = [(r, a) for r, a in members if a.state == "firing" or receiver.send_resolved]
            self._send(ns, gkey, glabels, shown, receiver, bool(firing))
            st.last_sent, st.firing, st.resolved = now, firing, resolved
            if not firing:
                del states[gkey]
        for gkey in [k for k in states if k not in grouped]:
            del states[gkey]

    @staticmethod
    def _due(st: _GroupState, r: Receiver, firing: frozenset[str], resolved: frozenset[str], now: float) -> bool:
        if st.last_sent is None:
            return bool(firing) and now >= st.created + r.group_wait - 1e-6
        changed = firing != st.firing or not resolved <= st.resolved
        if changed:
            return now >= st.last_sent + r.group_interval - 1e-6
        return bool(firing) and now >= st.last_sent + r.repeat_interval - 1e-6

    def _send(self, ns: str, gkey: str, glabels: dict[str, str], members: list[tuple[Rule, Alert]],
              receiver: Receiver, firing: bool) -> None:
        alerts = [self._alert_json(r, a) for r, a in members]
        alerts.sort(key=lambda a: (a["status"] != "firing", a["fingerprint"]))
        common_labels = _common([a["labels"] for a in alerts])
        payload = {
            "receiver": receiver.name,
            "status": "firing" if firing else "resolved",
            "alerts": alerts,
            "groupLabels": glabels,
            "commonLabels": common_labels,
            "commonAnnotations": _common([a["annotations"] for a in alerts]),
            "externalURL": self.external_url,
            "version": "4",
            "groupKey": gkey,
            "truncatedAlerts": 0,
        }
        n = Notification(ns, receiver.url, payload, self._rfc3339(self.clock.now().timestamp()))
        self.sent.setdefault(ns, deque(maxlen=KEEP_NOTIFICATIONS)).append(n)
        self.notifier.submit(n)

    def forget(self, namespace: str) -> None:
        self.groups.pop(namespace, None)
        self.sent.pop(namespace, None)


def _common(maps: list[dict[str, str]]) -> dict[str, str]:
    if not maps:
        return {}
    common = dict(maps[0])
    for m in maps[1:]:
        common = {k: v for k, v in common.items() if m.get(k) == v}
    return common

