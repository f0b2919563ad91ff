"""The ontrial worker process: ``python -m worker`` (see ``worker.config`` for its settings)."""

from .app import build_worker, connect, run_worker
from .config import WorkerConfig, parse_args

__all__ = ["WorkerConfig", "build_worker", "connect", "parse_args", "run_worker"]
