"""How services are wired: which services a deployment calls (host:port values in its environment
and the ConfigMaps it reads), whether those ports are right, and whether each Service's endpoints
reach its pods (selector and targetPort)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .changes import containers
from .finding import Finding, restart
from .observe import Observations, words

_HOST_PORT = re.compile(r"^(?P<scheme>[a-z]+://)?(?P<host>[a-z0-9][a-z0-9.-]*):(?P<port>\d+)(?P<rest>/.*)?$")


@dataclass(frozen=True)
class Ref:
    """One setting of a deployment: env var ``name`` = ``value``, set literally or from a ConfigMap key."""

    deployment: str
    container: str
    name: str
    value: str
    configmap: str | None = None


def referenced_configmaps(dep: dict[str, Any] | None) -> list[str]:
    names: list[str] = []
    for c in containers(dep):
        names += [(s.get("configMapRef") or {}).get("name") for s in c.get("envFrom") or []]
        names += [((e.get("valueFrom") or {}).get("configMapKeyRef") or {}).get("name") for e in c.get("env") or []]
    spec = (((dep or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
    names += [(v.get("configMap") or {}).get("name") for v in spec.get("volumes") or []]
    return sorted({n for n in names if n})


async def references(obs: Observations, service: str) -> list[Ref]:
    dep = await obs.object("deployment", service)
    data: dict[str, dict[str, str]] = {}
    for cm in referenced_configmaps(dep):
        if cm in obs.configmaps:
            data[cm] = {str(k): str(v) for k, v in (((await obs.object("configmap", cm)) or {}).get("data") or {}).items()}
    refs = []
    for c in containers(dep):
        for src in c.get("envFrom") or []:
            cm = (src.get("configMapRef") or {}).get("name")
            refs += [Ref(service, c.get("name", ""), k, v, cm) for k, v in data.get(cm, {}).items()]
        for env in c.get("env") or []:
            key_ref = (env.get("valueFrom") or {}).get("configMapKeyRef") or {}
            if key_ref:
                value = data.get(key_ref.get("name"), {}).get(key_ref.get("key"))
                if value is not None:
                    refs.append(Ref(service, c.get("name", ""), env.get("name", ""), value, key_ref.get("name")))
            elif env.get("value") is not None:
                refs.append(Ref(service, c.get("name", ""), env.get("name", ""), str(env["value"])))
    return refs


async def dependencies(obs: Observations, service: str) -> list[str]:
    """Services this one calls: service names in its settings' values."""
    found: set[str] = set().union(*(words(r.value) for r in await references(obs, service)))
    return sorted(n for n in found & set(obs.services) if n != service)


async def wrong_port(obs: Observations, service: str) -> Finding | None:
    """A setting pointing at service:port where that Service listens on another port."""
    for ref in await references(obs, service):
        m = _HOST_PORT.match(ref.value.strip())
        host = m.group("host").split(".")[0] if m else None
        if not m or host not in obs.service_ports or not obs.service_ports[host]:
            continue
        port, right = int(m.group("port")), sorted(obs.service_ports[host])[0]
        if port in obs.service_ports[host]:
            continue
        fixed = f"{m.group('scheme') or ''}{m.group('host')}:{right}{m.group('rest') or ''}"
        where = f"ConfigMap {ref.configmap} key {ref.name}" if ref.configmap else f"env {ref.name}"
        if ref.configmap:
            plan = [("patch", {"kind": "configmap", "name": ref.configmap, "patch_type": "merge",
                               "patch": {"data": {ref.name: fixed}}}), restart(service)]
        else:
            plan = [("set_env", {"deployment": service, "container": ref.container, "env": {ref.name: fixed}})]
        return Finding(service, "wrong-env-value", f"{service} calls {host} on port {port} ({where}), but service "
                       f"{host} listens on {right}", [f"{where} = {ref.value}", f"service/{host} ports: "
                       f"{sorted(obs.service_ports[host])}"], plan, f"set {where} to {fixed}")
    return None


async def endpoint_problem(obs: Observations, services: list[str]) -> Finding | None:
    """A Service whose selector matches none of its ready pods, or whose targetPort misses the pods' port."""
    rows = {r["NAME"]: r.get("ENDPOINTS", "") for r in await obs.table("endpoints")}
    for name in services:
        pods = obs.pods_of(name)
        if name not in rows or not pods or not any(p.is_ready for p in pods):
            continue
        dep = await obs.object("deployment", name)
        if rows[name] in ("<none>", ""):
            labels = (((dep or {}).get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
            plan = [("patch", {"kind": "service", "name": name, "patch_type": "merge",
                               "patch": {"spec": {"selector": labels}}})] if labels else []
            return Finding(name, "wrong-service-selector", f"service {name} has no endpoints although its pods are "
                           "ready: its selector matches none of them", [f"endpoints/{name}: <none>",
                                                                          f"deployment selector: {labels}"],
                           plan, f"set service {name}'s selector to {labels}")
        ports = {int(p) for p in re.findall(r":(\d+)", rows[name])}
        container_ports = {p.get("containerPort") for c in containers(dep) for p in c.get("ports") or []}
        if ports and container_ports and not ports & container_ports:
            right = sorted(container_ports)[0]
            return Finding(name, "wrong-target-port", f"service {name} sends traffic to port {sorted(ports)[0]}, "
                           f"but its pods listen on {right}", [f"endpoints/{name}: {rows[name]}",
                                                               f"container ports: {sorted(container_ports)}"],
                           [("patch", {"kind": "service", "name": name, "patch_type": "json", "patch": [
                               {"op": "replace", "path": "/spec/ports/0/targetPort", "value": right}]})],
                           f"set service {name}'s targetPort to {right}")
    return None
