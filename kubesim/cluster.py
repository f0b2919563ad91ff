"""The simulated cluster: store + clock + controllers, reconciled level-triggered per namespace.

Every write marks its namespace dirty; ``reconcile()`` runs each controller over the dirty
namespaces until nothing changes. Controllers that need time to pass (start-up delays,
back-off, progress deadlines) ask for a wake-up with ``wake_at``; ``advance()`` walks the
clock through those wake-ups in order, so "let five minutes pass" is deterministic.
"""

from __future__ import annotations

import heapq
from typing import Protocol

from .clock import SimClock
from .events import EventRecorder
from .store import Store

MAX_ROUNDS = 100


class Controller(Protocol):
    """One level-triggered control loop. Must be idempotent: no change in, no write out."""

    name: str

    def reconcile(self, cluster: "Cluster", namespace: str) -> None: ...


class Cluster:
    def __init__(self, clock: SimClock | None = None, seed: int | None = 0):
        self.clock = clock or SimClock()
        self.store = Store(self.clock, seed=seed)
        self.events = EventRecorder(self.store)
        self.controllers: list[Controller] = []
        self._timers: list[tuple[float, str]] = []
        self._timer_set: set[tuple[float, str]] = set()

    # -- time --------------------------------------------------------------------------------
    def now_s(self) -> float:
        return self.clock.seconds()

    def wake_at(self, namespace: str, sim_seconds: float) -> None:
        """Reconcile ``namespace`` again once the simulated clock reaches ``sim_seconds``."""
        entry = (round(sim_seconds, 3), namespace)
        if entry not in self._timer_set:
            self._timer_set.add(entry)
            heapq.heappush(self._timers, entry)

    def next_wakeup(self) -> float | None:
        return self._timers[0][0] if self._timers else None

    def _fire_due_timers(self) -> None:
        now = self.clock.seconds()
        while self._timers and self._timers[0][0] <= now:
            entry = heapq.heappop(self._timers)
            self._timer_set.discard(entry)
            self.store.dirty.add(entry[1])

    # -- control loop ------------------------------------------------------------------------
    def reconcile(self) -> None:
        """Run controllers over dirty namespaces until quiescent (bounded)."""
        self._fire_due_timers()
        for _ in range(MAX_ROUNDS):
            if not self.store.dirty:
                return
            batch = sorted(self.store.dirty)
            self.store.dirty.clear()
            for ns in batch:
                for c in self.controllers:
                    c.reconcile(self, ns)

    def tick(self) -> None:
        """Called periodically by the server: fire due timers and reconcile."""
        self.reconcile()

    def advance(self, seconds: float) -> None:
        """Let simulated time pass, stopping at each wake-up on the way."""
        target = self.clock.seconds() + seconds
        self.reconcile()
        while self._timers and self._timers[0][0] <= target:
            self.clock.set_to(self._timers[0][0])
            self.reconcile()
        self.clock.set_to(target)
        self.reconcile()
