"""A live progress line, fed by the suites' ``progress`` queries.

On a terminal the line is redrawn in place; otherwise (CI logs, pipes) a line is printed only
when the numbers change.
"""

from __future__ import annotations

import sys
from typing import TextIO

from .table import tally


class ProgressLine:
    def __init__(self, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self._last = ""

    def show(self, *, total: int, done: int, running: int, by_outcome: dict[str, int]) -> None:
        text = f"trials: {done}/{total} done, {running} running"
        counts = tally(by_outcome)
        if counts:
            text += f" | {counts}"
        if text == self._last:
            return
        if self.live:
            self.stream.write("\r\x1b[2K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self._last = text

    def close(self) -> None:
        if self.live and self._last:
            self.stream.write("\n")
            self.stream.flush()
        self._last = ""

    def note(self, message: str) -> None:
        """A message on its own line, without garbling the live line."""
        if self.live and self._last:
            self.stream.write("\r\x1b[2K")
        self.stream.write(message + "\n")
        if self.live and self._last:
            self.stream.write(self._last)
        self.stream.flush()
