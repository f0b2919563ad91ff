"""Where suite runs and baselines are kept: SQLite by default, any SQLAlchemy database URL for teams."""

from .store import ResultsStore, RunSummary

__all__ = ["ResultsStore", "RunSummary"]
