"""One logging setup for ontrial's structlog events and the stdlib loggers (Temporal SDK, httpx).

The worker logs JSON lines (one event per line, machine-readable); the CLI logs a short console
form to stderr so it does not fight with the progress line. Call ``configure_logging`` once, at
process start.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog


def configure_logging(*, json: bool = False, level: str | int = "INFO", stream: TextIO | None = None) -> None:
    level_no = logging.getLevelName(level.upper()) if isinstance(level, str) else level
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if json:
        rendering = [structlog.processors.dict_tracebacks, structlog.processors.JSONRenderer()]
    else:
        rendering = [structlog.dev.ConsoleRenderer(colors=False)]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*shared, structlog.stdlib.ExtraAdder()],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *rendering],
    )
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level_no)
