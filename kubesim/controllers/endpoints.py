"""Endpoints controller: one Endpoints object per selector Service, listing the pods behind it.

Ready pods go to ``addresses`` and the rest to ``notReadyAddresses``. Ports are resolved per pod from
each service port's ``targetPort``. A named port that a pod does not declare leaves that pod out of
that port's subset. Services without a selector are left to their owners.
"""

from __future__ import annotations

from typing import Any

from ..resources import ENDPOINTS, PODS, SERVICES
from ..store import Obj
from ..tree import clone
from .common import being_deleted, is_pod_ready, labels_match, pod_phase, write

COMPONENT = "endpoint-controller"
HEADLESS_LABEL = "service.kubernetes.io/headless"


class EndpointsController:
    name = COMPONENT

    def __init__(self) -> None:
        self._managed: set[tuple[str, str]] = set()  # (namespace, name) of Endpoints this controller wrote

    def reconcile(self, cluster, namespace: str) -> None:
        if not namespace:
            return
        store = cluster.store
        services = {s["metadata"]["name"]: s for s in store.list(SERVICES, namespace)}
        pods = [p for p in store.list(PODS, namespace) if _serves(p)]
        for name, svc in services.items():
            selector = (svc.get("spec") or {}).get("selector")
            if not selector:
                continue
            self._managed.add((namespace, name))
            self._sync(cluster, svc, [p for p in pods if labels_match(selector, p["metadata"].get("labels"))])
        for ep in store.list(ENDPOINTS, namespace):
            key = (namespace, ep["metadata"]["name"])
            if key in self._managed and key[1] not in services:
                store.delete(ENDPOINTS, namespace, key[1])
                self._managed.discard(key)

    def _sync(self, cluster, svc: Obj, pods: list[Obj]) -> None:
        ns, name = svc["metadata"]["namespace"], svc["metadata"]["name"]
        subsets = build_subsets(svc, pods)
        labels = dict(svc["metadata"].get("labels") or {})
        if (svc.get("spec") or {}).get("clusterIP") == "None":
            labels[HEADLESS_LABEL] = ""
        current = cluster.store.find(ENDPOINTS, ns, name)
        if current is None:
            obj: Obj = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name, "namespace": ns}}
            if labels:
                obj["metadata"]["labels"] = labels
            if subsets:
                obj["subsets"] = subsets
            cluster.store.create(ENDPOINTS, obj)
            return
        updated = clone(current)
        if labels:
            updated["metadata"]["labels"] = labels
        else:
            updated["metadata"].pop("labels", None)
        if subsets:
            updated["subsets"] = subsets
        else:
            updated.pop("subsets", None)
        write(cluster, ENDPOINTS, updated)


def _serves(pod: Obj) -> bool:
    return bool((pod.get("status") or {}).get("podIP")) and not being_deleted(pod) \
        and pod_phase(pod) not in ("Succeeded", "Failed")


def find_port(pod: Obj, service_port: dict) -> int | None:
    """podutil.FindPort: a numeric targetPort as-is, a named one looked up in the pod's containers."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    protocol = service_port.get("protocol", "TCP")
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") == target and port.get("protocol", "TCP") == protocol:
                return port.get("containerPort")
    return None


def _address(pod: Obj, svc: Obj) -> dict[str, Any]:
    m = pod["metadata"]
    spec = pod.get("spec") or {}
    addr: dict[str, Any] = {"ip": pod["status"]["podIP"]}
    if spec.get("hostname") and spec.get("subdomain") == svc["metadata"]["name"]:
        addr["hostname"] = spec["hostname"]
    if spec.get("nodeName"):
        addr["nodeName"] = spec["nodeName"]
    addr["targetRef"] = {"kind": "Pod", "namespace": m["namespace"], "name": m["name"], "uid": m.get("uid")}
    return addr


def build_subsets(svc: Obj, pods: list[Obj]) -> list[dict]:
    """Group pod addresses by their resolved port set (RepackSubsets); addresses sorted as IP strings."""
    spec = svc.get("spec") or {}
    publish_not_ready = bool(spec.get("publishNotReadyAddresses"))
    service_ports = spec.get("ports") or []
    groups: dict[tuple, dict[str, list]] = {}
    for pod in pods:
        ports: list[dict] = []
        for sp in service_ports:
            number = find_port(pod, sp)
            if number is None:
                continue
            ep: dict[str, Any] = {}
            if sp.get("name"):
                ep["name"] = sp["name"]
            ep["port"] = number
            ep["protocol"] = sp.get("protocol", "TCP")
            if sp.get("appProtocol"):
                ep["appProtocol"] = sp["appProtocol"]
            ports.append(ep)
        if service_ports and not ports:
            continue
        key = tuple(tuple(sorted(p.items())) for p in ports)
        group = groups.setdefault(key, {"ports": ports, "addresses": [], "notReadyAddresses": []})
        bucket = "addresses" if publish_not_ready or is_pod_ready(pod) else "notReadyAddresses"
        group[bucket].append(_address(pod, svc))
    subsets: list[dict] = []
    for key in sorted(groups):
        group = groups[key]
        subset: dict[str, Any] = {}
        for bucket in ("addresses", "notReadyAddresses"):
            if group[bucket]:
                subset[bucket] = sorted(group[bucket], key=lambda a: (a["ip"], a["targetRef"]["uid"] or ""))
        if group["ports"]:
            subset["ports"] = group["ports"]
        subsets.append(subset)
    return subsets

