"""Building and running the worker: one task queue serving trial workflows and their steps."""

from __future__ import annotations

import asyncio
import importlib
import signal
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import structlog
from temporalio.client import Client, Interceptor
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Worker

from activities import SUPPORT_ACTIVITIES, TRIAL_ACTIVITIES
from ontrial.errors import ConfigError, InfraError
from ontrial.models.trial import SandboxSettings
from workflows import ALL_WORKFLOWS

from .config import WorkerConfig
from .schedules import ensure_reaper_schedule

log = structlog.get_logger(__name__)

HEARTBEAT_THROTTLE = timedelta(seconds=3)


async def connect(address: str, namespace: str = "default",
                  interceptors: list[Interceptor] | None = None) -> Client:
    """A client with the pydantic data converter (workers inherit it from their client)."""
    return await Client.connect(address, namespace=namespace, data_converter=pydantic_data_converter,
                                interceptors=interceptors or [])


def build_worker(client: Client, task_queue: str, *,
                 graceful_shutdown: timedelta = timedelta(seconds=60),
                 max_concurrent_activities: int = 50,
                 trial_activities: Sequence[Callable[..., Any]] = TRIAL_ACTIVITIES) -> Worker:
    """Every ontrial workflow and activity on one queue.

    ``trial_activities`` replaces the six trial steps (``activities.instant`` for orchestration-only runs).

    ``graceful_shutdown`` lets a running agent step finish (or see its cancellation) when the
    worker is stopped, instead of being cut off and ending its trial as an infra error.
    Heartbeats are sent at least every ``HEARTBEAT_THROTTLE``: a cancel reaches a running step
    with its next heartbeat, so this bounds how long a cancelled trial keeps its agent running.
    """
    return Worker(
        client,
        task_queue=task_queue,
        workflows=ALL_WORKFLOWS,
        activities=[*trial_activities, *SUPPORT_ACTIVITIES],
        graceful_shutdown_timeout=graceful_shutdown,
        max_concurrent_activities=max_concurrent_activities,
        max_heartbeat_throttle_interval=HEARTBEAT_THROTTLE,
        default_heartbeat_throttle_interval=HEARTBEAT_THROTTLE,
    )


async def run_worker(config: WorkerConfig, interceptors: list[Interceptor] | None = None) -> None:
    """Serve until SIGINT/SIGTERM, then shut down gracefully."""
    for module in config.agent_modules:
        try:
            importlib.import_module(module)
        except ImportError as err:
            raise ConfigError(f"agent module {module}: {err}") from err
    if config.artifacts:
        Path(config.artifacts).mkdir(parents=True, exist_ok=True)
    try:
        client = await connect(config.temporal_address, config.temporal_namespace, interceptors)
    except RuntimeError as err:
        raise InfraError(f"cannot reach Temporal at {config.temporal_address}: {err}") from err
    if config.kubeconfig and config.reaper_every:
        settings = SandboxSettings(kubeconfig=config.kubeconfig, kind=config.sandbox_kind)  # type: ignore[arg-type]
        await ensure_reaper_schedule(client, settings, config.task_queue, config.reaper_every)
    worker = build_worker(client, config.task_queue, graceful_shutdown=config.graceful_shutdown,
                          max_concurrent_activities=config.max_concurrent_activities)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    log.info("worker.started", address=config.temporal_address, namespace=config.temporal_namespace,
             task_queue=config.task_queue, reaper=bool(config.kubeconfig and config.reaper_every),
             api_port=config.api_port)
    async with worker:
        if config.api_port:
            from .api import GateApi, serve
            from .config import api_settings

            await serve(GateApi(client, api_settings(config)), config.api_host, config.api_port, stop)
        else:
            await stop.wait()
        log.info("worker.stopping", graceful_seconds=config.graceful_shutdown.total_seconds())
    log.info("worker.stopped")
