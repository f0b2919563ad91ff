"""The heuristic agent's rules: from one service's pods, events and logs to a finding.

Each rule names a root-cause label (the catalogue's canonical spelling), the evidence it saw,
and the obvious mitigation as a tool call (applied only when the agent is configured to).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from .observe import Observations, words

_MISSING_CM = re.compile(r'configmaps? "([^"]+)" not found|ConfigMap [\w-]+/([\w.-]+)', re.I)
_MISSING_SECRET = re.compile(r'secrets? "([^"]+)" not found', re.I)
_DIAL = re.compile(r"dial tcp ([a-z0-9.-]+):(\d+)", re.I)
_ENV_FATAL = re.compile(r"(required env|env(?:ironment)? (?:var(?:iable)? )?\S+ (?:is )?(?:not set|empty|missing)|"
                        r"configuration \S+ is empty|not set)", re.I)
_MEMORY = re.compile(r"^(\d+)(Mi|Gi|M|G)?$")


@dataclass
class Finding:
    service: str
    label: str
    summary: str
    evidence: list[str] = field(default_factory=list)
    plan: tuple[str, dict[str, Any]] | None = None  # (tool, args) of the obvious mitigation
    proposal: str = ""
    hard: bool = True  # a failure of this service itself (not a symptom of another's)


def revision(dep: dict[str, Any] | None) -> int:
    try:
        return int(((dep or {}).get("metadata") or {}).get("annotations", {}).get(
            "deployment.kubernetes.io/revision", "1"))
    except (TypeError, ValueError):
        return 1


def containers(dep: dict[str, Any] | None) -> list[dict[str, Any]]:
    return (((dep or {}).get("spec") or {}).get("template") or {}).get("spec", {}).get("containers") or []


def referenced_configmaps(dep: dict[str, Any] | None) -> set[str]:
    names = set()
    spec = (((dep or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
    for c in containers(dep):
        for src in c.get("envFrom") or []:
            if (src.get("configMapRef") or {}).get("name"):
                names.add(src["configMapRef"]["name"])
        for env in c.get("env") or []:
            ref = (env.get("valueFrom") or {}).get("configMapKeyRef") or {}
            if ref.get("name"):
                names.add(ref["name"])
    for vol in spec.get("volumes") or []:
        if (vol.get("configMap") or {}).get("name"):
            names.add(vol["configMap"]["name"])
    return names


def _double_memory(value: str | None) -> str | None:
    m = _MEMORY.match(str(value or ""))
    if not m:
        return None
    n = int(m.group(1)) * (1024 if m.group(2) in ("Gi", "G") else 1)
    return f"{max(256, n * 2)}Mi"


def configmap_from_baseline(baseline: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    for cm in (baseline or {}).get("ConfigMap") or []:
        if (cm.get("metadata") or {}).get("name") == name:
            meta = cm.get("metadata") or {}
            out = {"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": name, **({"labels": meta["labels"]} if meta.get("labels") else {})}}
            for key in ("data", "binaryData"):
                if cm.get(key):
                    out[key] = copy.deepcopy(cm[key])
            return out
    return None


async def dependencies(obs: Observations, service: str) -> list[str]:
    """Services this one calls: service names in its env values and referenced ConfigMaps' data."""
    dep = await obs.object("deployment", service)
    values: list[str] = []
    for c in containers(dep):
        values += [str(e.get("value") or "") for e in c.get("env") or []]
    for cm in sorted(referenced_configmaps(dep)):
        if cm in obs.configmaps:
            values += [str(v) for v in ((await obs.object("configmap", cm)) or {}).get("data", {}).values()]
    found = set().union(*(words(v) for v in values)) if values else set()
    return sorted(n for n in found & set(obs.services) if n != service)


async def examine(obs: Observations, service: str, baseline: dict[str, Any] | None) -> Finding | None:
    """A finding about ``service`` itself, or None when its pods look healthy (or merely unready)."""
    pods = obs.pods_of(service)
    row = obs.deployments.get(service, {})
    if row.get("READY", "").endswith("/0"):
        replicas = next((d.get("spec", {}).get("replicas") for d in (baseline or {}).get("Deployment") or []
                         if d.get("metadata", {}).get("name") == service), None) or 2
        return Finding(service, "scaled-to-zero", f"deployment {service} is scaled to 0 replicas",
                       [f"deployment/{service} READY {row.get('READY')}"],
                       ("scale", {"kind": "deployment", "name": service, "replicas": replicas}),
                       f"scale deployment {service} back to {replicas} replicas")
    failing = [p for p in pods if p.hard_failure]
    events = obs.events_about(service)
    if not failing:
        pending = [p for p in pods if p.status == "Pending"]
        if pending:
            return _pending(service, pending[0].name, events)
        return None
    pod = failing[0]
    state = pod.hard_failure or ""
    evidence = [f"pod/{pod.name} {pod.status} ({pod.ready} ready, {pod.restarts} restarts)"]
    evidence += [f"{e.kind}/{e.name}: {e.message}" for e in events[-3:]]
    if state in ("ImagePullBackOff", "ErrImagePull", "InvalidImageName"):
        return await _bad_image(obs, service, evidence)
    if state.startswith("CreateContainer"):
        return await _config_error(obs, service, evidence, events, baseline)
    described = await obs.describe("pod", pod.name) if state != "OOMKilled" else "OOMKilled"
    if "OOMKilled" in described:
        return await _oom(obs, service, evidence + ["last state: Terminated, reason OOMKilled"])
    logs = await obs.logs(pod.name, previous=pod.restarts > 0)
    return await _crash(obs, service, evidence, logs)


def _pending(service: str, pod: str, events: list[Any]) -> Finding:
    text = " ".join(e.message for e in events)
    if "quota" in text.lower():
        return Finding(service, "resource-quota-exceeded", f"{service} cannot create pods: quota exceeded",
                       [f"pod/{pod} Pending", text[:300]], None, "raise the quota or lower the requests")
    return Finding(service, "insufficient-node-resources", f"{service} pods cannot be scheduled",
                   [f"pod/{pod} Pending", text[:300]], None, "lower the resource requests or add capacity")


async def _bad_image(obs: Observations, service: str, evidence: list[str]) -> Finding:
    dep = await obs.object("deployment", service)
    images = ", ".join(c.get("image", "?") for c in containers(dep))
    plan = ("rollout_undo", {"deployment": service}) if revision(dep) > 1 else None
    return Finding(service, "bad-image-tag", f"deployment {service} runs image {images}, which cannot be pulled",
                   evidence + [f"image: {images}"], plan,
                   f"roll {service} back to its previous revision" if plan else f"set {service}'s image to a published tag")


async def _config_error(obs: Observations, service: str, evidence: list[str], events: list[Any],
                        baseline: dict[str, Any] | None) -> Finding:
    text = " ".join(e.message for e in events)
    secret = _MISSING_SECRET.search(text)
    if secret:
        return Finding(service, "missing-secret", f"{service} pods cannot start: secret {secret.group(1)} is missing",
                       evidence, None, f"recreate secret {secret.group(1)}")
    m = _MISSING_CM.search(text)
    dep = await obs.object("deployment", service)
    missing = (m.group(1) or m.group(2)) if m else next(
        (c for c in sorted(referenced_configmaps(dep)) if c not in obs.configmaps), None)
    if missing is None:
        return Finding(service, "create-container-config-error", f"{service} pods fail with a container config error",
                       evidence, None, "fix the container configuration")
    manifest = configmap_from_baseline(baseline, missing)
    plan = ("apply", {"manifest": manifest}) if manifest else None
    return Finding(service, "missing-configmap", f"{service} pods cannot start: ConfigMap {missing} does not exist",
                   evidence + [f"configmap/{missing} is referenced by deployment/{service} but absent"], plan,
                   f"recreate ConfigMap {missing}" + (" from the last known-good state" if plan else ""))


async def _oom(obs: Observations, service: str, evidence: list[str]) -> Finding:
    dep = await obs.object("deployment", service)
    limits = [((c.get("resources") or {}).get("limits") or {}).get("memory") for c in containers(dep)]
    evidence = evidence + [f"memory limit: {', '.join(str(x) for x in limits)}"]
    if revision(dep) > 1:
        plan: tuple[str, dict[str, Any]] | None = ("rollout_undo", {"deployment": service})
        proposal = f"roll {service} back to the revision before its memory limit changed"
    else:
        bigger = _double_memory(limits[0] if limits else None)
        name = containers(dep)[0].get("name") if containers(dep) else service
        plan = ("patch", {"kind": "deployment", "name": service, "patch": {"spec": {"template": {"spec": {
            "containers": [{"name": name, "resources": {"limits": {"memory": bigger}}}]}}}}}) if bigger else None
        proposal = f"raise {service}'s memory limit" + (f" to {bigger}" if bigger else "")
    return Finding(service, "memory-limit-too-low", f"{service} containers are OOM-killed: the memory limit is below "
                   "the working set", evidence, plan, proposal)


async def _crash(obs: Observations, service: str, evidence: list[str], logs: str) -> Finding:
    lines = [line for line in logs.splitlines() if line.strip()][-5:]
    evidence = evidence + [f"log: {line}" for line in lines[-2:]]
    dep = await obs.object("deployment", service)
    undo = ("rollout_undo", {"deployment": service}) if revision(dep) > 1 else None
    dial = _DIAL.search(logs)
    if dial:
        return Finding(service, "dependency-unreachable", f"{service} crashes because it cannot reach "
                       f"{dial.group(1)}:{dial.group(2)}", evidence, None, f"fix {service}'s connection settings",
                       hard=False)
    if _ENV_FATAL.search(logs):
        return Finding(service, "missing-env-var", f"{service} exits at start-up: required configuration is missing",
                       evidence, undo, "restore the missing environment variable"
                       + (" (roll back the last change)" if undo else ""))
    return Finding(service, "code-defect" if undo else "crash-loop", f"{service} is crash-looping",
                   evidence, undo, "roll back the last release" if undo else "inspect the crash")


async def symptom_hint(obs: Observations, service: str) -> Finding | None:
    """For a service that is only unready: a dependency its logs name, or its Service's endpoints."""
    pods = obs.pods_of(service)
    if not pods:
        return None
    logs = await obs.logs(pods[0].name)
    dial = _DIAL.search(logs)
    if dial and dial.group(1).split(".")[0] in obs.services:
        host, port = dial.group(1).split(".")[0], dial.group(2)
        svc = await obs.object("service", host)
        ports = {str(p.get("port")) for p in ((svc or {}).get("spec") or {}).get("ports") or []}
        if ports and port not in ports:
            return Finding(service, "wrong-env-value", f"{service} calls {host}:{port}, but service {host} listens "
                           f"on {', '.join(sorted(ports))}", [f"log: {dial.group(0)}"], None,
                           f"point {service} at {host}:{sorted(ports)[0]}")
    return None
