"""A live progress bar, fed by the suites' ``progress`` queries.

On a terminal the bar is redrawn in place; otherwise (CI logs, pipes) a line is printed only when
the numbers change, at most every few percent, so a 2,000-trial run does not print 2,000 lines.
"""

from __future__ import annotations

import sys
from typing import TextIO

from .table import tally

BAR_WIDTH = 24
PIPE_STEP = 0.05  # without a terminal: print again after this share of the trials


def render_bar(done: int, total: int, width: int = BAR_WIDTH) -> str:
    filled = int(width * done / total) if total else 0
    return "[" + "#" * filled + "-" * (width - filled) + "]"


class ProgressLine:
    def __init__(self, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self._last = ""
        self._last_done = -1

    def show(self, *, total: int, done: int, running: int, by_outcome: dict[str, int], status: str = "") -> None:
        share = f" ({done / total:.0%})" if total else ""
        text = f"{render_bar(done, total)} {done}/{total} trials{share}, {running} running"
        counts = tally(by_outcome)
        if counts:
            text += f" | {counts}"
        if status:
            text += f" | {status}"
        if text == self._last:
            return
        if self.live:
            self.stream.write("\r\x1b[2K" + text)
        else:
            step = max(1, int(total * PIPE_STEP))
            if done != total and self._last_done >= 0 and done - self._last_done < step and not status:
                return
            self.stream.write(text + "\n")
        self.stream.flush()
        self._last, self._last_done = text, done

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
