"""Application metrics of service instances, accumulated scrape by scrape from the request flow.

Counters are integers driven by expected counts with a carried remainder, so a 0.1% error ratio
shows up as an occasional single error rather than fractional noise. Histograms spread each
outcome mode log-normally over the buckets. A container restart resets its counters, as a real
process restart does (PromQL's rate() copes with the reset).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..workloads.logstream import stable_int
from .graph import Instance
from .traffic import CODES, Flow, Mode, Outcome
from .tsdb import Labels

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, math.inf)
OUTCOME_LABEL = {"ok": "success", "dep_error": "error", "refused": "connection_refused", "timeout": "timeout",
                 "dns": "dns_error", "config": "config_error", "unauthorized": "unauthorized"}
REJECT_SECONDS = 0.002


def _le(bound: float) -> str:
    return "+Inf" if math.isinf(bound) else repr(bound).rstrip("0").rstrip(".") if "." in repr(bound) else repr(bound)


LE = tuple(_le(b) for b in BUCKETS)


def jitter(spread: float, *key: Any) -> float:
    return 1.0 + spread * ((stable_int(*key) % 2001) / 1000.0 - 1.0)


def _cdf(x: float, median: float, sigma: float) -> float:
    if math.isinf(x):
        return 1.0
    if median <= 0:
        return 1.0
    return 0.5 * (1.0 + math.erf((math.log(x) - math.log(median)) / (sigma * math.sqrt(2))))


@dataclass
class Counter:
    """An integer counter fed by expected (fractional) increments."""

    value: int = 0
    carry: float = 0.0

    def add(self, expected: float) -> int:
        total = expected + self.carry
        n = int(math.floor(total + 1e-9))
        self.carry = total - n
        self.value += n
        return n


@dataclass
class AppState:
    container_id: str
    requests: dict[str, Counter] = field(default_factory=dict)
    buckets: list[int] = field(default_factory=lambda: [0] * len(BUCKETS))
    duration_sum: float = 0.0
    client: dict[tuple[str, str], Counter] = field(default_factory=dict)
    client_sum: dict[str, float] = field(default_factory=dict)
    client_count: dict[str, int] = field(default_factory=dict)
    data: dict[str, Counter] = field(default_factory=dict)
    labels: dict[Any, Labels] = field(default_factory=dict)  # label sets built once per container

    @property
    def count(self) -> int:
        return self.buckets[-1]


@dataclass(frozen=True)
class Failure:
    """Failed calls of one instance during one scrape interval, for the application log."""

    instance: Instance
    call_name: str
    kind: str
    message: str
    count: int
    code: int
    required: bool


class AppMetrics:
    def __init__(self) -> None:
        self.states: dict[str, AppState] = {}

    def forget(self, keep: set[str]) -> None:
        for uid in [u for u in self.states if u not in keep]:
            del self.states[uid]

    def state(self, inst: Instance) -> AppState:
        st = self.states.get(inst.uid)
        if st is None or st.container_id != inst.container_id:
            st = self.states[inst.uid] = AppState(inst.container_id)
        return st

    def update(self, inst: Instance, flow: Flow, dt: float, tick: int) -> list[Failure]:
        """Advance one instance's counters by ``dt`` seconds of its current flow; returns the failures."""
        st = self.state(inst)
        out = flow.outcomes.get(inst.uid)
        rate = flow.rates.get(inst.uid, 0.0) * jitter(0.04, inst.uid, tick, "rate")
        rejected = flow.rejected.get(inst.uid, 0.0)
        failures: list[Failure] = []
        if out is not None and rate > 0:
            self._requests(st, out, rate * dt, inst, tick)
            failures = self._calls(st, inst, out, rate * dt)
            for dc in inst.behaviour.counters:
                if dc.active(inst.env):
                    ok = sum(m.fraction for m in out.modes if m.code == 200)
                    st.data.setdefault(dc.name, Counter()).add(rate * dt * ok * dc.per_request)
        if rejected > 0:
            n = st.requests.setdefault("401", Counter()).add(rejected * dt)
            self._observe(st, [Mode(401, 1.0, REJECT_SECONDS)], n, 0.3)
        return failures

    def _requests(self, st: AppState, out: Outcome, n_expected: float, inst: Instance, tick: int) -> None:
        by_code: dict[int, list[Mode]] = {}
        for m in out.modes:
            by_code.setdefault(m.code, []).append(m)
        scale = jitter(0.05, inst.uid, tick, "latency")
        for code, modes in sorted(by_code.items()):
            share = sum(m.fraction for m in modes)
            n = st.requests.setdefault(str(code), Counter()).add(n_expected * share)
            scaled = [Mode(m.code, m.fraction / share, m.latency * scale, m.cause) for m in modes]
            self._observe(st, scaled, n, out.sigma)

    @staticmethod
    def _observe(st: AppState, modes: list[Mode], n: int, sigma: float) -> None:
        if n <= 0:
            return
        for i, bound in enumerate(BUCKETS):
            st.buckets[i] += int(round(n * sum(m.fraction * _cdf(bound, m.latency, sigma) for m in modes)))
        st.duration_sum += n * sum(m.fraction * m.latency * math.exp(sigma * sigma / 2) for m in modes)

    def _calls(self, st: AppState, inst: Instance, out: Outcome, served: float) -> list[Failure]:
        failures = []
        for cf in out.calls:
            calls = served * cf.reach
            peer = cf.call.name
            for part in cf.parts:
                n = st.client.setdefault((peer, OUTCOME_LABEL[part.kind]), Counter()).add(calls * part.fraction)
                st.client_sum[peer] = st.client_sum.get(peer, 0.0) + n * part.latency
                st.client_count[peer] = st.client_count.get(peer, 0) + n
                if part.kind != "ok" and n > 0:
                    failures.append(Failure(inst, peer, part.kind, part.message, n, CODES[part.kind],
                                            cf.call.required))
        return failures

    def samples(self, inst: Instance) -> list[tuple[Labels, float]]:
        """The instance's application series (only ``up`` = 0 unless it is serving)."""
        if not inst.listening:
            return [(_labels("up", _base(inst)), 0.0)]
        st = self.state(inst)
        cache = st.labels
        if not cache:
            cache["base"] = _base(inst)  # type: ignore[assignment]
        base: dict[str, str] = cache["base"]  # type: ignore[assignment]

        def lb(key: Any, name: str, **extra: str) -> Labels:
            found = cache.get(key)
            if found is None:
                found = cache[key] = _labels(name, base, **extra)
            return found

        b = inst.behaviour
        out: list[tuple[Labels, float]] = [(lb("up", "up"), 1.0)]
        if "200" not in st.requests:
            st.requests["200"] = Counter()
        for code, c in sorted(st.requests.items()):
            out.append((lb(("req", code), "http_requests_total", code=code, method=b.method, handler=b.path),
                        float(c.value)))
        for i, count in enumerate(st.buckets):
            out.append((lb(("le", i), "http_request_duration_seconds_bucket", le=LE[i]), float(count)))
        out.append((lb("sum", "http_request_duration_seconds_sum"), st.duration_sum))
        out.append((lb("count", "http_request_duration_seconds_count"), float(st.count)))
        for (peer, outcome), c in sorted(st.client.items()):
            out.append((lb(("client", peer, outcome), "http_client_requests_total", peer=peer, outcome=outcome),
                        float(c.value)))
        for peer in sorted(st.client_sum):
            out.append((lb(("csum", peer), "http_client_request_duration_seconds_sum", peer=peer), st.client_sum[peer]))
            out.append((lb(("ccount", peer), "http_client_request_duration_seconds_count", peer=peer),
                        float(st.client_count[peer])))
        for dc in b.counters:
            c = st.data.get(dc.name)
            out.append((lb(("data", dc.name), dc.name), float(c.value if c else 0)))
        return out


def _base(inst: Instance) -> dict[str, str]:
    return {"namespace": inst.namespace, "pod": inst.pod_name, "service": inst.service, "job": inst.service,
            "instance": f"{inst.ip}:{inst.behaviour.port or 0}"}


def _labels(name: str, base: dict[str, str], **extra: str) -> Labels:
    d = dict(base)
    d.update(extra)
    d["__name__"] = name
    return tuple(sorted((k, v) for k, v in d.items() if v != ""))
