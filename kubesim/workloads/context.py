"""Everything one pod sync needs: the cluster, the pod as stored, its runtime and its node."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..resources import ENDPOINTS, PODS, SERVICES
from .commands import cluster_fqdn
from .runtime import ContainerRuntime, PodRuntime

SYNC_DELAY = 1.0  # seconds between a container event and the kubelet's reaction (PLEG relist)
EXTERNAL_IP = "93.184.215.14"


@dataclass
class NodeInfo:
    name: str
    host_ip: str
    cpu_millis: int
    memory_bytes: int


@dataclass
class SyncContext:
    cluster: Any
    pod: dict[str, Any]
    pr: PodRuntime
    node: NodeInfo
    seed: str = "0"

    @property
    def namespace(self) -> str:
        return self.pr.namespace

    @property
    def pod_ref(self) -> str:
        """format.Pod(): name_namespace(uid), as the kubelet writes it in messages."""
        return f"{self.pr.name}_{self.pr.namespace}({self.pr.uid})"

    def spec_of(self, c: ContainerRuntime) -> dict[str, Any]:
        key = "initContainers" if c.init else "containers"
        for spec in (self.pod.get("spec") or {}).get(key) or []:
            if isinstance(spec, dict) and spec.get("name") == c.name:
                return spec
        return {"name": c.name, "image": c.image}

    def event(self, c: ContainerRuntime | None, type_: str, reason: str, message: str) -> None:
        field_path = None
        if c is not None:
            field_path = f"spec.initContainers{{{c.name}}}" if c.init else f"spec.containers{{{c.name}}}"
        self.cluster.events.record(self.pod, type_, reason, message, "kubelet", host=self.node.name,
                                   field_path=field_path)

    def restart_policy(self) -> str:
        return str((self.pod.get("spec") or {}).get("restartPolicy") or "Always")

    # -- cluster DNS and service readiness ----------------------------------------------------
    def _split_service(self, host: str) -> tuple[str, str] | None:
        fqdn = cluster_fqdn(host.lower(), self.namespace)
        if not fqdn.endswith(".svc.cluster.local"):
            return None
        parts = fqdn[: -len(".svc.cluster.local")].split(".")
        return (parts[1], parts[0]) if len(parts) == 2 else None

    def resolve(self, host: str) -> str | None:
        """What cluster DNS answers for ``host`` (None: NXDOMAIN)."""
        split = self._split_service(host)
        if split is None:
            return EXTERNAL_IP
        ns, name = split
        if (ns, name) == ("default", "kubernetes"):
            return "10.96.0.1"
        svc = self.cluster.store.find(SERVICES, ns, name)
        if svc is None:
            return None
        ip = (svc.get("spec") or {}).get("clusterIP")
        return ip if ip and ip != "None" else self._first_ready_ip(ns, svc) or None

    def service_ready(self, host: str) -> bool:
        """A Service with at least one ready endpoint."""
        split = self._split_service(host)
        if split is None:
            return True
        ns, name = split
        store = self.cluster.store
        svc = store.find(SERVICES, ns, name)
        if svc is None:
            return False
        ep = store.find(ENDPOINTS, ns, name)
        if ep is not None:
            return any((s or {}).get("addresses") for s in ep.get("subsets") or [])
        return self._first_ready_ip(ns, svc) is not None

    def _first_ready_ip(self, ns: str, svc: dict[str, Any]) -> str | None:
        selector = (svc.get("spec") or {}).get("selector") or {}
        if not selector:
            return None
        for pod in self.cluster.store.list(PODS, ns):
            labels = (pod.get("metadata") or {}).get("labels") or {}
            if all(labels.get(k) == v for k, v in selector.items()):
                status = pod.get("status") or {}
                ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                            for c in status.get("conditions") or [] if isinstance(c, dict))
                if ready and status.get("podIP"):
                    return str(status["podIP"])
        return None
