"""What the heuristic agent reads through the gateway, parsed from the tools' kubectl-style text.

The agent sees exactly what any agent sees (tables, YAML, event lines, logs), so parsing is by
column positions of kubectl's headers, like a human scanning ``kubectl get`` output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from ...gateway import ToolGateway

HARD_STATES = ("ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CreateContainerConfigError",
               "CreateContainerError", "OOMKilled", "CrashLoopBackOff", "Error", "RunContainerError")
_EVENT_SUBJECT = re.compile(r"^(?P<kind>[A-Za-z]+)/(?P<name>[^:\s]+):\s*(?P<message>.*)$")
_WORD = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?")


def parse_table(text: str) -> list[dict[str, str]]:
    """A kubectl table → rows keyed by header, sliced at the header's column starts."""
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("[... truncated")]
    header_at = next((i for i, line in enumerate(lines) if line.lstrip().startswith(("NAME", "Type "))), None)
    if header_at is None:
        return []
    header = lines[header_at]
    starts = [len(header) - len(header.lstrip())] + [m.start() for m in re.finditer(r"(?<=\s{2})\S", header)]
    starts = sorted(set(starts))
    names = [header[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]
    rows = []
    for line in lines[header_at + 1:]:
        if set(line.strip()) <= {"-", " "}:
            continue
        cells = [line[a:b].strip() if a < len(line) else "" for a, b in zip(starts, starts[1:] + [None])]
        rows.append(dict(zip(names, cells)))
    return rows


@dataclass(frozen=True)
class PodRow:
    name: str
    ready: str
    status: str
    restarts: int
    owner: str | None  # deployment name, by kubectl's pod naming (<deployment>-<hash>-<suffix>)

    @property
    def is_ready(self) -> bool:
        have, _, want = self.ready.partition("/")
        return have == want and have not in ("", "0")

    @property
    def hard_failure(self) -> str | None:
        return next((s for s in HARD_STATES if s == self.status or self.status.startswith(s)), None)


@dataclass(frozen=True)
class EventRow:
    type: str
    reason: str
    kind: str
    name: str
    message: str


def owner_of(pod: str, deployments: list[str]) -> str | None:
    matches = [d for d in deployments if pod.startswith(d + "-")]
    return max(matches, key=len) if matches else None


def parse_restarts(text: str) -> int:
    m = re.match(r"\d+", text or "")
    return int(m.group()) if m else 0


def parse_events(text: str) -> list[EventRow]:
    out = []
    for row in parse_table(text.replace("Events:\n", "", 1)):
        m = _EVENT_SUBJECT.match(row.get("Message", ""))
        if m:
            out.append(EventRow(row.get("Type", ""), row.get("Reason", ""), m["kind"], m["name"], m["message"]))
    return out


def load_yaml(text: str) -> dict[str, Any] | None:
    try:
        doc = yaml.safe_load(text.split("\n[... truncated")[0])
    except yaml.YAMLError:
        return None
    return doc if isinstance(doc, dict) else None


def words(text: str) -> set[str]:
    return set(_WORD.findall((text or "").lower()))


def parse_age(text: str) -> float:
    """kubectl's AGE ("45s", "9m48s", "3h", "2d") in seconds; unknown → infinity (oldest)."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "y": 31536000}
    parts = re.findall(r"(\d+)([smhdy])", text or "")
    return float(sum(int(n) * units[u] for n, u in parts)) if parts else float("inf")


def parse_ports(text: str) -> set[int]:
    """A Service table's PORT(S) ("80:30080/TCP,443/TCP") → the service ports."""
    return {int(m) for m in re.findall(r"(?:^|,)(\d+)(?=[:/])", text or "")}


@dataclass
class Observations:
    """Everything read so far; each read is one gateway step, made at most once."""

    tools: ToolGateway
    pods: list[PodRow] = field(default_factory=list)
    deployments: dict[str, dict[str, str]] = field(default_factory=dict)  # name → table row
    services: list[str] = field(default_factory=list)
    service_ports: dict[str, set[int]] = field(default_factory=dict)
    bare_pods: list[str] = field(default_factory=list)  # pods no deployment owns (debug pods, one-offs)
    tables: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    configmaps: list[str] = field(default_factory=list)
    warnings: list[EventRow] = field(default_factory=list)
    objects: dict[tuple[str, str], dict[str, Any] | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    async def overview(self) -> None:
        """Deployments, services, pods (one call: kind=all), configmaps, warning events."""
        text = (await self.tools.call("get_resources", {"kind": "all"})).output
        sections = {m.group(1): m.group(2) for m in re.finditer(r"# (\S+)\n(.*?)(?=\n# |\Z)", text, re.S)}
        self.deployments = {r["NAME"]: r for r in parse_table(sections.get("deployments.apps", ""))}
        services = parse_table(sections.get("services", ""))
        self.services = [r["NAME"] for r in services]
        self.service_ports = {r["NAME"]: parse_ports(r.get("PORT(S)", "")) for r in services}
        self.pods = [PodRow(r["NAME"], r.get("READY", ""), r.get("STATUS", ""), parse_restarts(r.get("RESTARTS", "")),
                            owner_of(r["NAME"], list(self.deployments))) for r in parse_table(sections.get("pods", ""))]
        self.tables["replicasets"] = parse_table(sections.get("replicasets.apps", ""))
        rs_names = [r["NAME"] for r in self.tables["replicasets"]]
        self.bare_pods = [p.name for p in self.pods if p.owner is None and owner_of(p.name, rs_names) is None]
        cms = await self.tools.call("get_resources", {"kind": "configmaps"})
        self.configmaps = [r["NAME"] for r in parse_table(cms.output)] if cms.ok else []
        events = await self.tools.call("get_events", {"type": "Warning"})
        self.warnings = parse_events(events.output) if events.ok else []

    async def object(self, kind: str, name: str) -> dict[str, Any] | None:
        key = (kind, name)
        if key not in self.objects:
            result = await self.tools.call("get_resources", {"kind": kind, "name": name})
            self.objects[key] = load_yaml(result.output) if result.ok else None
        return self.objects[key]

    async def table(self, kind: str) -> list[dict[str, str]]:
        """A kind's table (e.g. endpoints, replicasets), read once."""
        if kind not in self.tables:
            result = await self.tools.call("get_resources", {"kind": kind})
            self.tables[kind] = parse_table(result.output) if result.ok else []
        return self.tables[kind]

    def pods_of(self, deployment: str) -> list[PodRow]:
        return [p for p in self.pods if p.owner == deployment]

    def events_about(self, deployment: str) -> list[EventRow]:
        names = {p.name for p in self.pods_of(deployment)}
        return [e for e in self.warnings if e.name in names or e.name == deployment
                or e.name.startswith(deployment + "-")]

    async def logs(self, pod: str, previous: bool = False, tail: int = 40) -> str:
        result = await self.tools.call("get_logs", {"pod": pod, "previous": previous, "tail": tail})
        return result.output if result.ok else ""

    async def describe(self, kind: str, name: str) -> str:
        result = await self.tools.call("describe", {"kind": kind, "name": name})
        return result.output if result.ok else ""
