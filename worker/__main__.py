"""``python -m worker``: run an ontrial Temporal worker (configuration: flags or environment)."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import NoReturn

import structlog

from ontrial.errors import ConfigError, OntrialError
from ontrial.logging import configure_logging
from ontrial.tracing import tracing_interceptors

from .app import run_worker
from .config import parse_args

log = structlog.get_logger("worker")


def exit_now(code: int) -> NoReturn:
    """Exit without interpreter finalization.

    The SDK's native runtime threads sometimes abort interpreter finalization (SIGABRT,
    "PyGILState_Release: thread state must be current"), turning a clean exit 0 or 1 into 134.
    Everything worth keeping is flushed by then: the worker has drained and logged its stop.
    """
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    config = parse_args(argv)
    configure_logging(json=config.log_json, level=config.log_level)
    interceptors = tracing_interceptors(config.tracing, service_name="ontrial-worker")
    try:
        asyncio.run(run_worker(config, interceptors))
    except ConfigError as err:
        log.error("worker.bad_configuration", error=str(err))
        return 2
    except OntrialError as err:
        log.error("worker.failed", error=str(err))
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    exit_now(main())
