"""The load generator and the request flow it causes, as steady rates between two scrapes.

The load generator is invisible: no pods, no objects. It sends each service's ``traffic.rps``
to that service's ready, listening instances. Every instance's request outcome is a small mixture
of *modes* (status code, share, median latency) composed from its own latency and error ratio and
the outcome of each call it makes; a broken link turns into refusals, time-outs or 401s at the
caller and, through the caller's status codes, at the caller's callers. Loads flow top-down over
the same links, so a callee behind a broken link receives no requests at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .behaviour import Call
from .graph import Instance, Link, Resolver

CODES = {"config": 500, "dns": 503, "refused": 503, "timeout": 504, "dep_error": 502, "unauthorized": 500}
REASONS = {500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
           401: "Unauthorized", 200: "OK"}
NETWORK_SECONDS = 0.0005
FAST_FAILURE_SECONDS = 0.0012
PLAIN_BACKEND_SECONDS = 0.002
EXTERNAL_SECONDS = 0.025


@dataclass(frozen=True)
class Mode:
    """A share of an instance's requests that end the same way."""

    code: int
    fraction: float
    latency: float  # median seconds
    cause: str = ""  # the dependency whose failure decided it ("" for success or own errors)


@dataclass(frozen=True)
class Part:
    """A share of one call's attempts: kind is ok | config | dns | refused | timeout | dep_error | unauthorized."""

    kind: str
    fraction: float
    latency: float
    message: str = ""


@dataclass
class CallFlow:
    call: Call
    link: Link
    reach: float  # calls made per request the caller serves
    parts: list[Part]


@dataclass
class Outcome:
    modes: list[Mode]
    calls: list[CallFlow]
    sigma: float


@dataclass
class Flow:
    """Per instance: request rates (per second) and the outcome of those requests."""

    outcomes: dict[str, Outcome] = field(default_factory=dict)
    rates: dict[str, float] = field(default_factory=dict)
    rejected: dict[str, float] = field(default_factory=dict)  # requests answered 401 (bad token)


def _merge_modes(modes: list[Mode]) -> list[Mode]:
    acc: dict[tuple[int, str], list[float]] = {}
    for m in modes:
        if m.fraction <= 0:
            continue
        slot = acc.setdefault((m.code, m.cause), [0.0, 0.0])
        slot[0] += m.fraction
        slot[1] += m.fraction * m.latency
    return [Mode(code, f, lat / f, cause) for (code, cause), (f, lat) in acc.items()]


def _merge_parts(parts: list[Part]) -> list[Part]:
    acc: dict[tuple[str, str], list[float]] = {}
    for p in parts:
        if p.fraction <= 0:
            continue
        slot = acc.setdefault((p.kind, p.message), [0.0, 0.0])
        slot[0] += p.fraction
        slot[1] += p.fraction * p.latency
    return [Part(kind, f, lat / f, msg) for (kind, msg), (f, lat) in acc.items()]


class FlowModel:
    """Computes one Flow for the current state of the cluster."""

    def __init__(self, cluster: Any, instances: dict[str, Instance], now: float):
        self.instances = instances
        self.resolver = Resolver(cluster, instances, now)
        self.flow = Flow()
        self._visiting: set[str] = set()

    def run(self) -> Flow:
        for uid in self.instances:
            self.outcome(uid)
        self._propagate_load()
        return self.flow

    # -- outcomes (bottom-up) ---------------------------------------------------------------------
    def outcome(self, uid: str) -> Outcome:
        done = self.flow.outcomes.get(uid)
        if done is not None:
            return done
        inst = self.instances[uid]
        b = inst.behaviour
        if uid in self._visiting:  # a call cycle: assume the inner hop answers plainly
            return Outcome([Mode(200, 1.0, b.latency.p50)], [], b.latency.sigma)
        self._visiting.add(uid)
        modes = [Mode(200, 1.0, b.latency.p50)]
        calls: list[CallFlow] = []
        for call in b.calls if inst.listening else ():
            link = self.resolver.link(inst, call)
            parts = self._parts(call, link)
            reach = sum(m.fraction for m in modes if m.code == 200)
            calls.append(CallFlow(call, link, reach * call.per_request, parts))
            calling = min(1.0, call.per_request)  # below 1: only that share of requests makes the call
            repeats = max(1.0, call.per_request)
            nxt: list[Mode] = []
            for m in modes:
                if m.code != 200:
                    nxt.append(m)
                    continue
                if calling < 1.0:
                    nxt.append(Mode(200, m.fraction * (1.0 - calling), m.latency))
                for p in parts:
                    share = m.fraction * calling * p.fraction
                    if p.kind == "ok" or not call.required:
                        extra = p.latency * repeats if p.kind == "ok" else p.latency
                        nxt.append(Mode(200, share, m.latency + extra))
                    else:
                        nxt.append(Mode(CODES[p.kind], share, m.latency + p.latency, call.name))
            modes = _merge_modes(nxt)
        if b.error_ratio > 0:
            split: list[Mode] = []
            for m in modes:
                if m.code == 200:
                    split.append(Mode(200, m.fraction * (1 - b.error_ratio), m.latency))
                    split.append(Mode(500, m.fraction * b.error_ratio, m.latency * 0.8))
                else:
                    split.append(m)
            modes = _merge_modes(split)
        self._visiting.discard(uid)
        out = Outcome(modes, calls, b.latency.sigma)
        self.flow.outcomes[uid] = out
        return out

    def _parts(self, call: Call, link: Link) -> list[Part]:
        if link.external:
            return [Part("ok", 1.0, EXTERNAL_SECONDS)]
        timeout = call.timeout_seconds
        if link.failure is not None:
            kind = "timeout" if link.failure == "dns_timeout" else link.failure
            latency = timeout if kind == "timeout" else FAST_FAILURE_SECONDS
            return [Part(kind, 1.0, latency, link.message)]
        if not link.endpoints:
            return [Part("ok", 1.0, PLAIN_BACKEND_SECONDS)]
        share = 1.0 / len(link.endpoints)
        timeout_msg = f'{call.method[:1]}{call.method[1:].lower()} "{link.url}": context deadline exceeded ' \
                      f"(Client.Timeout exceeded while awaiting headers)"
        parts: list[Part] = []
        for ep in link.endpoints:
            if ep.failure == "refused":
                parts.append(Part("refused", share, FAST_FAILURE_SECONDS, ep.message))
            elif ep.failure == "blocked":
                parts.append(Part("timeout", share, timeout, ep.message))
            elif ep.failure == "unauthorized":
                parts.append(Part("unauthorized", share, 0.003, ep.message))
            elif ep.instance is None or not self.instances[ep.instance].listening:
                parts.append(Part("ok", share, PLAIN_BACKEND_SECONDS))
            else:
                for m in self.outcome(ep.instance).modes:
                    latency = m.latency + NETWORK_SECONDS
                    if latency >= timeout:
                        parts.append(Part("timeout", share * m.fraction, timeout, timeout_msg))
                    elif m.code == 200:
                        parts.append(Part("ok", share * m.fraction, latency))
                    else:
                        msg = f"{call.name} responded {m.code} {REASONS.get(m.code, '')}".rstrip()
                        parts.append(Part("dep_error", share * m.fraction, latency, msg))
        return _merge_parts(parts)

    # -- loads (top-down) -------------------------------------------------------------------------
    def _entry_rates(self) -> dict[str, float]:
        groups: dict[tuple[str, str], list[Instance]] = {}
        for inst in self.instances.values():
            groups.setdefault((inst.namespace, inst.service), []).append(inst)
        rates: dict[str, float] = {}
        for members in groups.values():
            rps = max(m.behaviour.rps for m in members)
            serving = [m for m in members if m.ready and m.listening]
            for m in serving:
                rates[m.uid] = rps / len(serving)
        return rates

    def _order(self) -> list[str]:
        """Callers before callees (reverse post-order; back edges of cycles are ignored)."""
        seen: set[str] = set()
        post: list[str] = []
        for root in self.instances:
            if root in seen:
                continue
            stack: list[tuple[str, int]] = [(root, 0)]
            seen.add(root)
            while stack:
                uid, i = stack.pop()
                succ = self._callees(uid)
                if i < len(succ):
                    stack.append((uid, i + 1))
                    nxt = succ[i]
                    if nxt not in seen:
                        seen.add(nxt)
                        stack.append((nxt, 0))
                else:
                    post.append(uid)
        return post[::-1]

    def _callees(self, uid: str) -> list[str]:
        out = self.flow.outcomes.get(uid)
        if out is None:
            return []
        return [ep.instance for cf in out.calls for ep in cf.link.endpoints
                if ep.instance is not None and ep.failure is None]

    def _propagate_load(self) -> None:
        rates = self._entry_rates()
        rejected: dict[str, float] = {}
        for uid in self._order():
            rate = rates.get(uid, 0.0)
            out = self.flow.outcomes.get(uid)
            if rate <= 0 or out is None:
                continue
            for cf in out.calls:
                eps = cf.link.endpoints
                if not eps or cf.link.failure is not None:
                    continue
                each = rate * cf.reach / len(eps)
                for ep in eps:
                    if ep.instance is None:
                        continue
                    if ep.failure is None:
                        rates[ep.instance] = rates.get(ep.instance, 0.0) + each
                    elif ep.failure == "unauthorized":
                        rejected[ep.instance] = rejected.get(ep.instance, 0.0) + each
        self.flow.rates = rates
        self.flow.rejected = rejected


def compute_flow(cluster: Any, instances: dict[str, Instance], now: float) -> Flow:
    return FlowModel(cluster, instances, now).run()
