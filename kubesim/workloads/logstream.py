"""One container instance's log: fixed lines plus periodic lines generated lazily from the clock.

Fixed lines (start-up banner, fatal errors, shutdown) live in a bounded ring buffer. Periodic
"running" lines are never stored: they are a pure function of (seed, index), rendered only for
the window being read, so a container that runs for a simulated week costs no memory.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Callable

RING_LINES = 5000


@dataclass(frozen=True)
class Periodic:
    start: float  # sim seconds of the first line
    period: float
    templates: tuple[str, ...]
    raw: bool = False  # script output: printed verbatim, no placeholders
    until: float | None = None


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)((?:\[[^\]{}]*\])?)((?:![rsa])?)((?::[^{}]*)?)\}")


def stable_int(*parts: Any) -> int:
    text = "/".join(str(p) for p in parts)
    return int(hashlib.sha256(text.encode()).hexdigest()[:15], 16)


def render_template(template: str, fields: dict[str, Any]) -> str:
    """Fill the known ``{name}``, ``{name:spec}``, ``{name[key]}`` placeholders; leave any other
    brace text (JSON log lines, unknown names) exactly as written."""

    def sub(m: re.Match[str]) -> str:
        name, index, conv, spec = m.groups()
        if name not in fields:
            return m.group(0)
        try:
            return ("{x" + index + conv + spec + "}").format_map({"x": fields[name]})
        except (ValueError, AttributeError, IndexError, KeyError, TypeError):
            return m.group(0)

    return _PLACEHOLDER.sub(sub, template)


class LogStream:
    """Lines of one container instance, timestamped in simulated seconds."""

    def __init__(self, container_id: str, seed: str, wall: Callable[[float], datetime],
                 fields: dict[str, Any] | None = None):
        self.container_id = container_id
        self.seed = seed
        self.wall = wall
        self.fields = dict(fields or {})
        # (sim time, sequence, text, raw): templates are rendered when read, since most never are.
        self.fixed: deque[tuple[float, int, str, bool]] = deque(maxlen=RING_LINES)
        self.periodics: list[Periodic] = []
        self.finished_at: float | None = None
        self._seq = 0

    def add(self, t: float, text: str, raw: bool = False) -> None:
        """Append a line (multi-line text becomes several lines) written at sim time ``t``."""
        for line in text.split("\n"):
            self._seq += 1
            self.fixed.append((t, self._seq, line, raw))

    def add_many(self, t: float, lines: tuple[str, ...] | list[str], spread: float = 0.0) -> None:
        n = len(lines)
        for i, line in enumerate(lines):
            self.add(round(t + (spread * i / n if n else 0.0), 3), line)

    def start_periodic(self, start: float, period: float, templates: tuple[str, ...], raw: bool = False) -> None:
        self.stop_periodic(start)
        if templates and period > 0:
            self.periodics.append(Periodic(start, period, tuple(templates), raw))

    def stop_periodic(self, t: float) -> None:
        if self.periodics and self.periodics[-1].until is None:
            last = self.periodics[-1]
            self.periodics[-1] = Periodic(last.start, last.period, last.templates, last.raw, t)

    def truncate_after(self, t: float) -> None:
        """Forget lines the process never got to write (it died at ``t``)."""
        self.fixed = deque((entry for entry in self.fixed if entry[0] <= t + 1e-9), maxlen=RING_LINES)

    def finish(self, t: float) -> None:
        if self.finished_at is None:
            self.finished_at = t

    def _render(self, template: str, t: float, index: int) -> str:
        rng = random.Random(stable_int(self.seed, index))
        when = self.wall(t)
        fields = dict(self.fields)
        fields.update(
            now=when,
            time=when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z",
            clf_time=when.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            n=index,
            ms=rng.randint(1, 180),
            us=rng.randint(20, 900),
            bytes=rng.randint(200, 9000),
            rand=rng.randint(1000, 9999),
            port_ephemeral=rng.randint(32768, 60999),
            status=rng.choice((200, 200, 200, 200, 200, 200, 201, 204, 304)),
        )
        return render_template(template, fields)

    def lines(self, now: float) -> list[tuple[float, str]]:
        """All visible lines up to ``now`` (or the finish time), oldest first, capped to the ring size."""
        end = now if self.finished_at is None else min(now, self.finished_at)
        out = [(t, seq, text if raw else self._render(text, t, seq))
               for (t, seq, text, raw) in self.fixed if t <= end + 1e-9]
        for p in self.periodics:
            self._periodic_lines(p, end if p.until is None else min(end, p.until - 1e-6), out)
        out.sort(key=lambda x: (x[0], x[1]))
        if len(out) > RING_LINES:
            out = out[-RING_LINES:]
        return [(t, text) for t, _, text in out]

    def _periodic_lines(self, p: Periodic, end: float, out: list[tuple[float, int, str]]) -> None:
        if end >= p.start:
            last = int((end - p.start + 1e-9) // p.period)
            first = max(0, last - RING_LINES + 1)
            for k in range(first, last + 1):
                t = round(p.start + k * p.period, 3)
                template = p.templates[stable_int(self.seed, "tpl", k) % len(p.templates)]
                text = template if p.raw else self._render(template, t, 10**9 + k)
                for j, line in enumerate(text.split("\n")):
                    out.append((t, 10**9 + k * 64 + j, line))


def line_timestamp(wall: Callable[[float], datetime], t: float, index: int) -> str:
    """A realistic-looking, deterministic, strictly increasing nanosecond timestamp for a line."""
    dt = wall(t)
    nanos = (dt.microsecond * 1000) + 101_000 + (index % 997) * 1_009 + stable_int(t, index) % 991
    whole = dt.replace(microsecond=0) + timedelta(seconds=nanos // 1_000_000_000)
    frac = f"{nanos % 1_000_000_000:09d}".rstrip("0")
    return whole.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if frac else "") + "Z"
