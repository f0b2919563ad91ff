"""API-level fault injection: make a fraction of matching requests fail like a sick apiserver.

A matching request either answers ``500 InternalError`` at once (``error_rate``) or hangs for
``timeout_seconds`` of real time and then answers ``504 Timeout`` (``timeout_rate``). Draws come
from a seeded RNG, so a given request sequence fails the same way every run. Admin and health
endpoints are never affected.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Any

from .errors import ApiError

_METHODS = frozenset(("GET", "POST", "PUT", "PATCH", "DELETE"))


@dataclass(frozen=True)
class FaultConfig:
    error_rate: float = 0.0
    timeout_rate: float = 0.0
    timeout_seconds: float = 5.0
    paths: tuple[str, ...] = ()  # path prefixes; empty = every API path
    methods: tuple[str, ...] = ()  # empty = every method
    seed: int = 0

    @classmethod
    def from_dict(cls, body: Any) -> "FaultConfig":
        """Validate an admin request body; raises ApiError(400/422) on bad values."""
        if not isinstance(body, dict):
            raise ApiError(400, "fault configuration must be a JSON object", "BadRequest")
        unknown = set(body) - {"error_rate", "timeout_rate", "timeout_seconds", "paths", "methods", "seed"}
        if unknown:
            raise ApiError(400, f"unknown fault settings: {', '.join(sorted(unknown))}", "BadRequest")

        def rate(key: str) -> float:
            value = body.get(key, 0.0)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise ApiError(422, f"{key} must be a number between 0 and 1", "Invalid")
            return float(value)

        def strings(key: str) -> tuple[str, ...]:
            value = body.get(key) or []
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ApiError(422, f"{key} must be a list of strings", "Invalid")
            return tuple(value)

        timeout = body.get("timeout_seconds", 5.0)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 <= timeout <= 600:
            raise ApiError(422, "timeout_seconds must be a number between 0 and 600", "Invalid")
        seed = body.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ApiError(422, "seed must be an integer", "Invalid")
        methods = tuple(m.upper() for m in strings("methods"))
        if set(methods) - _METHODS:
            raise ApiError(422, f"methods must be among {', '.join(sorted(_METHODS))}", "Invalid")
        error_rate, timeout_rate = rate("error_rate"), rate("timeout_rate")
        if error_rate + timeout_rate > 1.0:
            raise ApiError(422, "error_rate + timeout_rate must not exceed 1", "Invalid")
        return cls(error_rate, timeout_rate, float(timeout), strings("paths"), methods, seed)

    def as_dict(self) -> dict[str, Any]:
        return {"error_rate": self.error_rate, "timeout_rate": self.timeout_rate,
                "timeout_seconds": self.timeout_seconds, "paths": list(self.paths), "methods": list(self.methods),
                "seed": self.seed}


class FaultInjector:
    def __init__(self) -> None:
        self.config: FaultConfig | None = None
        self._rng = random.Random(0)
        self.injected = 0

    @property
    def active(self) -> bool:
        return self.config is not None

    def configure(self, config: FaultConfig | None) -> None:
        self.config = config
        self._rng = random.Random(config.seed if config else 0)
        self.injected = 0

    def _matches(self, method: str, path: str) -> bool:
        cfg = self.config
        if cfg is None:
            return False
        if cfg.methods and method not in cfg.methods:
            return False
        return not cfg.paths or path.startswith(cfg.paths)

    async def maybe_fail(self, method: str, path: str) -> None:
        """Raise the injected error for this request, if the dice say so."""
        cfg = self.config
        if cfg is None or not self._matches(method, path):
            return
        draw = self._rng.random()
        if draw < cfg.error_rate:
            self.injected += 1
            raise ApiError(500, "Internal error occurred: injected fault (kubesim fault injection)", "InternalError",
                           {"causes": [{"reason": "InjectedFault", "message": "kubesim fault injection"}]})
        if draw < cfg.error_rate + cfg.timeout_rate:
            self.injected += 1
            await asyncio.sleep(cfg.timeout_seconds)
            raise ApiError(504, "Timeout: request did not complete within the allotted timeout", "Timeout",
                           {"retryAfterSeconds": 1})
