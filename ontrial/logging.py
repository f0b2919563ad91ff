"""One logging setup for ontrial's structlog events and the stdlib loggers (Temporal SDK, httpx).

The worker logs JSON lines (one event per line, machine-readable); the CLI logs a short console
form to stderr, errors only by default, so it does not fight with the progress line, and keeps
the full story in a JSON log file of the run. Call ``configure_logging`` once, at process start.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TextIO

import structlog

_SHARED: list[structlog.types.Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def _formatter(json: bool) -> logging.Formatter:
    if json:
        rendering = [structlog.processors.dict_tracebacks, structlog.processors.JSONRenderer()]
    else:
        rendering = [structlog.dev.ConsoleRenderer(colors=False)]
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*_SHARED, structlog.stdlib.ExtraAdder()],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *rendering],
    )


def _level(level: str | int) -> int:
    return logging.getLevelName(level.upper()) if isinstance(level, str) else level


def configure_logging(*, json: bool = False, level: str | int = "INFO", stream: TextIO | None = None) -> None:
    structlog.configure(
        processors=[*_SHARED, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(_formatter(json))
    handler.setLevel(_level(level))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(_level(level))


def add_log_file(path: Path, level: str | int = "INFO") -> logging.Handler:
    """Also write JSON lines at ``level`` to ``path`` (other handlers keep their own levels)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(_formatter(json=True))
    handler.setLevel(_level(level))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(min(root.level, handler.level))
    return handler
