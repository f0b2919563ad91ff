"""Where the CLI finds the results store (kept light: the store commands should start fast)."""

from __future__ import annotations

from pathlib import Path

from ..results import ResultsStore

DEFAULT_RESULTS_URL = "sqlite:///.ontrial/results.db"


def absolute_store_url(url: str) -> str:
    """A SQLite URL with an absolute path, so workers in other directories write to the same file."""
    prefix = "sqlite:///"
    if url.startswith(prefix) and not url.startswith(prefix + "/") and url != prefix + ":memory:":
        return prefix + str(Path(url[len(prefix):]).resolve())
    return url


def open_store(url: str) -> ResultsStore:
    return ResultsStore(absolute_store_url(url))
