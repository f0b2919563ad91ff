"""The ``ontrial`` command line: ``run``, ``tasks validate``, ``reap`` (exit codes: ``exits``)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence

from ..errors import ConfigError, InfraError, OntrialError
from ..logging import configure_logging
from .exits import EXIT_BAD_INPUT, EXIT_INFRA


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ontrial", description="Put AI SRE agents on trial.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details to stderr")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run k trials of each task per agent and print the verdicts")
    run.add_argument("tasks", help="a task.yaml or a directory of tasks")
    run.add_argument("--agent", dest="agents", action="append", default=[], metavar="KIND",
                     help="agent kind to put on trial; repeat to compare agents (default: reference)")
    run.add_argument("--trials", type=int, default=1, help="trials per task and agent (k)")
    run.add_argument("--concurrency", type=int, default=4, help="trials running at once per agent")
    run.add_argument("--temporal-address", default=os.environ.get("TEMPORAL_ADDRESS"),
                     help="Temporal frontend host:port (default: start a local dev server)")
    run.add_argument("--temporal-namespace", default=os.environ.get("TEMPORAL_NAMESPACE", "default"))
    run.add_argument("--task-queue", default=os.environ.get("ONTRIAL_TASK_QUEUE", "ontrial"))
    run.add_argument("--kubeconfig", default=os.environ.get("ONTRIAL_KUBECONFIG"),
                     help="admin kubeconfig of the sandbox cluster (default: start an embedded kubesim)")
    run.add_argument("--sandbox-kind", choices=["kubesim", "kubernetes"], default=os.environ.get("ONTRIAL_SANDBOX_KIND"),
                     help="what --kubeconfig points at: kubesim (its clock is advanced) or kubernetes (waited on; "
                          "the default with --kubeconfig)")
    run.add_argument("--artifacts", default=os.environ.get("ONTRIAL_ARTIFACTS", ".artifacts"),
                     help="artifact directory (transcripts, audit logs, snapshots, run logs)")
    run.add_argument("--run-id", help="suite id prefix (default: run-<utc time>-<random>)")
    run.add_argument("--no-worker", dest="worker", action="store_false",
                     help="do not run an in-process worker (external `python -m worker` processes serve the queue)")
    run.add_argument("--agent-module", dest="agent_modules", action="append", default=[], metavar="MODULE",
                     help="import MODULE first (it registers extra agent kinds)")

    tasks = commands.add_parser("tasks", help="work with task files").add_subparsers(
        dest="tasks_command", required=True, metavar="SUBCOMMAND")
    validate = tasks.add_parser("validate", help="check task files (schema, answer leaks, references)")
    validate.add_argument("paths", nargs="+", help="task.yaml files or directories")
    validate.add_argument("--on-cluster", action="store_true",
                          help="also run each task for real (healthy → the fault fails the checks → the reference "
                               "solution passes, repeatedly; the noop agent fails) on --kubeconfig or an embedded "
                               "kubesim")
    validate.add_argument("--kubeconfig", default=os.environ.get("ONTRIAL_KUBECONFIG"))
    validate.add_argument("--sandbox-kind", choices=["kubesim", "kubernetes"],
                          default=os.environ.get("ONTRIAL_SANDBOX_KIND"))
    validate.add_argument("--reference-trials", type=int, default=5,
                          help="with --on-cluster: reference trials per task (all must pass)")
    validate.add_argument("--no-noop", dest="noop", action="store_false",
                          help="with --on-cluster: skip the noop trial (which must fail)")
    validate.add_argument("--concurrency", type=int, default=4, help="with --on-cluster: trials at once")

    reap = commands.add_parser("reap", help="delete trial namespaces whose TTL has passed")
    reap.add_argument("--kubeconfig", default=os.environ.get("ONTRIAL_KUBECONFIG"), required=False)
    reap.add_argument("--context")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(json=False, level=logging.INFO if args.verbose else logging.ERROR)
    try:
        return asyncio.run(_dispatch(args))
    except ConfigError as err:
        print(f"ontrial: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (InfraError, OntrialError) as err:
        print(f"ontrial: {err}", file=sys.stderr)
        return EXIT_INFRA
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("ontrial: interrupted", file=sys.stderr)
        return EXIT_INFRA


async def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "run":
        from .commands import run_command

        return await run_command(args)
    if args.command == "tasks":
        from .commands import validate_command

        return await validate_command(args)
    from .commands import reap_command

    return await reap_command(args)


if __name__ == "__main__":
    sys.exit(main())
