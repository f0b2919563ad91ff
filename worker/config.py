"""Worker settings: flags override environment variables, which override defaults."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from datetime import timedelta

from .api_models import ApiSettings

DEFAULT_TASK_QUEUE = "ontrial"


@dataclass(frozen=True)
class WorkerConfig:
    temporal_address: str = "localhost:7233"
    temporal_namespace: str = "default"
    task_queue: str = DEFAULT_TASK_QUEUE
    kubeconfig: str | None = None
    """Admin kubeconfig of the sandbox cluster; enables the reaper schedule."""
    sandbox_kind: str = "kubernetes"
    """What the kubeconfig points at: kubesim | kubernetes (as in SandboxSettings.kind)."""
    artifacts: str | None = None
    """Artifact root the worker writes to; created at startup so a misconfigured worker fails fast."""
    graceful_shutdown: timedelta = timedelta(seconds=60)
    """How long running steps (an agent mid-trial) may finish after SIGTERM before they are cancelled."""
    max_concurrent_activities: int = 50
    reaper_every: timedelta | None = timedelta(minutes=10)
    agent_modules: tuple[str, ...] = ()
    """Modules imported at startup; they register extra agent kinds (``ontrial.agents.register_agent``)."""
    tracing: bool = False
    log_json: bool = True
    log_level: str = "INFO"
    results_url: str = "sqlite:///.ontrial/results.db"
    """Results store for runs the API or a schedule starts (a SQLAlchemy URL)."""
    api_port: int | None = None
    """Serve the HTTP API (``worker.api``) on this port next to the worker; None: no API."""
    api_host: str = "127.0.0.1"
    api_tasks: str | None = None
    """Default task path of API-started gate runs (as the workers see it)."""
    api_agent: str = "reference"
    api_trials: int = 5
    api_decision_window: timedelta = timedelta(hours=24)
    api_promote_on_pass: bool = False


def parse_args(argv: list[str] | None = None, env: dict[str, str] | None = None, api: bool = False) -> WorkerConfig:
    """The worker's settings; with ``api``, for ``python -m worker.api`` (the HTTP API alone)."""
    env = dict(os.environ if env is None else env)
    parser = argparse.ArgumentParser(
        prog="python -m worker.api" if api else "python -m worker",
        description="Serve the ontrial HTTP API." if api else "Run an ontrial Temporal worker.")
    parser.add_argument("--temporal-address", default=env.get("TEMPORAL_ADDRESS", WorkerConfig.temporal_address))
    parser.add_argument("--temporal-namespace",
                        default=env.get("TEMPORAL_NAMESPACE", WorkerConfig.temporal_namespace))
    parser.add_argument("--task-queue", default=env.get("ONTRIAL_TASK_QUEUE", DEFAULT_TASK_QUEUE))
    parser.add_argument("--kubeconfig", default=env.get("ONTRIAL_KUBECONFIG"))
    parser.add_argument("--sandbox-kind", choices=["kubesim", "kubernetes"],
                        default=env.get("ONTRIAL_SANDBOX_KIND", "kubernetes"))
    parser.add_argument("--artifacts", default=env.get("ONTRIAL_ARTIFACTS"))
    parser.add_argument("--graceful-shutdown-seconds", type=float,
                        default=float(env.get("ONTRIAL_GRACEFUL_SHUTDOWN_SECONDS", 60)))
    parser.add_argument("--max-concurrent-activities", type=int,
                        default=int(env.get("ONTRIAL_MAX_CONCURRENT_ACTIVITIES", 50)))
    parser.add_argument("--reaper-every-minutes", type=float,
                        default=float(env.get("ONTRIAL_REAPER_EVERY_MINUTES", 10)),
                        help="reaper schedule period (needs --kubeconfig); 0 disables it")
    parser.add_argument("--agent-module", dest="agent_modules", action="append",
                        default=[m for m in env.get("ONTRIAL_AGENT_MODULES", "").split(",") if m],
                        help="import this module at startup to register agent kinds (repeatable)")
    parser.add_argument("--tracing", action=argparse.BooleanOptionalAction,
                        default=env.get("ONTRIAL_TRACING", "") in ("1", "true", "yes"))
    parser.add_argument("--log-format", choices=["json", "console"], default=env.get("ONTRIAL_LOG_FORMAT", "json"))
    parser.add_argument("--log-level", default=env.get("ONTRIAL_LOG_LEVEL", "INFO"))
    _api_flags(parser, env, api)
    args = parser.parse_args(argv)
    return WorkerConfig(
        temporal_address=args.temporal_address,
        temporal_namespace=args.temporal_namespace,
        task_queue=args.task_queue,
        kubeconfig=args.kubeconfig or None,
        sandbox_kind=args.sandbox_kind,
        artifacts=args.artifacts or None,
        graceful_shutdown=timedelta(seconds=args.graceful_shutdown_seconds),
        max_concurrent_activities=args.max_concurrent_activities,
        reaper_every=timedelta(minutes=args.reaper_every_minutes) if args.reaper_every_minutes > 0 else None,
        agent_modules=tuple(args.agent_modules),
        tracing=args.tracing,
        log_json=args.log_format == "json",
        log_level=args.log_level,
        results_url=args.results,
        api_port=args.api_port,
        api_host=args.api_host,
        api_tasks=args.api_tasks,
        api_agent=args.api_agent,
        api_trials=args.api_trials,
        api_decision_window=timedelta(hours=args.api_decision_window_hours),
        api_promote_on_pass=args.api_promote_on_pass,
    )


def _api_flags(parser: argparse.ArgumentParser, env: dict[str, str], api: bool) -> None:
    port = env.get("ONTRIAL_API_PORT")
    parser.add_argument("--results", default=env.get("ONTRIAL_RESULTS_URL", WorkerConfig.results_url),
                        help="results store (SQLAlchemy URL) of runs the API or a schedule starts")
    parser.add_argument("--port" if api else "--api-port", dest="api_port", type=int,
                        default=int(port) if port else (8080 if api else None),
                        help="HTTP API port" + ("" if api else " (default: no API)"))
    parser.add_argument("--host" if api else "--api-host", dest="api_host",
                        default=env.get("ONTRIAL_API_HOST", WorkerConfig.api_host))
    parser.add_argument("--api-tasks", default=env.get("ONTRIAL_API_TASKS"),
                        help="default task path of gate runs started by POST /v1/model-alias-changed")
    parser.add_argument("--api-agent", default=env.get("ONTRIAL_API_AGENT", WorkerConfig.api_agent))
    parser.add_argument("--api-trials", type=int, default=int(env.get("ONTRIAL_API_TRIALS", WorkerConfig.api_trials)))
    parser.add_argument("--api-decision-window-hours", type=float,
                        default=float(env.get("ONTRIAL_API_DECISION_WINDOW_HOURS", 24)),
                        help="how long a failed gate of an API-started run waits for an override")
    parser.add_argument("--api-promote-on-pass", action="store_true",
                        default=env.get("ONTRIAL_API_PROMOTE_ON_PASS", "") in ("1", "true", "yes"))


def api_settings(config: WorkerConfig) -> ApiSettings:
    """What API-started runs use: this worker's queue, cluster and artifact root, and the API defaults."""
    return ApiSettings(task_queue=config.task_queue, tasks=config.api_tasks, kubeconfig=config.kubeconfig,
                       sandbox_kind=config.sandbox_kind, artifacts=config.artifacts or ".artifacts",
                       results_url=config.results_url, agent=config.api_agent, trials=config.api_trials,
                       decision_window=config.api_decision_window, promote_on_pass=config.api_promote_on_pass)
