"""Reports of a suite run: JSON (everything), Markdown (a summary for humans), JUnit XML (for CI)."""

from .junit import to_junit
from .markdown import to_markdown
from .record import RunRecord

__all__ = ["RunRecord", "to_junit", "to_markdown"]
