"""Fixtures for trial-workflow tests: an in-process worker on a fresh task queue per test."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

import trial_agents  # noqa: F401 - registers the test agent kinds in this process
from worker.app import build_worker


@pytest_asyncio.fixture(loop_scope="session")
async def task_queue(temporal_env: WorkflowEnvironment) -> AsyncIterator[str]:
    """A task queue served by an in-process worker for the duration of one test."""
    queue = f"trials-{uuid.uuid4().hex[:8]}"
    async with build_worker(temporal_env.client, queue, graceful_shutdown=timedelta(seconds=5)):
        yield queue


@pytest_asyncio.fixture(loop_scope="session")
async def instant_queue(temporal_env: WorkflowEnvironment) -> AsyncIterator[str]:
    """A task queue whose worker runs the instant trial path (no cluster, no agent: orchestration only)."""
    from activities.instant import INSTANT_TRIAL_ACTIVITIES

    queue = f"instant-{uuid.uuid4().hex[:8]}"
    async with build_worker(temporal_env.client, queue, graceful_shutdown=timedelta(seconds=5),
                            trial_activities=INSTANT_TRIAL_ACTIVITIES):
        yield queue
