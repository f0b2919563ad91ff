"""Liveness for long steps: heartbeat in the background while a step runs.

Heartbeats are what let the workflow notice a dead worker quickly (``heartbeat_timeout``) and
what delivers a cancellation to a running activity, so every step heartbeats, not only the
agent. Details are the step's own small progress dict, reduced to short scalars so a step can
never leak transcript text into the workflow history through them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager, suppress
from typing import Any, TypeVar

from temporalio import activity

T = TypeVar("T")

DEFAULT_INTERVAL_SECONDS = 5.0
MAX_DETAIL_CHARS = 120
MAX_DETAIL_KEYS = 16


def summarize(details: dict[str, Any]) -> dict[str, Any]:
    """Keep at most a few scalar fields, strings cut short: heartbeat details end up in history."""
    kept: dict[str, Any] = {}
    for key, value in list(details.items())[:MAX_DETAIL_KEYS]:
        if isinstance(value, bool | int | float) or value is None:
            kept[str(key)] = value
        elif isinstance(value, str):
            kept[str(key)] = value[:MAX_DETAIL_CHARS]
    return kept


class Heartbeat:
    """The callback handed to a step: remembers the latest details and heartbeats them now."""

    def __init__(self) -> None:
        self.details: dict[str, Any] = {}

    def __call__(self, details: dict[str, Any]) -> None:
        self.details = summarize(details)
        activity.heartbeat(self.details)


def _interval() -> float:
    timeout = activity.info().heartbeat_timeout
    if not timeout:
        return DEFAULT_INTERVAL_SECONDS
    return max(0.2, min(DEFAULT_INTERVAL_SECONDS, timeout.total_seconds() / 3))


@asynccontextmanager
async def heartbeating() -> AsyncIterator[Heartbeat]:
    """Heartbeat the latest details every few seconds until the block ends (the SDK throttles sends)."""
    beat = Heartbeat()
    interval = _interval()

    async def tick() -> None:
        while True:
            activity.heartbeat(beat.details)
            await asyncio.sleep(interval)

    ticker = asyncio.create_task(tick(), name="heartbeat")
    try:
        yield beat
    finally:
        ticker.cancel()
        with suppress(asyncio.CancelledError):
            await ticker


async def finish_despite_cancel(step: Awaitable[T]) -> T:
    """Run ``step`` to the end even if the workflow cancels the activity meanwhile.

    For steps whose half-done state would leak (a sandbox created but not yet returned): the
    workflow waits for the result (WAIT_CANCELLATION_COMPLETED), then tears the sandbox down.
    Any other cancellation (worker shutdown, the server gave up on the attempt) still applies.
    """
    task = asyncio.ensure_future(step)
    while True:
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                return task.result()
            details = activity.cancellation_details()
            if details is None or not details.cancel_requested or details.worker_shutdown or details.timed_out:
                task.cancel()
                await asyncio.wait([task])  # let the step undo its half-done work first
                raise
            activity.logger.info("cancel requested; finishing the step so the workflow can undo it")
