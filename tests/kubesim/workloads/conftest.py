"""A frozen-clock Cluster with the workload controllers attached, plus terse helpers."""

from __future__ import annotations

from typing import Any

import pytest

from kubesim import workloads
from kubesim.clock import SimClock, parse_rfc3339
from kubesim.cluster import Cluster
from kubesim.resources import CONFIGMAPS, EVENTS, NAMESPACES, PODS, SECRETS, SERVICES


class Sim:
    def __init__(self, nodes: list[workloads.NodeSpec] | None = None):
        self.cluster = Cluster(SimClock(time_scale=0))
        self.cluster.controllers.extend(workloads.attach(self.cluster, nodes=nodes))
        for ns in ("default", "other"):
            self.cluster.store.create(NAMESPACES, {"metadata": {"name": ns}})
        self.cluster.reconcile()

    @property
    def store(self):
        return self.cluster.store

    def now(self) -> float:
        return self.cluster.now_s()

    def advance(self, seconds: float) -> None:
        self.cluster.advance(seconds)

    def reconcile(self) -> None:
        self.cluster.reconcile()

    def pod(self, name: str, containers: list[dict[str, Any]] | dict[str, Any], ns: str = "default",
            labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
        if isinstance(containers, dict):
            containers = [containers]
        body = {"metadata": {"name": name, "namespace": ns, "labels": labels or {}},
                "spec": {"containers": containers, **spec}}
        self.store.create(PODS, body)
        self.reconcile()
        return self.get(name, ns)

    def get(self, name: str, ns: str = "default") -> dict[str, Any]:
        return self.store.get(PODS, ns, name)

    def status(self, name: str, ns: str = "default") -> dict[str, Any]:
        return self.get(name, ns).get("status") or {}

    def cs(self, name: str, container: str | None = None, ns: str = "default", init: bool = False) -> dict[str, Any]:
        key = "initContainerStatuses" if init else "containerStatuses"
        statuses = self.status(name, ns).get(key) or []
        if container is None:
            return statuses[0]
        return next(s for s in statuses if s["name"] == container)

    def condition(self, name: str, type_: str, ns: str = "default") -> dict[str, Any]:
        return next(c for c in self.status(name, ns)["conditions"] if c["type"] == type_)

    def events(self, name: str | None = None, reason: str | None = None, ns: str = "default") -> list[dict[str, Any]]:
        out = [e for e in self.store.list(EVENTS, ns)
               if (name is None or e["involvedObject"].get("name") == name)
               and (reason is None or e["reason"] == reason)]
        return sorted(out, key=lambda e: int(e["metadata"]["resourceVersion"]))

    def messages(self, name: str, reason: str | None = None, ns: str = "default") -> list[str]:
        return [e["message"] for e in self.events(name, reason, ns)]

    def secs(self, timestamp: str) -> float:
        """A status timestamp as sim seconds since the clock started."""
        return (parse_rfc3339(timestamp) - self.cluster.clock.at(0)).total_seconds()

    def configmap(self, name: str, data: dict[str, str], ns: str = "default") -> None:
        self.store.create(CONFIGMAPS, {"metadata": {"name": name, "namespace": ns}, "data": data})
        self.reconcile()

    def secret(self, name: str, data: dict[str, str], ns: str = "default") -> None:
        import base64

        enc = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
        self.store.create(SECRETS, {"metadata": {"name": name, "namespace": ns}, "data": enc})
        self.reconcile()

    def service(self, name: str, selector: dict[str, str] | None = None, ns: str = "default",
                cluster_ip: str = "10.96.40.1", port: int = 80) -> None:
        spec: dict[str, Any] = {"clusterIP": cluster_ip, "ports": [{"port": port, "protocol": "TCP"}]}
        if selector:
            spec["selector"] = selector
        self.store.create(SERVICES, {"metadata": {"name": name, "namespace": ns}, "spec": spec})
        self.reconcile()

    @staticmethod
    def api(image: str = "shop/api:1.0", db_url: str | None = "postgres://db/shop", **extra: Any) -> dict[str, Any]:
        """The sample shop/api container (needs DB_URL)."""
        c: dict[str, Any] = {"name": "api", "image": image, **extra}
        if db_url is not None:
            c.setdefault("env", []).append({"name": "DB_URL", "value": db_url})
        return c

    def delete(self, rt: Any, name: str, ns: str = "default") -> None:
        self.store.delete(rt, ns, name)
        self.reconcile()


@pytest.fixture
def sim() -> Sim:
    return Sim()


@pytest.fixture
def make_sim():
    """Build a Sim with custom nodes: ``make_sim([NodeSpec(...), ...])``."""
    return Sim
