"""Standard 5-field cron schedules, as the CronJob controller parses them (robfig/cron ParseStandard).

Fields: minute hour day-of-month month day-of-week, each ``*``/``?``, values, ``a-b`` ranges, ``/step``
and comma lists; month and weekday names; descriptors ``@hourly`` … ``@yearly`` and ``@every 1h30m``;
an optional ``TZ=``/``CRON_TZ=`` prefix. When both day fields are restricted, either may match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_MONTHS = {n: i + 1 for i, n in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
_DAYS = {n: i for i, n in enumerate("sun mon tue wed thu fri sat".split())}
_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}
_BOUNDS = ((0, 59, {}), (0, 23, {}), (1, 31, {}), (1, 12, _MONTHS), (0, 6, _DAYS))
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(h|m|s|ms)")
_SEARCH_DAYS = 366 * 5


@dataclass(frozen=True)
class CronSchedule:
    minutes: frozenset[int] = frozenset()
    hours: frozenset[int] = frozenset()
    days: frozenset[int] = frozenset()
    months: frozenset[int] = frozenset()
    weekdays: frozenset[int] = frozenset()
    dom_star: bool = True
    dow_star: bool = True
    every_seconds: float | None = None
    tz: str | None = None

    def zone(self, default: str | None = None) -> tzinfo:
        name = self.tz or default
        return ZoneInfo(name) if name and name != "UTC" else timezone.utc

    def day_matches(self, d: date) -> bool:
        dom = d.day in self.days
        dow = (d.weekday() + 1) % 7 in self.weekdays
        if self.dom_star or self.dow_star:
            return dom and dow
        return dom or dow

    def next_after(self, t: datetime, time_zone: str | None = None) -> datetime | None:
        """The first activation strictly after ``t`` (aware datetime), in UTC; None if none within 5 years."""
        if self.every_seconds is not None:
            step = max(int(self.every_seconds), 1)
            return (t + timedelta(seconds=step)).replace(microsecond=0).astimezone(timezone.utc)
        zone = self.zone(time_zone)
        local = t.astimezone(zone)
        day = local.date()
        hours, minutes = sorted(self.hours), sorted(self.minutes)
        for _ in range(_SEARCH_DAYS):
            if day.month in self.months and self.day_matches(day):
                for h in hours:
                    for m in minutes:
                        candidate = datetime(day.year, day.month, day.day, h, m, tzinfo=zone)
                        if candidate > t:
                            return candidate.astimezone(timezone.utc)
            day += timedelta(days=1)
        return None


def parse_schedule(text: str) -> CronSchedule:
    """Parse a CronJob schedule; ValueError with a robfig-style message when malformed."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty spec string")
    spec = text.strip()
    tz = None
    if spec.startswith(("TZ=", "CRON_TZ=")):
        head, _, spec = spec.partition(" ")
        tz = head.split("=", 1)[1]
        check_time_zone(tz)
        spec = spec.strip()
    if spec.startswith("@every"):
        return CronSchedule(every_seconds=_parse_duration(spec[len("@every"):].strip()), tz=tz)
    if spec.startswith("@"):
        if spec not in _DESCRIPTORS:
            raise ValueError(f"unrecognized descriptor: {spec}")
        spec = _DESCRIPTORS[spec]
    fields = spec.split()
    if len(fields) != 5:
        raise ValueError(f"expected exactly 5 fields, found {len(fields)}: {fields}")
    parsed = [_parse_field(f, lo, hi, names) for f, (lo, hi, names) in zip(fields, _BOUNDS)]
    return CronSchedule(minutes=parsed[0][0], hours=parsed[1][0], days=parsed[2][0], months=parsed[3][0],
                        weekdays=parsed[4][0], dom_star=parsed[2][1], dow_star=parsed[4][1], tz=tz)


def check_time_zone(name: str) -> None:
    if name in ("", "UTC", "Local"):
        return
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as err:
        raise ValueError(f"unknown time zone {name}") from err


def _parse_field(field: str, lo: int, hi: int, names: dict[str, int]) -> tuple[frozenset[int], bool]:
    values: set[int] = set()
    star = False
    for part in field.split(","):
        part_values, part_star = _parse_range(part, lo, hi, names)
        values |= part_values
        star = star or part_star
    return frozenset(values), star


def _parse_range(expr: str, lo: int, hi: int, names: dict[str, int]) -> tuple[set[int], bool]:
    range_part, _, step_part = expr.partition("/")
    bounds = range_part.split("-")
    star = False
    if range_part in ("*", "?"):
        start, end, star = lo, hi, True
    else:
        if len(bounds) > 2:
            raise ValueError(f"too many hyphens: {expr}")
        start = _value(bounds[0], names)
        end = _value(bounds[1], names) if len(bounds) == 2 else start
    step = 1
    if step_part:
        step = _value(step_part, {})
        if step <= 0:
            raise ValueError(f"step of range should be a positive number: {expr}")
        if len(bounds) == 1 and not star:
            end = hi
        if step > 1:
            star = False
    if start < lo:
        raise ValueError(f"beginning of range ({start}) below minimum ({lo}): {expr}")
    if end > hi:
        raise ValueError(f"end of range ({end}) above maximum ({hi}): {expr}")
    if start > end:
        raise ValueError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    return set(range(start, end + 1, step)), star


def _value(text: str, names: dict[str, int]) -> int:
    lowered = text.lower()
    if lowered in names:
        return names[lowered]
    if not text.isdigit():
        raise ValueError(f"failed to parse int from {text}")
    return int(text)


def _parse_duration(text: str) -> float:
    if not text or _DURATION_PART.sub("", text):
        raise ValueError(f"failed to parse duration @every {text}")
    scale = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
    return sum(float(n) * scale[u] for n, u in _DURATION_PART.findall(text))
