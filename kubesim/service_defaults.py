"""Service defaulting: ClusterIP and NodePort allocation, and keeping allocations across updates.

Allocation is a pure function of the Service's namespace and name (no allocator state), so the same
Service always gets the same address and ``prepare`` stays idempotent.
"""

from __future__ import annotations

import hashlib
import ipaddress
from typing import Any

SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
_RESERVED_IPS = 16  # 10.96.0.0-10.96.0.15: network address, kubernetes (.1), kube-dns (.10)
WELL_KNOWN_IPS = {("default", "kubernetes"): "10.96.0.1", ("kube-system", "kube-dns"): "10.96.0.10"}
NODE_PORT_RANGE = (30000, 32767)


def _hash_int(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("/".join(parts).encode()).digest()[:8], "big")


def allocate_cluster_ip(namespace: str, name: str) -> str:
    """A stable address in 10.96.0.0/12 derived from the Service's identity."""
    known = WELL_KNOWN_IPS.get((namespace, name))
    if known:
        return known
    span = SERVICE_CIDR.num_addresses - _RESERVED_IPS - 1
    return str(SERVICE_CIDR.network_address + _RESERVED_IPS + _hash_int(namespace, name) % span)


def allocate_node_port(namespace: str, name: str, port: Any, protocol: str) -> int:
    lo, hi = NODE_PORT_RANGE
    return lo + _hash_int(namespace, name, str(port), protocol) % (hi - lo + 1)


def _spec(obj: dict) -> dict:
    spec = obj.setdefault("spec", {})
    return spec if isinstance(spec, dict) else {}


def preserve_service(obj: dict, old: dict) -> None:
    """Allocated fields a client may omit on update keep their old values (ServiceStrategy)."""
    spec, old_spec = _spec(obj), old.get("spec") or {}
    if old_spec.get("type") == "ExternalName" or spec.get("type") == "ExternalName":
        return
    for field in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
        if not spec.get(field) and old_spec.get(field):
            spec[field] = old_spec[field]
    old_ports = {(p.get("port"), p.get("protocol", "TCP")): p for p in old_spec.get("ports") or ()
                 if isinstance(p, dict)}
    for p in spec.get("ports") or ():
        if isinstance(p, dict) and not p.get("nodePort"):
            prev = old_ports.get((p.get("port"), p.get("protocol", "TCP")))
            if prev and prev.get("nodePort") and spec.get("type") in ("NodePort", "LoadBalancer"):
                p["nodePort"] = prev["nodePort"]


def default_service(obj: dict, creating: bool) -> None:
    spec = _spec(obj)
    meta = obj.get("metadata") or {}
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    svc_type = spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    for p in spec.get("ports") or ():
        if isinstance(p, dict):
            p.setdefault("protocol", "TCP")
            if "targetPort" not in p and "port" in p:
                p["targetPort"] = p["port"]
            if svc_type in ("NodePort", "LoadBalancer") and not p.get("nodePort"):
                p["nodePort"] = allocate_node_port(ns, name, p.get("port"), p["protocol"])
    if svc_type == "ExternalName":
        return
    if not spec.get("clusterIP"):
        spec["clusterIP"] = (spec.get("clusterIPs") or [None])[0] or allocate_cluster_ip(ns, name)
    spec.setdefault("clusterIPs", [spec["clusterIP"]])
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    spec.setdefault("internalTrafficPolicy", "Cluster")
    if svc_type in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if creating:
        obj["status"] = {"loadBalancer": {}}
