"""Tables for core/v1 kinds other than pods (services, endpoints, config, events, nodes, ...)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .common import (AGE, NAME, Column, Obj, Printer, age, as_dict, as_int, as_list, col, dig, format_labels,
                     meta, name, since, wide)

LOAD_BALANCER_WIDTH = 16


# -- services and endpoints ------------------------------------------------------------------
def _lb_ingress(svc: Obj) -> str:
    seen = set()
    for ing in as_list(dig(svc, "status", "loadBalancer", "ingress")):
        if isinstance(ing, dict):
            value = ing.get("ip") or ing.get("hostname")
            if value:
                seen.add(str(value))
    return ",".join(sorted(seen))  # the server prints the full value (it renders wide)


def _external_ip(svc: Obj) -> str:
    spec = as_dict(svc.get("spec"))
    external = [str(ip) for ip in as_list(spec.get("externalIPs"))]
    svc_type = spec.get("type") or "ClusterIP"
    if svc_type in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if svc_type == "LoadBalancer":
        lb = _lb_ingress(svc)
        if external:
            return ",".join(([*lb.split(",")] if lb else []) + external)
        return lb or "<pending>"
    if svc_type == "ExternalName":
        return str(spec.get("externalName", ""))
    return "<unknown>"


def _ports(svc: Obj) -> str:
    pieces = []
    for p in as_list(dig(svc, "spec", "ports")):
        if not isinstance(p, dict):
            continue
        proto = p.get("protocol") or "TCP"
        node_port = as_int(p.get("nodePort"))
        port = as_int(p.get("port"))
        pieces.append(f"{port}:{node_port}/{proto}" if node_port > 0 else f"{port}/{proto}")
    return ",".join(pieces) or "<none>"


def _cluster_ip(svc: Obj) -> str:
    spec = as_dict(svc.get("spec"))
    ips = as_list(spec.get("clusterIPs"))
    if ips:
        return str(ips[0])
    return str(spec.get("clusterIP") or "<none>")


def _service(svc: Obj, now: datetime) -> list[Any]:
    return [name(svc), str(dig(svc, "spec", "type", default="ClusterIP")), _cluster_ip(svc), _external_ip(svc),
            _ports(svc), age(svc, now), format_labels(dig(svc, "spec", "selector"))]


SERVICE = Printer((
    NAME,
    col("Type", "type determines how the Service is exposed. Defaults to ClusterIP."),
    col("Cluster-IP", "clusterIP is the IP address of the service and is usually assigned randomly."),
    col("External-IP", "externalIPs is a list of IP addresses for which nodes in the cluster will also accept "
                       "traffic for this service."),
    col("Port(s)", "The list of ports that are exposed by this service."),
    AGE,
    wide("Selector", "Route service traffic to pods with label keys and values matching this selector."),
), _service)


def format_endpoints(ep: Obj) -> str:
    subsets = [s for s in as_list(ep.get("subsets")) if isinstance(s, dict)]
    if not subsets:
        return "<none>"
    shown: list[str] = []
    limit, more, count = 3, False, 0
    for ss in subsets:
        addresses = [a for a in as_list(ss.get("addresses")) if isinstance(a, dict)]
        ports = [p for p in as_list(ss.get("ports")) if isinstance(p, dict)]
        if not ports:
            count += len(addresses)
            for a in addresses:
                if len(shown) == limit:
                    more = True
                    break
                shown.append(str(a.get("ip", "")))
            continue
        for port in ports:
            count += len(addresses)
            for a in addresses:
                if len(shown) == limit:
                    more = True
                    break
                ip = str(a.get("ip", ""))
                host = f"[{ip}]" if ":" in ip else ip
                shown.append(f"{host}:{as_int(port.get('port'))}")
    text = ",".join(shown)
    return f"{text} + {count - limit} more..." if more else text


ENDPOINTS = Printer((
    NAME,
    col("Endpoints", "The set of all endpoints is the union of all subsets."),
    AGE,
), lambda ep, now: [name(ep), format_endpoints(ep), age(ep, now)])


# -- configuration -------------------------------------------------------------------------
CONFIGMAP = Printer((
    NAME, col("Data", "Data contains the configuration data."), AGE,
), lambda cm, now: [name(cm), len(as_dict(cm.get("data"))) + len(as_dict(cm.get("binaryData"))), age(cm, now)])

SECRET = Printer((
    NAME, col("Type", "Used to facilitate programmatic handling of secret data."),
    col("Data", "Data contains the secret data."), AGE,
), lambda s, now: [name(s), str(s.get("type") or "Opaque"), len(as_dict(s.get("data"))), age(s, now)])

SERVICEACCOUNT = Printer((
    NAME, col("Secrets", "Secrets is a list of the secrets in the same namespace that pods running using this "
                         "ServiceAccount are allowed to use."), AGE,
), lambda sa, now: [name(sa), len(as_list(sa.get("secrets"))), age(sa, now)])

NAMESPACE = Printer((
    NAME, col("Status", "The status of the namespace"), AGE,
), lambda ns, now: [name(ns), str(dig(ns, "status", "phase", default="Active")), age(ns, now)])


def _quota(q: Obj, now: datetime) -> list[Any]:
    hard = as_dict(dig(q, "status", "hard"))
    used = as_dict(dig(q, "status", "used"))
    requests, limits = [], []
    for resource in sorted(hard):
        target = limits if resource.split(".")[0] == "limits" and "." in resource else requests
        target.append(f"{resource}: {used.get(resource, '0')}/{hard[resource]}")
    return [name(q), ", ".join(requests), ", ".join(limits), age(q, now)]


RESOURCEQUOTA = Printer((
    NAME,
    col("Request", "Request represents a minimum amount of cpu/memory that a container may consume."),
    col("Limit", "Limits control the maximum amount of cpu/memory that a container may use independent of "
                 "contention on the node."),
    AGE,
), _quota)


def _pvc(pvc: Obj, now: datetime) -> list[Any]:
    spec = as_dict(pvc.get("spec"))
    status = as_dict(pvc.get("status"))
    phase = "Terminating" if meta(pvc).get("deletionTimestamp") else str(status.get("phase", ""))
    capacity = modes = ""
    if spec.get("volumeName"):
        capacity = str(as_dict(status.get("capacity")).get("storage", ""))
        modes = ",".join({"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX",
                          "ReadWriteOncePod": "RWOP"}.get(m, m) for m in as_list(status.get("accessModes")))
    storage_class = spec.get("storageClassName") or meta(pvc).get("annotations", {}).get(
        "volume.beta.kubernetes.io/storage-class", "")
    return [name(pvc), phase, str(spec.get("volumeName", "")), capacity, modes, str(storage_class),
            str(spec.get("volumeAttributesClassName") or "<unset>"), age(pvc, now),
            str(spec.get("volumeMode") or "<unset>")]


PVC = Printer((
    NAME, col("Status", "Phase represents the current phase of PersistentVolumeClaim."),
    col("Volume", "volumeName is the binding reference to the PersistentVolume backing this claim."),
    col("Capacity", "capacity represents the actual resources of the underlying volume."),
    col("Access Modes", "accessModes contains the actual access modes the volume backing the PVC has."),
    col("StorageClass", "StorageClass of the pvc"),
    col("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
    AGE, wide("VolumeMode", "volumeMode defines what type of volume is required by the claim."),
), _pvc)


# -- events --------------------------------------------------------------------------------
def _event_source(ev: Obj) -> str:
    component = dig(ev, "source", "component") or ev.get("reportingController") or ev.get("reportingComponent") or ""
    instance = dig(ev, "source", "host") or ev.get("reportingInstance") or ""
    return f"{component}, {instance}" if instance else str(component)


def _event(ev: Obj, now: datetime) -> list[Any]:
    first = since(ev.get("firstTimestamp"), now)
    if not ev.get("firstTimestamp"):
        first = since(ev.get("eventTime"), now)
    last = since(ev.get("lastTimestamp"), now) if ev.get("lastTimestamp") else first
    count = as_int(ev.get("count"))
    series = ev.get("series")
    if isinstance(series, dict):
        last = since(series.get("lastObservedTime"), now)
        count = as_int(series.get("count"))
    elif count == 0:
        count = 1
    involved = as_dict(ev.get("involvedObject"))
    kind = str(involved.get("kind", "")).lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    return [last, str(ev.get("type", "")), str(ev.get("reason", "")), target, str(involved.get("fieldPath", "")),
            _event_source(ev), str(ev.get("message", "")).strip(), first, count, name(ev)]


EVENT = Printer((
    col("Last Seen", "The time at which the most recent occurrence of this event was recorded."),
    col("Type", "Type of this event (Normal, Warning), new types could be added in the future"),
    col("Reason", "This should be a short, machine understandable string that gives the reason for the "
                  "transition into the object's current status."),
    col("Object", "The object that this event is about."),
    wide("Subobject", "If referring to a piece of an object instead of an entire object, this string should "
                      "contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]."),
    wide("Source", "The component reporting this event. Should be a short machine understandable string."),
    col("Message", "A human-readable description of the status of this operation."),
    wide("First Seen", "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)"),
    wide("Count", "The number of times this event has occurred."),
    Column("Name", "string", "name", "Name must be unique within a namespace.", 1),
), _event)


# -- nodes ---------------------------------------------------------------------------------
def _node_status(node: Obj) -> str:
    parts = []
    for cond in as_list(dig(node, "status", "conditions")):
        if isinstance(cond, dict) and cond.get("type") == "Ready":
            parts = ["Ready" if cond.get("status") == "True" else "NotReady"]
    if not parts:
        parts = ["Unknown"]
    if dig(node, "spec", "unschedulable"):
        parts.append("SchedulingDisabled")
    return ",".join(parts)


def _node_roles(node: Obj) -> str:
    roles = set()
    for key, value in as_dict(meta(node).get("labels")).items():
        if key.startswith("node-role.kubernetes.io/") and len(key) > len("node-role.kubernetes.io/"):
            roles.add(key[len("node-role.kubernetes.io/"):])
        elif key == "kubernetes.io/role" and value:
            roles.add(str(value))
    return ",".join(sorted(roles)) or "<none>"


def _node_address(node: Obj, type_: str) -> str:
    for addr in as_list(dig(node, "status", "addresses")):
        if isinstance(addr, dict) and addr.get("type") == type_:
            return str(addr.get("address", ""))
    return "<none>"


def _node(node: Obj, now: datetime) -> list[Any]:
    info = as_dict(dig(node, "status", "nodeInfo"))
    return [name(node), _node_status(node), _node_roles(node), age(node, now), str(info.get("kubeletVersion", "")),
            _node_address(node, "InternalIP"), _node_address(node, "ExternalIP"),
            str(info.get("osImage") or "<unknown>"), str(info.get("kernelVersion") or "<unknown>"),
            str(info.get("containerRuntimeVersion") or "<unknown>")]


NODE = Printer((
    NAME, col("Status", "The status of the node"), col("Roles", "The roles of the node"), AGE,
    col("Version", "Kubelet Version reported by the node."),
    wide("Internal-IP", "List of addresses reachable to the node."),
    wide("External-IP", "List of addresses reachable to the node."),
    wide("OS-Image", "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."),
    wide("Kernel-Version", "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."),
    wide("Container-Runtime", "ContainerRuntime Version reported by the node through runtime remote API "
                              "(e.g. containerd://1.4.2)."),
), _node)
