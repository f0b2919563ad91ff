"""What changed: the last rollout of a deployment (its previous ReplicaSet's template against the
current one), and ConfigMaps against the last known-good state — the first question an SRE asks."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .observe import Observations, owner_of, parse_age

CONTAINER_FIELDS = ("image", "resources", "env", "envFrom", "livenessProbe", "readinessProbe", "startupProbe",
                    "command", "args", "ports", "volumeMounts")
POD_FIELDS = ("nodeSelector", "affinity", "tolerations", "volumes")
RESTART_ANNOTATION = "kubectl.kubernetes.io/restartedAt"
MAX_RS_READS = 3


def revision(obj: dict[str, Any] | None) -> int:
    try:
        return int(((obj or {}).get("metadata") or {}).get("annotations", {}).get(
            "deployment.kubernetes.io/revision", "1"))
    except (TypeError, ValueError):
        return 1


def pod_spec(obj: dict[str, Any] | None) -> dict[str, Any]:
    return (((obj or {}).get("spec") or {}).get("template") or {}).get("spec") or {}


def containers(obj: dict[str, Any] | None) -> list[dict[str, Any]]:
    return pod_spec(obj).get("containers") or []


@dataclass(frozen=True)
class Change:
    """Fields that differ between the previous revision and the current one: name → (before, after)."""

    revision: int
    fields: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    def has(self, *names: str) -> bool:
        return any(n in self.fields for n in names)

    def describe(self) -> str:
        parts = []
        for name, (before, after) in self.fields.items():
            if name == "image":
                parts.append(f"image {before} → {after}")
            elif name == "restart":
                parts.append("a restart")
            else:
                parts.append(f"{name} changed")
        return ", ".join(parts) or "no template change"


def diff_templates(before: dict[str, Any] | None, after: dict[str, Any] | None) -> dict[str, tuple[Any, Any]]:
    out: dict[str, tuple[Any, Any]] = {}
    old = {c.get("name"): c for c in containers(before)}
    for c in containers(after):
        prev = old.get(c.get("name")) or {}
        for name in CONTAINER_FIELDS:
            if c.get(name) != prev.get(name):
                out.setdefault(name, (prev.get(name), c.get(name)))
    for name in POD_FIELDS:
        if pod_spec(after).get(name) != pod_spec(before).get(name):
            out[name] = (pod_spec(before).get(name), pod_spec(after).get(name))
    ann = lambda o: (((o or {}).get("spec") or {}).get("template") or {}).get("metadata", {}).get(  # noqa: E731
        "annotations") or {}
    if ann(after).get(RESTART_ANNOTATION) != ann(before).get(RESTART_ANNOTATION):
        out["restart"] = (ann(before).get(RESTART_ANNOTATION), ann(after).get(RESTART_ANNOTATION))
    return out


async def last_change(obs: Observations, service: str) -> Change | None:
    """The deployment's last rollout, from its previous ReplicaSet (None on revision 1)."""
    key = ("change", service)
    if key in obs.objects:
        return obs.objects[key]  # type: ignore[return-value]
    dep = await obs.object("deployment", service)
    rev = revision(dep)
    change = None
    if rev > 1:
        rows = [r for r in await obs.table("replicasets") if owner_of(r["NAME"], list(obs.deployments)) == service]
        rows.sort(key=lambda r: parse_age(r.get("AGE", "")))
        for row in rows[:MAX_RS_READS]:
            rs = await obs.object("replicaset", row["NAME"])
            if revision(rs) == rev - 1:
                change = Change(rev, diff_templates(rs, dep))
                break
    obs.objects[key] = change  # type: ignore[assignment]
    return change


def memory_bytes(value: Any) -> float | None:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "K": 1e3, "M": 1e6, "G": 1e9, "": 1}
    text = str(value or "")
    num = text.rstrip("KMGiB")
    try:
        return float(num) * units[text[len(num):]]
    except (ValueError, KeyError):
        return None


def memory_limit_cut(change: Change) -> bool:
    before, after = change.fields.get("resources", (None, None))
    b = memory_bytes(((before or {}).get("limits") or {}).get("memory"))
    a = memory_bytes(((after or {}).get("limits") or {}).get("memory"))
    return a is not None and (b is None or a < b)


def requests_grew(change: Change) -> bool:
    before, after = change.fields.get("resources", (None, None))
    b = memory_bytes(((before or {}).get("requests") or {}).get("memory")) or 0
    a = memory_bytes(((after or {}).get("requests") or {}).get("memory")) or 0
    return a > b


@dataclass(frozen=True)
class ConfigDrift:
    configmap: str
    missing: dict[str, str]  # key → known-good value, absent now
    changed: dict[str, tuple[str, str]]  # key → (known-good, now)

    def restore_patch(self) -> dict[str, Any]:
        data = {**self.missing, **{k: good for k, (good, _) in self.changed.items()}}
        return {"data": copy.deepcopy(data)}


async def config_drift(obs: Observations, names: list[str], baseline: dict[str, Any] | None) -> list[ConfigDrift]:
    """ConfigMaps (of ``names``) whose data differs from the last known-good state."""
    good = {(cm.get("metadata") or {}).get("name"): cm.get("data") or {}
            for cm in (baseline or {}).get("ConfigMap") or []}
    out = []
    for name in names:
        if name not in good or name not in obs.configmaps:
            continue
        now = ((await obs.object("configmap", name)) or {}).get("data") or {}
        missing = {k: v for k, v in good[name].items() if k not in now}
        changed = {k: (v, now[k]) for k, v in good[name].items() if k in now and now[k] != v}
        if missing or changed:
            out.append(ConfigDrift(name, missing, changed))
    return out
