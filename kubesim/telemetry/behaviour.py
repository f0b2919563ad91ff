"""Service behaviour: the ``telemetry:`` section of a workload profile, as values.

A profile's telemetry section says how the image behaves as a network service: the port it
serves, the traffic the load generator sends it, its own latency and error ratio, the services it
calls (each through an env var or a mounted config file holding ``host:port``), the token it
expects from callers, and optional data counters (``orders_duplicated_total``) for data-integrity
faults. The workload profile parser rejects unknown top-level keys, so documents are split:
``split_profile`` separates the telemetry section from the workload part.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from ..workloads.fields import ProfileError, Reader
from ..workloads.profiles import effective_tag, parse_image

DEFAULT_TIMEOUT = 1.0
TELEMETRY_KEY = "telemetry"


@dataclass(frozen=True)
class Latency:
    """Own processing time as a log-normal distribution (median and 99th percentile, seconds)."""

    p50: float = 0.012
    p99: float = 0.060

    @property
    def sigma(self) -> float:
        return max(0.02, math.log(max(self.p99, self.p50 * 1.0001) / self.p50) / 2.3263)


@dataclass(frozen=True)
class Call:
    """One dependency: where its address comes from and what a failure does to the request."""

    name: str  # the peer label and the name logs use; defaults to the host of the address
    env: str | None = None
    file: str | None = None
    key: str | None = None  # a key inside ``file`` (``key=value`` or ``key: value`` lines)
    default: str | None = None
    per_request: float = 1.0
    required: bool = True
    readiness: bool = False  # the caller's readiness probe fails while this link is broken
    timeout_seconds: float = DEFAULT_TIMEOUT
    method: str = "GET"
    path: str = "/"
    token_env: str | None = None  # the caller sends this env var's value as its bearer token


@dataclass(frozen=True)
class DataCounter:
    """An application counter incremented per served request, e.g. ``orders_duplicated_total``."""

    name: str
    per_request: float
    help: str = ""
    when_env: tuple[tuple[str, str], ...] = ()  # only while every env var has the given value

    def active(self, env: Mapping[str, str]) -> bool:
        return all(env.get(k, "") == v for k, v in self.when_env)


@dataclass(frozen=True)
class Behaviour:
    image: str
    tags: tuple[str, ...]
    port: int | None = None  # the serving port (default: the profile's first port)
    rps: float = 0.0  # requests per second the load generator sends to the whole service
    latency: Latency = Latency()
    error_ratio: float = 0.0
    calls: tuple[Call, ...] = ()
    auth_env: str | None = None  # callers must present this env var's value
    auth_error: str = "token expired"
    counters: tuple[DataCounter, ...] = ()
    method: str = "GET"
    path: str = "/"
    error_format: str = "{time} ERROR {message}"
    warn_format: str = "{time} WARN {message}"


_TOP = ("port", "traffic", "latency", "errors", "calls", "auth", "counters", "handler", "logs")
_CALL = ("name", "env", "file", "key", "default", "per_request", "required", "readiness", "timeout_seconds",
         "method", "path", "token_env")


def _positive(r: Reader, key: str, default: float, minimum: float = 0.0) -> float:
    value = r.number(key, default, minimum)
    return default if value is None else value


def _parse_call(r: Reader, i: int, item: Any) -> Call:
    if not isinstance(item, Mapping):
        raise r.fail(f"calls[{i}]", f"must be a mapping, got {item!r}")
    c = Reader(r.image, item, r._path(f"calls[{i}]"), _CALL)
    env, file, default = c.string("env", None), c.string("file", None), c.string("default", None)
    if not (env or file or default):
        raise c.fail("env", "one of env, file or default must give the dependency's host:port")
    name = c.string("name", None) or _host_of(default or "") or (env or file or "").lower()
    method = (c.string("method", "GET") or "GET").upper()
    return Call(name=name, env=env, file=file, key=c.string("key", None), default=default,
                per_request=_positive(c, "per_request", 1.0), required=c.boolean("required", True),
                readiness=c.boolean("readiness", False),
                timeout_seconds=_positive(c, "timeout_seconds", DEFAULT_TIMEOUT, 0.001), method=method,
                path=c.string("path", "/") or "/", token_env=c.string("token_env", None))


def _parse_counters(r: Reader) -> tuple[DataCounter, ...]:
    value = r.data.get("counters", [])
    if not isinstance(value, list):
        raise r.fail("counters", "must be a list of {name, per_request, help, when_env}")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise r.fail(f"counters[{i}]", f"must be a mapping, got {item!r}")
        c = Reader(r.image, item, r._path(f"counters[{i}]"), ("name", "per_request", "help", "when_env"))
        name = c.string("name", None)
        if not name or not name.replace("_", "a").replace(":", "a").isalnum() or name[0].isdigit():
            raise c.fail("name", f"must be a Prometheus metric name, got {name!r}")
        when = c.mapping("when_env") or {}
        out.append(DataCounter(name, _positive(c, "per_request", 1.0), c.string("help", "") or "",
                               tuple(sorted((str(k), str(v)) for k, v in when.items()))))
    return tuple(out)


def _handler(r: Reader) -> tuple[str, str]:
    text = r.string("handler", "GET /") or "GET /"
    parts = text.split(None, 1)
    if len(parts) != 2 or not parts[1].startswith("/"):
        raise r.fail("handler", f'must look like "POST /api/checkout", got {text!r}')
    return parts[0].upper(), parts[1]


def parse_behaviour(image: str, tags: tuple[str, ...], data: Mapping[str, Any], ports: tuple[int, ...] = ()) -> Behaviour:
    """Validate a telemetry section (``ProfileError`` names the offending field)."""
    if not isinstance(data, Mapping):
        raise ProfileError(image, TELEMETRY_KEY, f"must be a mapping, got {data!r}")
    r = Reader(image, data, TELEMETRY_KEY, _TOP)
    port = r.integer("port", ports[0] if ports else None, 1, 65535)
    traffic = r.child("traffic", ("rps",))
    lat = r.child("latency", ("p50_ms", "p99_ms"))
    latency = Latency()
    if lat is not None:
        p50 = _positive(lat, "p50_ms", latency.p50 * 1000, 0.001) / 1000
        p99 = _positive(lat, "p99_ms", max(p50 * 5, latency.p99) * 1000, 0.001) / 1000
        if p99 < p50:
            raise lat.fail("p99_ms", "must be >= p50_ms")
        latency = Latency(p50, p99)
    errors = r.child("errors", ("ratio",))
    ratio = _positive(errors, "ratio", 0.0) if errors is not None else 0.0
    if ratio > 1:
        raise r.fail("errors.ratio", f"must be between 0 and 1, got {ratio}")
    calls_value = r.data.get("calls", [])
    if not isinstance(calls_value, list):
        raise r.fail("calls", "must be a list of dependencies")
    auth = r.child("auth", ("env", "error"))
    logs = r.child("logs", ("error", "warn"))
    method, path = _handler(r)
    d = Behaviour(image, tags)
    return Behaviour(
        image=image, tags=tags, port=port,
        rps=_positive(traffic, "rps", 0.0) if traffic is not None else 0.0,
        latency=latency, error_ratio=ratio,
        calls=tuple(_parse_call(r, i, item) for i, item in enumerate(calls_value)),
        auth_env=auth.string("env", None) if auth is not None else None,
        auth_error=(auth.string("error", d.auth_error) if auth is not None else None) or d.auth_error,
        counters=_parse_counters(r), method=method, path=path,
        error_format=(logs.string("error", d.error_format) if logs is not None else None) or d.error_format,
        warn_format=(logs.string("warn", d.warn_format) if logs is not None else None) or d.warn_format,
    )


def _host_of(address: str) -> str:
    text = address.split("://", 1)[-1].split("/", 1)[0]
    return text.rsplit(":", 1)[0].split(".", 1)[0] if text else ""


def split_profile(doc: Mapping[str, Any]) -> tuple[dict[str, Any], Mapping[str, Any] | None]:
    """(the workload profile without its telemetry section, the telemetry section or None)."""
    workload = {k: v for k, v in doc.items() if k != TELEMETRY_KEY}
    return workload, doc.get(TELEMETRY_KEY)


class BehaviourRegistry:
    """Behaviours by (repository, tag), resolved like workload profiles ("*" answers any tag)."""

    def __init__(self) -> None:
        self._by_tag: dict[tuple[str, str], Behaviour] = {}
        self._any_tag: dict[str, Behaviour] = {}
        self._from_profiles: dict[int, Behaviour | None] = {}
        self._refs: dict[str, Any] = {}  # image reference → parsed ImageRef

    def register_document(self, doc: Mapping[str, Any]) -> Behaviour | None:
        """Add the behaviour of a full profile document (None when it has no telemetry section)."""
        if not isinstance(doc, Mapping):
            raise ProfileError("?", "(document)", "must be a mapping")
        section = doc.get(TELEMETRY_KEY)
        if section is None:
            return None
        image = parse_image(str(doc.get("image") or "")).repository
        tags = doc.get("tags", ["latest"])
        tags = tuple(str(t) for t in (tags if isinstance(tags, (list, tuple)) else [tags]))
        ports = tuple(p for p in doc.get("ports") or [] if isinstance(p, int) and not isinstance(p, bool))
        behaviour = parse_behaviour(image, tags, section, ports)
        self.register(behaviour)
        return behaviour

    def register(self, behaviour: Behaviour) -> None:
        for tag in behaviour.tags:
            if tag == "*":
                self._any_tag[behaviour.image] = behaviour
            else:
                self._by_tag[(behaviour.image, tag)] = behaviour

    def _resolve(self, image: str) -> Behaviour | None:
        ref = self._refs.get(image)
        if ref is None:
            if len(self._refs) > 4096:
                self._refs.clear()
            ref = self._refs[image] = parse_image(image)
        return self._by_tag.get((ref.repository, effective_tag(ref))) or self._any_tag.get(ref.repository)

    def lookup(self, image: str, profile: Any = None) -> Behaviour | None:
        """The behaviour for an image reference; a profile carrying a raw ``telemetry`` mapping also counts."""
        found = self._resolve(image)
        if found is not None or profile is None:
            return found
        raw = getattr(profile, TELEMETRY_KEY, None)
        if not isinstance(raw, Mapping):
            return None
        key = id(profile)
        if key not in self._from_profiles:
            try:
                self._from_profiles[key] = parse_behaviour(profile.image, profile.tags, raw, profile.ports)
            except ProfileError:
                self._from_profiles[key] = None
        return self._from_profiles[key]
