"""In-memory time series on the simulated clock, bounded by retention, partitioned by namespace.

Every scrape appends one instant to a shared timeline; a series stores only its values, aligned to
that timeline (8 bytes a sample). A series missing from a scrape gets one stale marker (NaN), as
Prometheus writes when a target or series disappears, so instant queries stop returning it at
once instead of after the 5-minute look-back. Deleting a namespace drops its series in one step.
"""

from __future__ import annotations

import math
import re
from array import array
from bisect import bisect_right
from dataclasses import dataclass
from typing import Iterable, Iterator

Labels = tuple[tuple[str, str], ...]
NAME = "__name__"
STALE = float("nan")


def labels_of(mapping: dict[str, str]) -> Labels:
    return tuple(sorted((k, v) for k, v in mapping.items() if v != ""))


@dataclass(frozen=True)
class Matcher:
    name: str
    op: str  # "=", "!=", "=~", "!~"
    value: str

    def compiled(self) -> "re.Pattern[str] | None":
        if self.op in ("=~", "!~"):
            return _regex(self.value)
        return None


_REGEX_CACHE: dict[str, "re.Pattern[str]"] = {}


def _regex(text: str) -> "re.Pattern[str]":
    pat = _REGEX_CACHE.get(text)
    if pat is None:
        pat = re.compile(f"(?:{text})\\Z", re.DOTALL)
        if len(_REGEX_CACHE) > 2048:
            _REGEX_CACHE.clear()
        _REGEX_CACHE[text] = pat
    return pat


def matches(lmap: dict[str, str], matchers: Iterable[Matcher]) -> bool:
    for m in matchers:
        value = lmap.get(m.name, "")
        if m.op == "=":
            ok = value == m.value
        elif m.op == "!=":
            ok = value != m.value
        elif m.op == "=~":
            ok = _regex(m.value).match(value) is not None
        else:
            ok = _regex(m.value).match(value) is None
        if not ok:
            return False
    return True


class Series:
    __slots__ = ("labels", "lmap", "start", "values")

    def __init__(self, labels: Labels, start: int):
        self.labels = labels
        self.lmap = dict(labels)
        self.start = start  # absolute timeline index of values[0]
        self.values = array("d")

    @property
    def end(self) -> int:
        """Absolute index of the last value written (start - 1 when empty)."""
        return self.start + len(self.values) - 1

    def write(self, idx: int, value: float) -> None:
        end = self.end
        if end == idx:
            self.values[-1] = value
            return
        if end < idx - 1:
            # Scraped series only have gaps after a stale marker; rule series carry their last value.
            fill = self.values[-1] if self.values else STALE
            self.values.extend([fill] * (idx - 1 - end))
        self.values.append(value)


class Bucket:
    """One namespace's series ("" holds cluster-scoped ones)."""

    def __init__(self) -> None:
        self.series: dict[Labels, Series] = {}
        self.by_name: dict[str, dict[Labels, Series]] = {}
        self.alive: set[Labels] = set()  # scraped series expected in the next scrape
        self.owned: dict[str, set[Labels]] = {}  # series written by a rule, by rule key

    def get(self, labels: Labels, idx: int) -> Series:
        s = self.series.get(labels)
        if s is None:
            s = Series(labels, idx)
            self.series[labels] = s
            self.by_name.setdefault(s.lmap.get(NAME, ""), {})[labels] = s
        return s

    def remove(self, s: Series) -> None:
        self.series.pop(s.labels, None)
        self.alive.discard(s.labels)
        name = s.lmap.get(NAME, "")
        group = self.by_name.get(name)
        if group is not None:
            group.pop(s.labels, None)
            if not group:
                del self.by_name[name]

    def candidates(self, matchers: list[Matcher]) -> Iterable[Series]:
        for m in matchers:
            if m.name == NAME and m.op == "=":
                return list(self.by_name.get(m.value, {}).values())
        out: list[Series] = []
        name_matchers = [m for m in matchers if m.name == NAME]
        for name, group in self.by_name.items():
            if matches({NAME: name}, name_matchers):
                out.extend(group.values())
        return out


class TSDB:
    def __init__(self, retention_seconds: float = 3 * 3600.0, scrape_interval: float = 15.0):
        self.retention = retention_seconds
        self.interval = scrape_interval
        self.times = array("d")  # unix seconds of each scrape
        self.base = 0  # absolute index of times[0]
        self.buckets: dict[str, Bucket] = {}

    # -- writes -----------------------------------------------------------------------------------
    def append(self, t: float, samples: dict[str, list[tuple[Labels, float]]]) -> int:
        """Record one scrape at unix time ``t``: namespace → [(labels, value)]. Returns its index."""
        if self.times and t <= self.times[-1]:
            return self.base + len(self.times) - 1
        self.times.append(t)
        idx = self.base + len(self.times) - 1
        written: dict[str, set[Labels]] = {}
        for ns, items in samples.items():
            bucket = self.buckets.get(ns)
            if bucket is None:
                bucket = self.buckets[ns] = Bucket()
            series = bucket.series
            seen = written.setdefault(ns, set())
            for labels, value in items:
                s = series.get(labels)
                if s is None:
                    s = bucket.get(labels, idx)
                if s.start + len(s.values) == idx:
                    s.values.append(value)
                else:
                    s.write(idx, value)
                seen.add(labels)
        for ns, bucket in self.buckets.items():
            now_alive = written.get(ns, set())
            for lb in bucket.alive - now_alive:
                s = bucket.series.get(lb)
                if s is not None and s.end < idx:
                    s.write(idx, STALE)
            bucket.alive = now_alive
        self._trim()
        return idx

    def _trim(self) -> None:
        keep = int(self.retention / self.interval) + 1
        if len(self.times) <= keep + max(8, keep // 4):
            return
        cut = len(self.times) - keep
        del self.times[:cut]
        self.base += cut
        for bucket in list(self.buckets.values()):
            for s in list(bucket.series.values()):
                if s.end < self.base:
                    bucket.remove(s)
                elif s.start < self.base:
                    del s.values[: self.base - s.start]
                    s.start = self.base

    def write_owned(self, namespace: str, owner: str, samples: list[tuple[Labels, float]]) -> None:
        """Series a rule produced at the latest scrape instant; the ones it stopped producing go stale."""
        if not self.times:
            return
        idx = self.base + len(self.times) - 1
        bucket = self.buckets.get(namespace)
        if bucket is None:
            bucket = self.buckets[namespace] = Bucket()
        produced = set()
        for labels, value in samples:
            bucket.get(labels, idx).write(idx, value)
            produced.add(labels)
        for labels in bucket.owned.get(owner, set()) - produced:
            s = bucket.series.get(labels)
            if s is not None:
                s.write(idx, STALE)
        bucket.owned[owner] = produced

    def drop_owner(self, namespace: str, owner: str) -> None:
        self.write_owned(namespace, owner, [])
        bucket = self.buckets.get(namespace)
        if bucket is not None:
            bucket.owned.pop(owner, None)

    def drop_namespace(self, namespace: str) -> None:
        self.buckets.pop(namespace, None)

    # -- reads ------------------------------------------------------------------------------------
    def _buckets(self, namespace: str | None, matchers: list[Matcher]) -> Iterator[tuple[str, Bucket]]:
        if namespace is not None:
            b = self.buckets.get(namespace)
            if b is not None:
                yield namespace, b
            return
        for m in matchers:
            if m.name == "namespace" and m.op == "=":
                b = self.buckets.get(m.value)
                if b is not None:
                    yield m.value, b
                return
        yield from list(self.buckets.items())

    def index_range(self, mint: float, maxt: float) -> tuple[int, int]:
        """Absolute indices [lo, hi) of scrapes with mint < t <= maxt."""
        return self.base + bisect_right(self.times, mint), self.base + bisect_right(self.times, maxt)

    def select(self, matchers: list[Matcher], mint: float, maxt: float,
               namespace: str | None = None) -> list[tuple[Series, list[float], list[float]]]:
        """Series matching ``matchers`` with their raw samples (stale markers included) in (mint, maxt]."""
        lo, hi = self.index_range(mint, maxt)
        out = []
        if lo >= hi:
            return out
        for _, bucket in self._buckets(namespace, matchers):
            for s in bucket.candidates(matchers):
                a, b = max(lo, s.start), min(hi, s.end + 1)
                if a >= b or not matches(s.lmap, matchers):
                    continue
                times = self.times[a - self.base: b - self.base].tolist()
                out.append((s, times, s.values[a - s.start: b - s.start].tolist()))
        return out

    def series_in(self, matchers: list[Matcher], mint: float, maxt: float,
                  namespace: str | None = None) -> list[Series]:
        """Series with at least one real sample in (mint, maxt]."""
        return [s for s, _, values in self.select(matchers, mint, maxt, namespace)
                if any(not math.isnan(v) for v in values)]

    def all_series(self, mint: float, maxt: float, namespace: str | None = None) -> list[Series]:
        lo, hi = self.index_range(mint, maxt)
        out = []
        for _, bucket in self._buckets(namespace, []):
            for s in bucket.series.values():
                a, b = max(lo, s.start), min(hi, s.end + 1)
                if a < b and any(not math.isnan(s.values[i - s.start]) for i in range(a, b)):
                    out.append(s)
        return out

    def stats(self) -> dict[str, int]:
        series = sum(len(b.series) for b in self.buckets.values())
        samples = sum(len(s.values) for b in self.buckets.values() for s in b.series.values())
        return {"namespaces": len(self.buckets), "series": series, "samples": samples, "scrapes": len(self.times)}
