"""NetworkPolicy verdicts for one TCP connection, with the semantics a policy-enforcing CNI applies.

A pod is isolated for a direction when any policy in its namespace selects it with that policy
type (``policyTypes`` defaults to Ingress, plus Egress when egress rules are present). An isolated
pod accepts a connection only when some selecting policy has a rule whose peers and ports match.
Blocked packets are dropped, so callers see time-outs, not refusals.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from ..errors import ApiError
from ..resources import NAMESPACES, NETWORKPOLICIES
from ..selectors import selector_from_spec

DNS_SERVICE_IP = "10.96.0.10"
Obj = dict[str, Any]


def _types(policy: Obj) -> tuple[str, ...]:
    spec = policy.get("spec") or {}
    types = spec.get("policyTypes")
    if types:
        return tuple(str(t) for t in types)
    return ("Ingress", "Egress") if spec.get("egress") else ("Ingress",)


def _selects(spec_selector: Any, labels: dict[str, str] | None) -> bool:
    try:
        return selector_from_spec(spec_selector if spec_selector is not None else {}).matches(labels or {})
    except ApiError:
        return False


def _labels(obj: Obj | None) -> dict[str, str]:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


def namespace_labels(store: Any, name: str) -> dict[str, str]:
    ns = store.find(NAMESPACES, "", name)
    labels = dict(_labels(ns))
    labels.setdefault("kubernetes.io/metadata.name", name)
    return labels


def _policies(store: Any, pod: Obj, direction: str) -> list[Obj]:
    ns = pod["metadata"].get("namespace", "")
    return [p for p in store.list(NETWORKPOLICIES, ns)
            if direction in _types(p) and _selects((p.get("spec") or {}).get("podSelector"), _labels(pod))]


def _in_block(ip: str, block: Obj) -> bool:
    try:
        addr = ipaddress.ip_address(ip)
        if addr not in ipaddress.ip_network(str(block.get("cidr", "")), strict=False):
            return False
        return not any(addr in ipaddress.ip_network(str(e), strict=False) for e in block.get("except") or [])
    except ValueError:
        return False


def _peer_matches(store: Any, peer: Obj, policy_ns: str, pod: Obj | None, pod_ns: str, ip: str) -> bool:
    if not isinstance(peer, dict):
        return False
    if "ipBlock" in peer:
        return _in_block(ip, peer.get("ipBlock") or {})
    pod_sel, ns_sel = peer.get("podSelector"), peer.get("namespaceSelector")
    if pod_sel is None and ns_sel is None:
        return False
    if ns_sel is None:
        ns_ok = pod_ns == policy_ns
    else:
        ns_ok = _selects(ns_sel, namespace_labels(store, pod_ns))
    if not ns_ok:
        return False
    if pod_sel is None:
        return True
    return pod is not None and _selects(pod_sel, _labels(pod))


def _named_port(pod: Obj | None, name: str) -> int | None:
    for c in ((pod or {}).get("spec") or {}).get("containers") or []:
        for p in c.get("ports") or []:
            if isinstance(p, dict) and p.get("name") == name:
                return p.get("containerPort")
    return None


def _port_matches(rule_ports: Any, port: int, protocol: str, dest_pod: Obj | None) -> bool:
    if not rule_ports:
        return True
    for rp in rule_ports:
        if not isinstance(rp, dict) or str(rp.get("protocol", "TCP")) != protocol:
            continue
        value = rp.get("port")
        if value is None:
            return True
        if isinstance(value, str) and not value.isdigit():
            value = _named_port(dest_pod, value)
        try:
            low = int(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            continue
        high = int(rp.get("endPort") or low)
        if low <= port <= high:
            return True
    return False


def ingress_allowed(store: Any, dest: Obj, source: Obj | None, source_ip: str, port: int,
                    protocol: str = "TCP") -> bool:
    """May ``source`` (a pod, or just an IP) open a connection to ``dest`` on ``port``?"""
    policies = _policies(store, dest, "Ingress")
    if not policies:
        return True
    src_ns = (source or {}).get("metadata", {}).get("namespace", "")
    for policy in policies:
        policy_ns = policy["metadata"].get("namespace", "")
        for rule in (policy.get("spec") or {}).get("ingress") or []:
            if not isinstance(rule, dict) or not _port_matches(rule.get("ports"), port, protocol, dest):
                continue
            peers = rule.get("from")
            if not peers or any(_peer_matches(store, p, policy_ns, source, src_ns, source_ip) for p in peers):
                return True
    return False


def egress_allowed(store: Any, source: Obj, dest: Obj | None, dest_ip: str, port: int,
                   protocol: str = "TCP") -> bool:
    """May ``source`` send to ``dest`` (a pod, or just an IP such as the cluster DNS) on ``port``?"""
    policies = _policies(store, source, "Egress")
    if not policies:
        return True
    dest_ns = (dest or {}).get("metadata", {}).get("namespace", "")
    for policy in policies:
        policy_ns = policy["metadata"].get("namespace", "")
        for rule in (policy.get("spec") or {}).get("egress") or []:
            if not isinstance(rule, dict) or not _port_matches(rule.get("ports"), port, protocol, dest):
                continue
            peers = rule.get("to")
            if not peers:
                return True
            for peer in peers:
                if dest is None and isinstance(peer, dict) and "ipBlock" not in peer and dest_ip == DNS_SERVICE_IP:
                    # The cluster DNS runs in kube-system; any namespaceSelector peer that admits it counts.
                    ns_sel = peer.get("namespaceSelector")
                    if ns_sel is not None and _selects(ns_sel, namespace_labels(store, "kube-system")):
                        return True
                    continue
                if _peer_matches(store, peer, policy_ns, dest, dest_ns, dest_ip):
                    return True
    return False


def dns_allowed(store: Any, source: Obj) -> bool:
    """Can the pod reach the cluster DNS (UDP or TCP 53)?"""
    return (egress_allowed(store, source, None, DNS_SERVICE_IP, 53, "UDP")
            or egress_allowed(store, source, None, DNS_SERVICE_IP, 53, "TCP"))
