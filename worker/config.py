"""Worker settings: flags override environment variables, which override defaults."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from datetime import timedelta

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


def parse_args(argv: list[str] | None = None, env: dict[str, str] | None = None) -> WorkerConfig:
    env = dict(os.environ if env is None else env)
    parser = argparse.ArgumentParser(prog="python -m worker", description="Run an ontrial Temporal worker.")
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
    )
