"""The simulated clock every kubesim component reads.

Real time by default, faster with ``time_scale``, frozen with ``time_scale=0``; ``advance()``
adds simulated time on top, so tests can "let five minutes pass" without sleeping.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)


class SimClock:
    """Monotonic simulated time: ``start + (real elapsed × scale) + manual advances``."""

    def __init__(self, time_scale: float = 1.0, start: datetime | None = None) -> None:
        if time_scale < 0:
            raise ValueError("time_scale must be >= 0")
        self.time_scale = time_scale
        self._start = start or datetime.now(timezone.utc).replace(microsecond=0)
        self._real0 = time.monotonic()
        self._offset = 0.0

    def seconds(self) -> float:
        """Simulated seconds since the clock started."""
        return (time.monotonic() - self._real0) * self.time_scale + self._offset

    def now(self) -> datetime:
        return self._start + timedelta(seconds=self.seconds())

    def at(self, seconds: float) -> datetime:
        """The wall datetime of a simulated instant."""
        return self._start + timedelta(seconds=seconds)

    def set_to(self, seconds: float) -> None:
        """Move forward to an absolute simulated instant (never backwards)."""
        delta = seconds - self.seconds()
        if delta > 0:
            self._offset += delta

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        self._offset += seconds


def rfc3339(dt: datetime) -> str:
    """Kubernetes timestamp format (second precision, Z suffix)."""
    u = dt.astimezone(timezone.utc)  # formatted by hand: strftime is a hot spot in controller passes
    return f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}Z"


def parse_rfc3339(value: str) -> datetime:
    return datetime.strptime(value.replace(".000000", "")[:20], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
