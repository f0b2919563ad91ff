"""The ``ontrial`` command line.

``run`` (suites + gate), ``gate``, ``runs list``, ``report``, ``override``, ``baseline promote|show``,
``rerun``, ``regrade``, ``schedule nightly``, ``tasks validate``, ``tasks scan``, ``reap``. Arguments: ``parser``;
exit codes: ``exits`` (0 pass, 1 gate failed, 2 bad input, 3 inconclusive).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Sequence

from ..errors import ConfigError, InfraError, OntrialError
from ..logging import configure_logging
from .exits import EXIT_BAD_INPUT, EXIT_INFRA
from .parser import build_parser


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


#: command -> (module, function); modules load on use, so ``runs list`` does not pay for ``run``'s imports.
COMMANDS = {
    "run": ("commands", "run_command"), "tasks": ("commands", "tasks_command"),
    "reap": ("commands", "reap_command"), "gate": ("store_commands", "gate_command"),
    "runs": ("store_commands", "runs_command"), "report": ("store_commands", "report_command"),
    "override": ("store_commands", "override_command"), "baseline": ("store_commands", "baseline_command"),
    "rerun": ("rerun", "rerun_command"), "regrade": ("rerun", "regrade_command"),
    "schedule": ("schedule", "schedule_command"),
}


def _command(args: argparse.Namespace) -> Callable[[argparse.Namespace], Awaitable[int]]:
    module, function = COMMANDS[args.command]
    return getattr(importlib.import_module(f"{__package__}.{module}"), function)


async def _dispatch(args: argparse.Namespace) -> int:
    return await _command(args)(args)


def entry() -> None:
    """The console script: exit without interpreter finalization, where the Temporal SDK's native
    threads sometimes abort an otherwise clean shutdown (SIGABRT turns exit 0 into -6)."""
    code = main()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    entry()
