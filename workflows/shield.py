"""Finish a workflow operation even if the workflow is cancelled meanwhile.

Python workflows have no cancellation scopes: a cancel is an ``asyncio.CancelledError`` at the
current await, delivered once. Shielding the operation and looping until it is done means a
cancel arriving during teardown neither abandons the teardown activity nor closes the workflow
before the sandbox is gone. Anything other than ``CancelledError`` (including the SDK's eviction
signal) propagates untouched.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def finish_shielded(operation: Awaitable[T]) -> tuple[T, bool]:
    """Await ``operation`` to completion; returns (its result, whether a cancel arrived meanwhile)."""
    task = asyncio.ensure_future(operation)
    cancel_seen = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancel_seen = True
    return task.result(), cancel_seen
