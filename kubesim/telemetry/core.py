"""The telemetry pipeline of one cluster, and the controller that runs it on the scrape interval.

Every ``scrape_interval`` simulated seconds (a cluster wake-up under a key no namespace can have):
discover service instances → compute the request flow → advance application counters and write
log lines for failed calls → collect kube-state/cAdvisor metrics → append one scrape to the TSDB →
evaluate each namespace's rules → dispatch alert notifications. A namespace's series, rules and
alerts are dropped when the namespace is deleted.
"""

from __future__ import annotations

import logging
import math
from typing import Any, Mapping

from ..resources import NAMESPACES, PODS
from . import applogs
from .alertmanager import Alertmanager, Notifier, Receiver
from .appmetrics import AppMetrics
from .behaviour import BehaviourRegistry, split_profile
from .graph import discover, readiness_blocker
from .kubemetrics import KubeMetrics
from .rules import Group, NamespaceRules
from .traffic import compute_flow
from .tsdb import TSDB

log = logging.getLogger("kubesim.telemetry")
WAKE_KEY = "kubesim.telemetry"  # not a valid namespace name, so no namespace collides with it


class Telemetry:
    def __init__(self, cluster: Any, scrape_interval: float = 15.0, retention_seconds: float = 3 * 3600.0,
                 prometheus_url: str = "http://kubesim/prometheus",
                 alertmanager_url: str = "http://kubesim/alertmanager"):
        self.cluster = cluster
        self.interval = scrape_interval
        self.registry = BehaviourRegistry()
        self.tsdb = TSDB(retention_seconds, scrape_interval)
        self.app = AppMetrics()
        self.kube = KubeMetrics()
        self.rules: dict[str, NamespaceRules] = {}
        self.receivers: dict[str, Receiver] = {}
        self.prometheus_url = prometheus_url
        self.alertmanager = Alertmanager(Notifier(), cluster.clock, alertmanager_url, prometheus_url)
        self.last_scrape: float | None = None
        self.armed_for: float | None = None
        self.ticks = 0
        self.errors = 0
        self.last_error = ""
        self._verdicts: dict[tuple[str, str, str], str | None] = {}

    # -- time -----------------------------------------------------------------------------------
    def unix(self, sim_seconds: float) -> float:
        return self.cluster.clock.at(sim_seconds).timestamp()

    def now_unix(self) -> float:
        return self.unix(self.cluster.now_s())

    def arm(self) -> None:
        """Make sure a wake-up is scheduled for the next scrape instant."""
        now = self.cluster.now_s()
        nxt = (math.floor(now / self.interval + 1e-9) + 1) * self.interval
        if self.armed_for is None or self.armed_for <= now or self.armed_for > nxt:
            self.cluster.wake_at(WAKE_KEY, nxt)
            self.armed_for = round(nxt, 3)

    # -- registration ---------------------------------------------------------------------------
    def register_profile(self, doc: Mapping[str, Any]) -> None:
        """Register a workload profile document that may carry a ``telemetry`` section."""
        workload, _ = split_profile(doc)
        self.registry.register_document(doc)
        if hasattr(self.cluster, "profiles"):
            self.cluster.profiles.register(workload)
        self.cluster.store.dirty.update(ns["metadata"]["name"] for ns in self.cluster.store.list(NAMESPACES))

    def set_rules(self, namespace: str, groups: list[Group], receiver: Receiver | None) -> NamespaceRules:
        old = self.rules.pop(namespace, None)
        if old is not None:
            old.drop(self.tsdb)
        self.alertmanager.forget(namespace)
        nr = self.rules[namespace] = NamespaceRules(namespace, groups, self.prometheus_url)
        self.receivers[namespace] = receiver or Receiver()
        return nr

    def remove_rules(self, namespace: str) -> bool:
        nr = self.rules.pop(namespace, None)
        self.receivers.pop(namespace, None)
        self.alertmanager.forget(namespace)
        if nr is not None:
            nr.drop(self.tsdb)
        return nr is not None

    def drop_namespace(self, namespace: str) -> None:
        self.rules.pop(namespace, None)
        self.receivers.pop(namespace, None)
        self.alertmanager.forget(namespace)
        self.tsdb.drop_namespace(namespace)
        for key in [k for k in self._verdicts if k[0] == namespace]:
            del self._verdicts[key]

    # -- readiness ------------------------------------------------------------------------------
    def record_error(self, e: Exception) -> None:
        self.errors += 1
        self.last_error = f"{type(e).__name__}: {e}"
        log.exception("telemetry error (the cluster carries on)")

    def readiness_check(self, cluster: Any, pod: dict, container: str) -> str | None:
        """Hook for the kubelet's readiness probes (cluster.runtime.readiness_checks)."""
        try:
            verdict = readiness_blocker(cluster, self.registry, pod, container)
        except Exception as e:  # never let telemetry break the kubelet
            self.record_error(e)
            return None
        m = pod["metadata"]
        key = (m.get("namespace", ""), m["name"], container)
        if verdict is not None or key in self._verdicts or self._depends_on_calls(pod, container):
            self._verdicts[key] = verdict
        return verdict

    def _depends_on_calls(self, pod: dict, container: str) -> bool:
        for spec in (pod.get("spec") or {}).get("containers") or []:
            if isinstance(spec, dict) and spec.get("name") == container:
                image = str(spec.get("image") or "")
                profiles = getattr(self.cluster, "profiles", None)
                behaviour = self.registry.lookup(image, profiles.lookup(image) if profiles is not None else None)
                return behaviour is not None and any(c.readiness for c in behaviour.calls)
        return False

    def _recheck_readiness(self) -> None:
        """Verdicts can change because of objects in other namespaces: nudge the kubelet when they do."""
        for (ns, name, container), old in list(self._verdicts.items()):
            pod = self.cluster.store.find(PODS, ns, name)
            if pod is None:
                del self._verdicts[(ns, name, container)]
                continue
            if readiness_blocker(self.cluster, self.registry, pod, container) != old:
                self.cluster.store.dirty.add(ns)

    # -- the scrape -----------------------------------------------------------------------------
    def on_timer(self) -> None:
        now = self.cluster.now_s()
        grid = math.floor(now / self.interval + 1e-9) * self.interval
        if self.last_scrape is None or grid > self.last_scrape + 1e-6:
            self.scrape(grid)
        self.armed_for = None
        self.arm()

    def scrape(self, at: float) -> None:
        cluster = self.cluster
        now = cluster.now_s()
        dt = self.interval if self.last_scrape is None else min(at - self.last_scrape, 4 * self.interval)
        start = at - dt
        self.ticks += 1
        instances = discover(cluster, self.registry, now)
        flow = compute_flow(cluster, instances, now)
        samples: dict[str, list] = {}
        for inst in instances.values():
            failures = self.app.update(inst, flow, dt, self.ticks) if inst.listening else []
            samples.setdefault(inst.namespace, []).extend(self.app.samples(inst))
            if failures:
                applogs.log_failures(cluster, failures, start, at)
            rejected = int(round(flow.rejected.get(inst.uid, 0.0) * dt))
            if rejected:
                applogs.log_rejections(cluster, inst, rejected, start, at)
        self.app.forget(set(instances))
        self.kube.collect(cluster, now, dt, samples)
        t = self.unix(at)
        self.tsdb.append(t, samples)
        self.last_scrape = at
        for ns, nr in list(self.rules.items()):
            nr.evaluate(self.tsdb, t)
            self.alertmanager.process(nr, self.receivers.get(ns) or Receiver(), t)
        self._recheck_readiness()


class TelemetryController:
    """Runs the scrape on its wake-ups and forgets namespaces that were deleted."""

    name = "telemetry"

    def __init__(self, telemetry: Telemetry):
        self.telemetry = telemetry

    def reconcile(self, cluster: Any, namespace: str) -> None:
        tel = self.telemetry
        if namespace == WAKE_KEY:
            try:
                tel.on_timer()
            except Exception as e:  # a telemetry bug must not stop the cluster's control loop
                tel.record_error(e)
                tel.armed_for = None
            tel.arm()
            return
        if namespace and cluster.store.find(NAMESPACES, "", namespace) is None:
            tel.drop_namespace(namespace)
        tel.arm()
