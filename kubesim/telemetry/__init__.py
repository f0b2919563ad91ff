"""Telemetry for the simulated cluster: a service graph driven by an invisible load generator,
Prometheus-style metrics on the simulated clock, application logs that name failing
dependencies, namespace-scoped alert rules and Alertmanager webhooks.

``attach(cluster)`` installs ``cluster.telemetry`` and returns the controllers to append to
``cluster.controllers``; ``prom_api.handle`` serves the Prometheus HTTP API and ``admin.handle``
the rule/profile registration endpoints.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ..workloads.profiles import packaged_yaml_documents
from .behaviour import Behaviour, BehaviourRegistry, parse_behaviour, split_profile
from .core import WAKE_KEY, Telemetry, TelemetryController

__all__ = ["attach", "builtin_documents", "Behaviour", "BehaviourRegistry", "Telemetry", "TelemetryController",
           "WAKE_KEY", "parse_behaviour", "split_profile"]


def builtin_documents() -> list[dict[str, Any]]:
    """The service profiles shipped in kubesim/telemetry/profiles/*.yaml."""
    return packaged_yaml_documents("kubesim.telemetry", "profiles")


def attach(cluster: Any, scrape_interval: float = 15.0, retention_seconds: float = 3 * 3600.0,
           profiles: Iterable[Mapping[str, Any]] = (), builtin: bool = True) -> list[Any]:
    """Install telemetry on a cluster built by ``build_cluster`` (needs ``cluster.runtime`` and
    ``cluster.profiles``): registers the built-in and given service profiles, hooks the kubelet's
    readiness checks, schedules the first scrape, and returns the controllers to append."""
    telemetry = Telemetry(cluster, scrape_interval, retention_seconds)
    cluster.telemetry = telemetry
    for doc in [*(builtin_documents() if builtin else ()), *profiles]:
        telemetry.register_profile(doc)
    runtime = getattr(cluster, "runtime", None)
    if runtime is not None and hasattr(runtime, "readiness_checks"):
        runtime.readiness_checks.append(telemetry.readiness_check)
    telemetry.arm()
    return [TelemetryController(telemetry)]
