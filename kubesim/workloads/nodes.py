"""Simulated nodes: Node objects shaped like a kind/kubeadm worker, and the controller that keeps
their status complete (a Node created through the API without status gets one)."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..clock import rfc3339
from ..resources import NODES
from ..tree import clone
from .units import format_memory, parse_memory_bytes

KUBELET_VERSION = "v1.32.4"
CONTAINER_RUNTIME = "containerd://1.7.24"
OS_IMAGE = "Debian GNU/Linux 12 (bookworm)"
KERNEL = "6.1.0-31-amd64"
EPHEMERAL_STORAGE = "102626232Ki"


@dataclass(frozen=True)
class NodeSpec:
    name: str = "kubesim-node-1"
    cpu: str = "8"
    memory: str = "32Gi"
    pods: int = 110
    internal_ip: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[dict[str, Any], ...] = ()


def _uuid(*parts: str) -> str:
    return str(uuid.UUID(hashlib.sha256("/".join(parts).encode()).hexdigest()[:32]))


def _memory_ki(memory: str) -> str:
    n = parse_memory_bytes(memory)
    return f"{n // 1024}Ki" if n % 1024 == 0 else format_memory(n)


def default_labels(name: str) -> dict[str, str]:
    return {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}


def node_status(name: str, cpu: str, memory: str, pods: int, ip: str, since: str) -> dict[str, Any]:
    resources = {"cpu": cpu, "ephemeral-storage": EPHEMERAL_STORAGE, "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                 "memory": _memory_ki(memory), "pods": str(pods)}

    def cond(type_: str, status: str, reason: str, message: str) -> dict[str, str]:
        return {"type": type_, "status": status, "lastHeartbeatTime": since, "lastTransitionTime": since,
                "reason": reason, "message": message}

    return {
        "capacity": dict(resources),
        "allocatable": dict(resources),
        "conditions": [
            cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            cond("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        ],
        "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "machineID": _uuid("machine", name).replace("-", ""),
            "systemUUID": _uuid("system", name),
            "bootID": _uuid("boot", name),
            "kernelVersion": KERNEL,
            "osImage": OS_IMAGE,
            "containerRuntimeVersion": CONTAINER_RUNTIME,
            "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": KUBELET_VERSION,
            "operatingSystem": "linux",
            "architecture": "amd64",
        },
    }


def node_object(spec: NodeSpec, index: int, since: str) -> dict[str, Any]:
    ip = spec.internal_ip or f"172.18.0.{index + 2}"
    node: dict[str, Any] = {
        "metadata": {
            "name": spec.name,
            "labels": {**default_labels(spec.name), **spec.labels},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
        },
        "spec": {"podCIDR": f"10.244.{index}.0/24", "podCIDRs": [f"10.244.{index}.0/24"]},
        "status": node_status(spec.name, spec.cpu, spec.memory, spec.pods, ip, since),
    }
    if spec.taints:
        node["spec"]["taints"] = [dict(t) for t in spec.taints]
    return node


def ensure_nodes(cluster: Any, specs: list[NodeSpec] | tuple[NodeSpec, ...]) -> None:
    """Create the nodes that do not exist yet."""
    since = rfc3339(cluster.clock.now())
    for i, spec in enumerate(specs):
        if cluster.store.find(NODES, "", spec.name) is None:
            cluster.store.create(NODES, node_object(spec, i, since))


class NodeController:
    """Completes the status of nodes that lack one (e.g. created through the API)."""

    name = "node-lifecycle"

    def reconcile(self, cluster: Any, namespace: str) -> None:
        if namespace != "":
            return
        since = rfc3339(cluster.clock.now())
        for i, node in enumerate(cluster.store.list(NODES)):
            status = node.get("status") or {}
            if status.get("nodeInfo") and status.get("conditions") and status.get("allocatable"):
                continue
            name = node["metadata"]["name"]
            capacity = status.get("capacity") or {}
            full = node_status(name, str(capacity.get("cpu", "8")), str(capacity.get("memory", "32Gi")),
                               int(str(capacity.get("pods", "110")) or 110), f"172.18.0.{100 + i}", since)
            merged = {**full, **{k: v for k, v in status.items() if v}}
            new = clone(node)
            new["status"] = merged
            labels = new["metadata"].setdefault("labels", {})
            for k, v in default_labels(name).items():
                labels.setdefault(k, v)
            cluster.store.update(NODES, new, check_rv=False)
