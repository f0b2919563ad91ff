"""kubesim's own control endpoints under ``/kubesim/v1/`` (admin token only; JSON in and out).

- ``GET  /kubesim/v1/clock``           -> ``{"seconds", "now", "timeScale", "nextWakeup"}``
- ``POST /kubesim/v1/clock/advance``   ``{"seconds": N}`` lets N simulated seconds pass
  (``Cluster.advance``: controllers run at every wake-up on the way); answers the clock.
- ``GET  /kubesim/v1/faults``          -> the active fault configuration (``{}`` when none)
- ``POST /kubesim/v1/faults``          ``{"error_rate": 0.3, "timeout_rate": 0.0, "timeout_seconds": 5,
  "paths": ["/api/v1/namespaces/x"], "methods": ["GET"], "seed": 1}``: a matching fraction of
  API requests answers 500, or hangs ``timeout_seconds`` then answers 504 (see faults.py).
- ``DELETE /kubesim/v1/faults``        stops fault injection.
- ``POST /kubesim/v1/profiles``        a list of workload profile dicts (or ``{"profiles": [...]}``),
  each passed to ``cluster.profiles.register``; answers ``{"registered": N}``.

Telemetry's routes are served here too when ``cluster.telemetry`` is attached (404 otherwise):
``/prometheus/...`` (the Prometheus HTTP API, ``/prometheus/namespaces/<ns>/...`` confined to one
namespace) and the paths ``kubesim.telemetry.admin`` handles (``/kubesim/v1/namespaces/<ns>/rules``,
``.../notifications``, ``.../prometheus/...``, ``/kubesim/v1/telemetry/profiles``).
"""

from __future__ import annotations

import math
from typing import Any

from .clock import rfc3339
from .cluster import Cluster
from .errors import ApiError
from .faults import FaultConfig, FaultInjector
from .resources import NAMESPACES
from .wire import Request, Response, decode_body, json_response

PREFIX = "/kubesim/v1/"
PROMETHEUS_PREFIX = "/prometheus"
MAX_ADVANCE_SECONDS = 30 * 24 * 3600


class Admin:
    def __init__(self, cluster: Cluster, faults: FaultInjector):
        self.cluster = cluster
        self.faults = faults
        self._routes = {
            ("GET", "clock"): self.get_clock,
            ("POST", "clock/advance"): self.advance,
            ("GET", "faults"): self.get_faults,
            ("POST", "faults"): self.set_faults,
            ("DELETE", "faults"): self.clear_faults,
            ("POST", "profiles"): self.register_profiles,
        }

    def handle(self, req: Request) -> Response:
        if req.user is None or not req.user.is_master:
            name = req.user.name if req.user is not None else ""
            raise ApiError(403, f'forbidden: User "{name}" cannot {req.method.lower()} path "{req.path}"',
                           "Forbidden", {})
        telemetry = self._telemetry(req)
        if telemetry is not None:
            return telemetry
        route = req.path[len(PREFIX):].strip("/")
        handler = self._routes.get((req.method, route))
        if handler is None:
            if any(r == route for _, r in self._routes):
                raise ApiError(405, "the server does not allow this method on the requested resource",
                               "MethodNotAllowed", {})
            raise ApiError(404, "the server could not find the requested resource", "NotFound", {})
        return handler(req)

    def _telemetry(self, req: Request) -> Response | None:
        """Delegate telemetry's routes (imported on first use: the API server never needs it loaded)."""
        path = req.path
        is_prometheus = path == PROMETHEUS_PREFIX or path.startswith(PROMETHEUS_PREFIX + "/")
        if not is_prometheus and not path.startswith(PREFIX):
            return None
        from .telemetry import admin as telemetry_admin
        from .telemetry import prom_api
        if not is_prometheus and not telemetry_admin.handles(path):
            return None
        if getattr(self.cluster, "telemetry", None) is None:  # like a cluster without Prometheus
            raise ApiError(404, "the server could not find the requested resource (telemetry is not attached to "
                                "this cluster)", "NotFound", {})
        if is_prometheus:
            status, headers, body = prom_api.handle(self.cluster, req.method, path, req.raw_query, req.body)
        else:
            status, headers, body = telemetry_admin.handle(self.cluster, req.method, path, req.raw_query, req.body)
        ctype = next((v for k, v in headers if k.lower() == "content-type"), "application/json")
        return Response(status, body, ctype.encode("latin-1"))

    def _clock(self) -> dict[str, Any]:
        clock = self.cluster.clock
        wake = self.cluster.next_wakeup()
        return {"seconds": clock.seconds(), "now": rfc3339(clock.now()), "timeScale": clock.time_scale,
                "nextWakeup": wake}

    def get_clock(self, req: Request) -> Response:
        return json_response(self._clock())

    def advance(self, req: Request) -> Response:
        body = decode_body(req)
        seconds = body.get("seconds") if isinstance(body, dict) else None
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds):
            raise ApiError(400, 'body must be {"seconds": <number>}', "BadRequest")
        if not 0 <= seconds <= MAX_ADVANCE_SECONDS:
            raise ApiError(422, f"seconds must be between 0 and {MAX_ADVANCE_SECONDS}", "Invalid")
        self.cluster.advance(float(seconds))
        return json_response(self._clock())

    def get_faults(self, req: Request) -> Response:
        cfg = self.faults.config
        return json_response(dict(cfg.as_dict(), injected=self.faults.injected) if cfg else {})

    def set_faults(self, req: Request) -> Response:
        self.faults.configure(FaultConfig.from_dict(decode_body(req)))
        return self.get_faults(req)

    def clear_faults(self, req: Request) -> Response:
        self.faults.configure(None)
        return json_response({})

    def register_profiles(self, req: Request) -> Response:
        body = decode_body(req)
        if isinstance(body, dict):
            body = body.get("profiles")
        if not isinstance(body, list) or not all(isinstance(p, dict) for p in body):
            raise ApiError(400, 'body must be a list of profile objects (or {"profiles": [...]})', "BadRequest")
        registry = getattr(self.cluster, "profiles", None)
        if registry is None:
            raise ApiError(503, "this cluster has no workload profile registry", "ServiceUnavailable")
        for profile in body:
            try:
                registry.register(profile)
            except ApiError:
                raise
            except (ValueError, TypeError, KeyError) as e:
                raise ApiError(422, f"invalid workload profile: {e}", "Invalid") from None
        self.cluster.store.dirty.update(self._namespaces())
        return json_response({"registered": len(body)})

    def _namespaces(self) -> set[str]:
        return {ns["metadata"]["name"] for ns in self.cluster.store.list(NAMESPACES)}
