"""What every activity wrapper adds around a step: error mapping, background heartbeats with
short scalar details, and cancellation that a half-done sandbox creation does not obey."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.errors import temporal_errors, to_application_error
from activities.heartbeat import finish_despite_cancel, heartbeating, summarize
from ontrial.errors import ConfigError, InfraError


@pytest.mark.parametrize("error, kind, non_retryable", [
    (InfraError("apiserver 500", transient=True), "InfraError", False),
    (InfraError("quota forbids sandboxes", transient=False), "InfraError", True),
    (ConfigError("task.yaml:3: fault: bad"), "ConfigError", True),
])
def test_core_errors_become_application_errors(error, kind, non_retryable):
    with pytest.raises(ApplicationError) as raised:
        with temporal_errors():
            raise error
    assert raised.value.type == kind and raised.value.non_retryable is non_retryable
    assert raised.value.message == str(error) and raised.value.__cause__ is error


def test_unclassified_exceptions_pass_through_for_the_default_retry():
    bug = KeyError("oops")
    assert to_application_error(bug) is bug
    with pytest.raises(KeyError):
        with temporal_errors():
            raise bug


def test_heartbeat_details_are_short_scalars():
    details = summarize({"steps": 3, "wall_seconds": 1.5, "done": False, "transcript": "x" * 10_000,
                         "tool_calls": [{"output": "secret"}], "none": None})
    assert details == {"steps": 3, "wall_seconds": 1.5, "done": False, "transcript": "x" * 120, "none": None}


def environment(heartbeat_seconds: float) -> tuple[ActivityEnvironment, list[tuple]]:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, heartbeat_timeout=timedelta(seconds=heartbeat_seconds))
    beats: list[tuple] = []
    env.on_heartbeat = lambda *details: beats.append(details)
    return env, beats


async def test_a_slow_step_keeps_heartbeating_its_latest_details():
    env, beats = environment(0.6)

    async def slow_step() -> str:
        async with heartbeating() as heartbeat:
            heartbeat({"steps": 1})
            await asyncio.sleep(1.0)
        return "done"

    assert await env.run(slow_step) == "done"
    assert len(beats) >= 4  # the step's own beat plus the background ticker every 0.2 s
    assert beats[-1] == ({"steps": 1},)


async def test_a_cancel_request_does_not_interrupt_a_step_that_must_finish():
    env, _ = environment(0.6)
    finished = asyncio.Event()

    async def create() -> str:
        await asyncio.sleep(0.5)
        finished.set()
        return "sandbox"

    async def activity() -> str:
        return await finish_despite_cancel(create())

    running = asyncio.ensure_future(env.run(activity))
    await asyncio.sleep(0.1)
    env.cancel()
    assert await running == "sandbox" and finished.is_set()


async def test_a_worker_shutdown_still_cancels_it_and_lets_the_step_clean_up():
    from temporalio.activity import ActivityCancellationDetails

    env, _ = environment(0.6)
    cleaned = asyncio.Event()

    async def create() -> str:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            await asyncio.sleep(0.1)  # undoing the half-created sandbox
            cleaned.set()
            raise
        return "sandbox"

    async def activity() -> str:
        return await finish_despite_cancel(create())

    running = asyncio.ensure_future(env.run(activity))
    await asyncio.sleep(0.1)
    env.cancel(ActivityCancellationDetails(worker_shutdown=True))
    with pytest.raises(asyncio.CancelledError):
        await running
    assert cleaned.is_set()
