"""``python -m worker``: run an ontrial Temporal worker (configuration: flags or environment)."""

from __future__ import annotations

import asyncio
import sys

from ontrial.logging import configure_logging
from ontrial.tracing import tracing_interceptors

from .app import run_worker
from .config import parse_args


def main(argv: list[str] | None = None) -> int:
    config = parse_args(argv)
    configure_logging(json=config.log_json, level=config.log_level)
    interceptors = tracing_interceptors(config.tracing, service_name="ontrial-worker")
    try:
        asyncio.run(run_worker(config, interceptors))
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
