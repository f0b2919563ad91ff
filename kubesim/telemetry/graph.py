"""The service graph: which pods are service instances, and where each of their calls lands.

A call is resolved through the real objects, as a pod's network stack would: the configured
``host:port`` (env var, config file or default) → cluster DNS → the Service and its port → the
Endpoints' ready addresses → NetworkPolicy (egress at the caller, ingress at the callee) → the
callee container listening on the target port → the callee's token check. Each broken step
yields the error text a Go HTTP client would log, so logs name the failing dependency.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..resources import ENDPOINTS, PODS, SERVICES
from ..workloads.commands import cluster_fqdn
from .behaviour import Behaviour, BehaviourRegistry, Call
from .netpol import DNS_SERVICE_IP, dns_allowed, egress_allowed, ingress_allowed

Obj = dict[str, Any]
NAME_LABELS = ("app.kubernetes.io/name", "app", "k8s-app", "name")


@dataclass
class Instance:
    """A pod whose container runs an image with a service behaviour."""

    uid: str
    namespace: str
    pod_name: str
    service: str
    ip: str
    pod: Obj
    container: str
    container_id: str
    behaviour: Behaviour
    env: dict[str, str]
    files: dict[str, str]
    listening: bool
    ready: bool


@dataclass(frozen=True)
class Endpoint:
    namespace: str
    pod: str
    ip: str
    port: int
    failure: str | None  # None | "refused" | "blocked" | "unauthorized"
    message: str
    instance: str | None  # the callee Instance uid when the callee has a behaviour


@dataclass(frozen=True)
class Link:
    call: Call
    address: str
    url: str
    failure: str | None  # whole-link: None | "config" | "dns" | "dns_timeout" | "timeout" | "refused"
    message: str
    endpoints: tuple[Endpoint, ...] = ()
    external: bool = False

    @property
    def broken(self) -> bool:
        return self.failure is not None or (bool(self.endpoints) and all(e.failure for e in self.endpoints))


def service_name(pod: Obj) -> str:
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    for key in NAME_LABELS:
        if labels.get(key):
            return str(labels[key])
    for ref in meta.get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("kind") == "ReplicaSet" and ref.get("name"):
            name, _, tail = str(ref["name"]).rpartition("-")
            return name if name and tail == labels.get("pod-template-hash") else str(ref["name"])
        if isinstance(ref, dict) and ref.get("name"):
            return str(ref["name"])
    return str(meta.get("name", ""))


def _pod_ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [] if isinstance(c, dict))


def _profile(cluster: Any, image: str) -> Any:
    registry = getattr(cluster, "profiles", None)
    return registry.lookup(image) if registry is not None else None


def discover(cluster: Any, registry: BehaviourRegistry, now: float) -> dict[str, Instance]:
    """Service instances by pod uid: pods on a node with a container whose image has a behaviour."""
    out: dict[str, Instance] = {}
    store = cluster.store
    for uid, pr in list(cluster.runtime.items()):
        pod = store.find(PODS, pr.namespace, pr.name)
        if pod is None or pod["metadata"].get("uid") != uid:
            continue
        for c in pr.containers:
            run = c.run
            profile = run.profile if run is not None else _profile(cluster, c.image)
            behaviour = registry.lookup(c.image, profile)
            if behaviour is None:
                continue
            running = run is not None and c.phase == "running" and run.app
            listening = running and now >= run.listen_at - 1e-6
            port = behaviour.port or (profile.ports[0] if profile and profile.ports else None)
            if port is not None and profile is not None and port not in profile.ports:
                listening = False
            out[uid] = Instance(uid, pr.namespace, pr.name, service_name(pod), pr.pod_ip or "", pod, c.name,
                                c.container_id or "", behaviour, dict(run.env) if running else {},
                                dict(run.files) if running else {}, listening, _pod_ready(pod))
            break
    return out


# -- addresses ----------------------------------------------------------------------------------

def configured_address(call: Call, env: dict[str, str], files: dict[str, str]) -> str:
    if call.env and env.get(call.env):
        return env[call.env].strip()
    if call.file and call.file in files:
        content = files[call.file]
        if not call.key:
            return content.strip()
        for line in content.splitlines():
            for sep in ("=", ":"):
                k, found, v = line.partition(sep)
                if found and k.strip() == call.key:
                    return v.strip().strip('"')
    return (call.default or "").strip()


def parse_address(text: str) -> tuple[str, str, int | None, str]:
    """(scheme, host, port or None when invalid, path) of ``host:port`` or a URL."""
    scheme = "http"
    rest = text
    if "://" in text:
        scheme, rest = text.split("://", 1)
    hostport, _, path = rest.partition("/")
    host, colon, port_text = hostport.rpartition(":")
    if not colon:
        return scheme, hostport, (443 if scheme == "https" else 80), "/" + path
    port = int(port_text) if port_text.isdigit() and 0 < int(port_text) < 65536 else None
    return scheme, host, port, "/" + path


def _op(method: str) -> str:
    return method[:1].upper() + method[1:].lower()


class Resolver:
    """Resolves calls for one moment of the cluster; cheap enough to build per scrape or probe."""

    def __init__(self, cluster: Any, instances: dict[str, Instance], now: float):
        self.cluster = cluster
        self.store = cluster.store
        self.instances = instances
        self.now = now

    def link(self, caller: Instance, call: Call) -> Link:
        address = configured_address(call, caller.env, caller.files)
        if not address:
            what = call.env or call.file or "address"
            return Link(call, "", "", "config", f"no address configured for {call.name} ({what} is empty)")
        scheme, host, port, path = parse_address(address)
        url = f"{scheme}://{host}{'' if port in (None, 80) and scheme == 'http' else f':{port}'}"
        url += call.path if path == "/" else path
        op = _op(call.method)
        if port is None:
            return Link(call, address, url, "config", f'{op} "{url}": dial tcp: address {address.split("://")[-1]}: '
                                                      f"invalid port")
        fqdn = cluster_fqdn(host.lower(), caller.namespace)
        if host.replace(".", "").isdigit():
            return self._direct(caller, call, address, url, host, port)
        if not fqdn.endswith(".svc.cluster.local"):
            return Link(call, address, url, None, "", external=True)
        if not dns_allowed(self.store, caller.pod):
            return Link(call, address, url, "dns_timeout",
                        f'{op} "{url}": dial tcp: lookup {host} on {DNS_SERVICE_IP}:53: read udp '
                        f"{caller.ip}:{53000 + len(host) * 97 % 9000}->{DNS_SERVICE_IP}:53: i/o timeout")
        parts = fqdn[: -len(".svc.cluster.local")].split(".")
        svc = self.store.find(SERVICES, parts[1], parts[0]) if len(parts) == 2 else None
        nxdomain = f'{op} "{url}": dial tcp: lookup {host} on {DNS_SERVICE_IP}:53: no such host'
        if svc is None:
            return Link(call, address, url, "dns", nxdomain)
        spec = svc.get("spec") or {}
        if spec.get("type") == "ExternalName":
            return Link(call, address, url, None, "", external=True)
        if spec.get("clusterIP") == "None":
            return self._headless(caller, call, address, url, svc, port, nxdomain)
        vip = str(spec.get("clusterIP") or "")
        svc_port = next((p for p in spec.get("ports") or [] if isinstance(p, dict) and p.get("port") == port
                         and p.get("protocol", "TCP") == "TCP"), None)
        timeout = f'{op} "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
        refused = f'{op} "{url}": dial tcp {vip}:{port}: connect: connection refused'
        if svc_port is None:
            return Link(call, address, url, "timeout", timeout)
        targets = self._endpoint_targets(svc, svc_port)
        if not targets:
            return Link(call, address, url, "refused", refused)
        eps = tuple(self._endpoint(caller, call, url, ns, name, ip, tport, refused, timeout)
                    for ns, name, ip, tport in targets)
        return Link(call, address, url, None, "", eps)

    # -- endpoints ------------------------------------------------------------------------------
    def _endpoint_targets(self, svc: Obj, svc_port: Obj) -> list[tuple[str, str, str, int]]:
        meta = svc["metadata"]
        ep = self.store.find(ENDPOINTS, meta.get("namespace", ""), meta["name"])
        out = []
        for subset in (ep or {}).get("subsets") or []:
            ports = subset.get("ports") or []
            match = next((p for p in ports if p.get("name", "") == svc_port.get("name", "")), None)
            if match is None and len(ports) == 1 and not svc_port.get("name"):
                match = ports[0]
            if match is None:
                continue
            for addr in subset.get("addresses") or []:
                ref = addr.get("targetRef") or {}
                out.append((str(ref.get("namespace") or meta.get("namespace", "")), str(ref.get("name") or ""),
                            str(addr.get("ip", "")), int(match.get("port") or 0)))
        return out

    def _headless(self, caller: Instance, call: Call, address: str, url: str, svc: Obj, port: int,
                  nxdomain: str) -> Link:
        targets = [(ns, name, ip, port) for ns, name, ip, _ in
                   self._endpoint_targets(svc, {"name": ((svc.get("spec") or {}).get("ports") or [{}])[0].get("name", "")})]
        if not targets:
            return Link(call, address, url, "dns", nxdomain)
        op = _op(call.method)
        eps = tuple(self._endpoint(caller, call, url, ns, name, ip, port,
                                   f'{op} "{url}": dial tcp {ip}:{port}: connect: connection refused',
                                   f'{op} "{url}": context deadline exceeded (Client.Timeout exceeded while '
                                   f"awaiting headers)")
                    for ns, name, ip, port in targets)
        return Link(call, address, url, None, "", eps)

    def _direct(self, caller: Instance, call: Call, address: str, url: str, ip: str, port: int) -> Link:
        uid = self.cluster.runtime.ips.get(ip)
        pr = self.cluster.runtime.get(uid) if uid else None
        op = _op(call.method)
        timeout = f'{op} "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
        if pr is None:
            return Link(call, address, url, "timeout", timeout)
        refused = f'{op} "{url}": dial tcp {ip}:{port}: connect: connection refused'
        return Link(call, address, url, None, "",
                    (self._endpoint(caller, call, url, pr.namespace, pr.name, ip, port, refused, timeout),))

    def _endpoint(self, caller: Instance, call: Call, url: str, ns: str, name: str, ip: str, port: int,
                  refused: str, timeout: str) -> Endpoint:
        pod = self.store.find(PODS, ns, name)
        uid = (pod or {}).get("metadata", {}).get("uid")
        callee = self.instances.get(uid) if uid else None
        instance = callee.uid if callee is not None else None
        if pod is None:
            return Endpoint(ns, name, ip, port, "refused", refused, None)
        if not (egress_allowed(self.store, caller.pod, pod, ip, port)
                and ingress_allowed(self.store, pod, caller.pod, caller.ip, port)):
            return Endpoint(ns, name, ip, port, "blocked", timeout, instance)
        if not self._listening(pod, port):
            return Endpoint(ns, name, ip, port, "refused", refused, instance)
        if callee is not None and callee.behaviour.auth_env:
            expected = callee.env.get(callee.behaviour.auth_env, "")
            token = caller.env.get(call.token_env, "") if call.token_env else ""
            if expected and token != expected:
                return Endpoint(ns, name, ip, port, "unauthorized",
                                f"401 from {call.name}: {callee.behaviour.auth_error}", instance)
        return Endpoint(ns, name, ip, port, None, "", instance)

    def _listening(self, pod: Obj, port: int) -> bool:
        pr = self.cluster.runtime.get(pod["metadata"].get("uid", ""))
        if pr is None:
            return False
        for c in pr.containers:
            run = c.run
            if run is not None and c.phase == "running" and run.app and self.now >= run.listen_at - 1e-6 \
                    and port in run.profile.ports:
                return True
        return False


def readiness_blocker(cluster: Any, registry: BehaviourRegistry, pod: Obj, container: str) -> str | None:
    """The readiness verdict for a pod whose profile makes readiness depend on some of its calls."""
    pr = cluster.runtime.get(pod["metadata"].get("uid", ""))
    c = pr.container(container) if pr is not None else None
    run = c.run if c is not None else None
    if run is None:
        return None
    behaviour = registry.lookup(c.image, run.profile)
    if behaviour is None or not any(call.readiness for call in behaviour.calls):
        return None
    probe = next((s.get("readinessProbe") for s in (pod.get("spec") or {}).get("containers") or []
                  if isinstance(s, dict) and s.get("name") == container), None)
    if not isinstance(probe, dict) or not any(k in probe for k in ("httpGet", "grpc")):
        return None
    now = cluster.now_s()
    me = Instance(pr.uid, pr.namespace, pr.name, service_name(pod), pr.pod_ip or "", pod, container,
                  c.container_id or "", behaviour, dict(run.env), dict(run.files), True, False)
    resolver = Resolver(cluster, {}, now)
    for call in behaviour.calls:
        if call.readiness and resolver.link(me, call).broken:
            return "HTTP probe failed with statuscode: 503"
    return None
