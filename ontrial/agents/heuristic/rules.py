"""The heuristic agent's rules: from one service's pods, events, logs and last rollout to a finding."""

from __future__ import annotations

import re
from typing import Any

from .changes import (Change, config_drift, containers, last_change, memory_bytes, memory_limit_cut,
                      requests_grew, revision)
from .finding import Finding, restart, undo
from .observe import EventRow, Observations, PodRow
from .wiring import referenced_configmaps

_MISSING_CM = re.compile(r'configmaps? "([^"]+)" not found', re.I)
_MISSING_CM_KEY = re.compile(r"couldn't find key (\S+) in ConfigMap [\w-]+/([\w.-]+)", re.I)
_MISSING_SECRET = re.compile(r'secrets? "([^"]+)" not found', re.I)
_DIAL = re.compile(r"dial tcp ([a-z0-9.-]+):(\d+)", re.I)
_MISSING_SETTING = re.compile(r"(?:missing required (?:setting|env(?:ironment)?(?: variable)?|configuration)"
                              r"|required env(?:ironment)? (?:variable )?|configuration|env(?:ironment)? var(?:iable)?)"
                              r"\s+([A-Z][A-Z0-9_]+)(?: is (?:empty|not set|missing))?", re.I)
_LIMIT = re.compile(r"Limits:\s*\n(?:\s*cpu:\s*\S+\s*\n)?\s*memory:\s*(\S+)")
_READINESS = re.compile(r"Readiness probe failed: (.*)")


async def examine(obs: Observations, service: str, baseline: dict[str, Any] | None) -> Finding | None:
    """A finding about ``service`` itself, or None when its pods look healthy (or merely wait on others)."""
    row = obs.deployments.get(service, {})
    if row.get("READY", "").endswith("/0"):
        replicas = next((d.get("spec", {}).get("replicas") for d in (baseline or {}).get("Deployment") or []
                         if d.get("metadata", {}).get("name") == service), None) or 2
        return Finding(service, "scaled-to-zero", f"deployment {service} is scaled to 0 replicas",
                       [f"deployment/{service} READY {row.get('READY')}"],
                       [("scale", {"kind": "deployment", "name": service, "replicas": replicas})],
                       f"scale deployment {service} back to {replicas} replicas")
    pods, events = obs.pods_of(service), obs.events_about(service)
    failing = [p for p in pods if p.hard_failure] or [p for p in pods if p.restarts > 0]
    if failing:
        pod = failing[0]
        evidence = [f"pod/{pod.name} {pod.status} ({pod.ready} ready, {pod.restarts} restarts)"]
        evidence += [f"{e.kind}/{e.name}: {e.message}" for e in events[-2:]]
        state = pod.hard_failure or ""
        if state in ("ImagePullBackOff", "ErrImagePull", "InvalidImageName"):
            return await _bad_image(obs, service, evidence)
        if state.startswith("CreateContainer"):
            return await _config_error(obs, service, evidence, events, baseline)
        return await _crash(obs, service, pod, evidence, baseline)
    text = " ".join(e.message for e in events)
    if "exceeded quota" in text:
        return await _quota(obs, service, text)
    pending = [p for p in pods if p.status == "Pending"]
    if pending:
        return await _unschedulable(obs, service, pending[0], text)
    return await _readiness(obs, service, [p for p in pods if not p.is_ready and p.status == "Running"], events)


async def _bad_image(obs: Observations, service: str, evidence: list[str]) -> Finding:
    dep = await obs.object("deployment", service)
    images = ", ".join(c.get("image", "?") for c in containers(dep))
    plan = undo(service) if revision(dep) > 1 else []
    return Finding(service, "bad-image-tag", f"deployment {service} runs image {images}, which cannot be pulled",
                   evidence + [f"image: {images}"], plan,
                   f"roll {service} back to its previous revision" if plan else f"set {service}'s image to a published tag")


async def _config_error(obs: Observations, service: str, evidence: list[str], events: list[EventRow],
                        baseline: dict[str, Any] | None) -> Finding:
    text = " ".join(e.message for e in events)
    secret = _MISSING_SECRET.search(text)
    if secret:
        return Finding(service, "missing-secret", f"{service} pods cannot start: secret {secret.group(1)} is missing",
                       evidence, [], f"recreate secret {secret.group(1)}")
    key = _MISSING_CM_KEY.search(text)
    if key:
        return await _missing_setting(obs, service, key.group(1), evidence, baseline)
    m = _MISSING_CM.search(text)
    dep = await obs.object("deployment", service)
    missing = m.group(1) if m else next((c for c in referenced_configmaps(dep) if c not in obs.configmaps), None)
    if missing is None:
        return Finding(service, "create-container-config-error", f"{service} pods fail with a container config error",
                       evidence, [], "fix the container configuration")
    manifest = configmap_from_baseline(baseline, missing)
    plan = [("apply", {"manifest": manifest})] if manifest else []
    return Finding(service, "missing-configmap", f"{service} pods cannot start: ConfigMap {missing} does not exist",
                   evidence + [f"configmap/{missing} is referenced by deployment/{service} but absent"], plan,
                   f"recreate ConfigMap {missing}" + (" from the last known-good state" if plan else ""))


def configmap_from_baseline(baseline: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    for cm in (baseline or {}).get("ConfigMap") or []:
        meta = cm.get("metadata") or {}
        if meta.get("name") == name:
            out: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
            if meta.get("labels"):
                out["metadata"]["labels"] = dict(meta["labels"])
            out.update({k: cm[k] for k in ("data", "binaryData") if cm.get(k)})
            return out
    return None


async def _crash(obs: Observations, service: str, pod: PodRow, evidence: list[str],
                 baseline: dict[str, Any] | None) -> Finding:
    described = await obs.describe("pod", pod.name)
    change = await last_change(obs, service)
    if "OOMKilled" in described or pod.status == "OOMKilled":
        return await _oom(obs, service, evidence + ["last state: Terminated, reason OOMKilled"], described, change)
    logs = await obs.logs(pod.name, previous=pod.restarts > 0)
    lines = [line for line in logs.splitlines() if line.strip()]
    evidence = evidence + [f"log: {line}" for line in lines[-2:]]
    setting = _MISSING_SETTING.search(logs)
    if setting:
        return await _missing_setting(obs, service, setting.group(1), evidence, baseline, change)
    dial = _DIAL.search(logs)
    if dial:
        return Finding(service, "dependency-unreachable", f"{service} crashes because it cannot reach "
                       f"{dial.group(1)}:{dial.group(2)}", evidence, [], f"fix what {service} calls", hard=False)
    if change and change.has("livenessProbe"):
        return Finding(service, "liveness-probe-misconfigured", f"{service} is restarted by a liveness probe changed "
                       f"in revision {change.revision}", evidence + [f"last rollout: {change.describe()}"],
                       undo(service), f"roll {service} back to the previous liveness probe")
    if change and change.has("image"):
        return Finding(service, "buggy-release", f"{service} crash-loops since its release "
                       f"({change.describe()})", evidence, undo(service), f"roll {service} back")
    if change and change.has("env", "envFrom", "command", "args", "volumes", "volumeMounts"):
        return Finding(service, "wrong-env-value", f"{service} crash-loops since its configuration changed "
                       f"({change.describe()})", evidence, undo(service), f"roll {service} back")
    return Finding(service, "crash-loop", f"{service} is crash-looping", evidence, [], "inspect the crash")


async def _oom(obs: Observations, service: str, evidence: list[str], described: str, change: Change | None) -> Finding:
    dep = await obs.object("deployment", service)
    if change and change.has("image") and not memory_limit_cut(change):
        return Finding(service, "memory-leak", f"{service} is OOM-killed since its release ({change.describe()}): "
                       "its memory grows past the limit", evidence, undo(service), f"roll {service} back")
    if change and memory_limit_cut(change):
        return Finding(service, "memory-limit-too-low", f"{service} containers are OOM-killed: revision "
                       f"{change.revision} cut the memory limit below the working set", evidence, undo(service),
                       f"roll {service} back to the revision before its memory limit changed")
    limit = _LIMIT.search(described)
    current = memory_bytes(limit.group(1)) if limit else None
    bigger = f"{max(256, int((current or 0) / 2**20) * 2)}Mi"
    plan = [("patch", {"kind": "deployment", "name": service, "patch": {"spec": {"template": {"spec": {
        "containers": [{"name": c.get("name"), "resources": {"limits": {"memory": bigger}}}
                       for c in containers(dep)[:1]]}}}}})] if containers(dep) else []
    return Finding(service, "memory-limit-too-low", f"{service} containers are OOM-killed: the memory limit"
                   + (f" ({limit.group(1)})" if limit else "") + " is below the working set",
                   evidence, plan, f"raise {service}'s memory limit to {bigger}")


async def _missing_setting(obs: Observations, service: str, name: str, evidence: list[str],
                           baseline: dict[str, Any] | None, change: Change | None = None) -> Finding:
    dep = await obs.object("deployment", service)
    for drift in await config_drift(obs, referenced_configmaps(dep), baseline):
        if name in drift.missing:
            return Finding(service, "missing-configmap-key", f"{service} needs setting {name}, which ConfigMap "
                           f"{drift.configmap} no longer has", evidence + [f"configmap/{drift.configmap} lacks {name}"],
                           [("patch", {"kind": "configmap", "name": drift.configmap, "patch_type": "merge",
                                       "patch": {"data": {name: drift.missing[name]}}}), restart(service)],
                           f"restore {name} in ConfigMap {drift.configmap} and restart {service}")
    change = change or await last_change(obs, service)
    plan = undo(service) if change and change.has("image", "env", "envFrom") else []
    return Finding(service, "missing-env-var", f"{service} exits at start-up: required setting {name} is missing",
                   evidence + ([f"last rollout: {change.describe()}"] if change else []), plan,
                   f"restore {name}" + (f" (roll {service} back)" if plan else ""))


async def _quota(obs: Observations, service: str, text: str) -> Finding:
    change = await last_change(obs, service)
    quota = re.search(r"exceeded quota: ([\w.-]+)", text)
    evidence = [f"FailedCreate: exceeded quota {quota.group(1) if quota else ''}".strip()]
    if change and requests_grew(change):
        return Finding(service, "resource-quota-exceeded", f"{service}'s new revision requests more than the "
                       "namespace quota leaves", evidence + [f"last rollout: {change.describe()}"], undo(service),
                       f"roll {service} back to its previous requests")
    if obs.bare_pods:
        stray = obs.bare_pods[0]
        return Finding(stray, "resource-quota-exceeded", f"pod {stray}, which no workload owns, uses the quota "
                       f"{service} needs", evidence + [f"unowned pod: {stray}"],
                       [("delete", {"kind": "pod", "name": stray})], f"delete the leftover pod {stray}")
    return Finding(service, "resource-quota-exceeded", f"{service} cannot create pods: quota exceeded", evidence, [],
                   "raise the quota or lower the requests")


async def _unschedulable(obs: Observations, service: str, pod: PodRow, text: str) -> Finding:
    change = await last_change(obs, service)
    evidence = [f"pod/{pod.name} Pending", text[:300]]
    if "affinity" in text or "selector" in text:
        plan = undo(service) if change and change.has("nodeSelector", "affinity") else []
        return Finding(service, "node-selector-mismatch", f"{service} pods match no node (node selector/affinity)",
                       evidence, plan, f"roll {service} back to a schedulable node selector")
    plan = undo(service) if change and change.has("resources") else []
    return Finding(service, "insufficient-node-resources", f"{service} pods cannot be scheduled", evidence, plan,
                   "lower the resource requests or add capacity")


async def _readiness(obs: Observations, service: str, unready: list[PodRow], events: list[EventRow]) -> Finding | None:
    """Unready pods whose own probe fails (not the 503 of a service waiting on its dependencies)."""
    names = {p.name for p in unready}
    own = [m.group(1) for e in events if e.name in names and (m := _READINESS.search(e.message))
           and "503" not in m.group(1)]
    if not own:
        return None
    change = await last_change(obs, service)
    evidence = [f"pod/{unready[0].name} not ready: {own[-1]}"]
    if change and change.has("readinessProbe"):
        return Finding(service, "readiness-probe-misconfigured", f"{service}'s new readiness probe fails ({own[-1]})",
                       evidence + [f"last rollout: {change.describe()}"], undo(service),
                       f"roll {service} back to the previous readiness probe")
    if change and change.has("image"):
        return Finding(service, "buggy-release", f"{service}'s new release fails its readiness probe ({own[-1]})",
                       evidence + [f"last rollout: {change.describe()}"], undo(service), f"roll {service} back")
    return Finding(service, "readiness-probe-failure", f"{service} fails its readiness probe ({own[-1]})", evidence,
                   [], "fix the readiness probe")


async def suspect_release(obs: Observations, service: str, alert_name: str) -> Finding | None:
    """A healthy-looking alerting service whose last rollout changed its code or settings: with errors in
    its logs, or an alert about its behaviour (not a Kubernetes-state alert), the rollout is suspect."""
    pods = obs.pods_of(service)
    change = await last_change(obs, service)
    if not pods or not change or not change.has("image", "env", "envFrom", "args", "command"):
        return None
    logs = await obs.logs(pods[0].name)
    errors = [line for line in logs.splitlines() if re.search(r"\s5\d\d\s|panic|exception|error", line, re.I)]
    if not errors and alert_name.startswith("Kube"):
        return None
    label = "buggy-release" if change.has("image") else "wrong-env-value"
    what = f"answers errors ({errors[-1].strip()})" if errors else f"misbehaves ({alert_name})"
    return Finding(service, label, f"{service} {what} since its last rollout ({change.describe()})",
                   ([f"log: {errors[-1]}"] if errors else []) + [f"last rollout: {change.describe()}"],
                   undo(service), f"roll {service} back")
