"""How the harness lets time pass in a sandbox: sleep on real clusters, advance kubesim's clock.

Everything that waits (rollouts becoming healthy, a namespace going away, the grading settle
window) goes through a Waiter, so one code path serves both backends and a kubesim trial
never sleeps for simulated minutes.
"""

from __future__ import annotations

import asyncio
import time
from typing import Awaitable, Callable, Protocol, TypeVar

from .rest import KubeError, KubeRest

T = TypeVar("T")


class Waiter(Protocol):
    async def pass_time(self, seconds: float) -> None:
        """Let ``seconds`` of cluster time pass."""

    def elapsed(self) -> float:
        """Cluster seconds passed through this waiter (or since it was created, for real time)."""


class RealTimeWaiter:
    """Real clusters: time passes by sleeping."""

    def __init__(self) -> None:
        self._t0 = time.monotonic()

    async def pass_time(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def elapsed(self) -> float:
        return time.monotonic() - self._t0


class KubesimWaiter:
    """kubesim: ``POST <server>/kubesim/v1/clock/advance {"seconds": N}`` with the admin credentials.

    The simulated clock may also run on its own (time_scale > 0); ``elapsed`` counts only what
    this waiter advanced, which bounds waits in simulated seconds either way.
    """

    def __init__(self, admin: KubeRest):
        self.admin = admin
        self._advanced = 0.0

    async def pass_time(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        try:
            await self.admin.request("POST", "/kubesim/v1/clock/advance", body={"seconds": seconds})
        except KubeError as e:
            raise e.infra("kubesim clock advance") from e
        self._advanced += seconds

    def elapsed(self) -> float:
        return self._advanced


async def wait_until(waiter: Waiter, probe: Callable[[], Awaitable[tuple[bool, T]]], *, timeout: float,
                     step: float = 2.0) -> tuple[bool, T]:
    """Probe, let ``step`` seconds pass, probe again — until the probe says done or ``timeout``
    cluster seconds passed. Returns (done, last probe value); the caller decides what a timeout means."""
    start = waiter.elapsed()
    while True:
        done, value = await probe()
        if done:
            return True, value
        spent = waiter.elapsed() - start
        if spent >= timeout:
            return False, value
        await waiter.pass_time(min(step, max(0.1, timeout - spent)))


def kubesim_clock(admin: KubeRest) -> Callable[[], Awaitable[float | None]]:
    """Reads kubesim's simulated seconds (``GET /kubesim/v1/clock``) for audit timestamps."""

    async def read() -> float | None:
        doc = await admin.get_json("/kubesim/v1/clock")
        return float(doc["seconds"]) if isinstance(doc, dict) and "seconds" in doc else None

    return read
