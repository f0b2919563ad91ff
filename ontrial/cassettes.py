"""Cassettes: every tool response of a trial, recorded, so the trial's agent can be replayed offline.

A cassette is a JSONL artifact: a header line, then one line per tool call (tool, args, result).
``RecordingGateway`` wraps a live ``ToolGateway`` and writes each call as it returns;
``Cassette.from_transcript`` rebuilds one from a trial's transcript (which mirrors every call),
so any finished trial can be replayed. ``ReplayGateway`` answers an agent from a cassette with no
cluster at all: a call that was recorded gets the recorded result; one that was not gets an
explicit "no recording" result and becomes a finding — never an exception — so a replay of a
changed agent shows exactly where it diverged.

Arguments match after canonicalisation (key order; naming the recorded trial's own namespace
equals naming none), so an agent that names its namespace explicitly replays too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .gateway import Budget, ToolResult
from .gateway.tools import ALL_TOOLS, tool_definitions

VERSION = 1
ARTIFACT_NAME = "cassette.jsonl"
NAMESPACE_PLACEHOLDER = "<trial-namespace>"


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def canonical_args(args: Mapping[str, Any] | None, namespace: str | None) -> str:
    """A stable text for matching calls: sorted keys; naming the trial's own namespace is the same
    call as naming none (the gateway's default), another namespace stays as given."""
    clean = dict(_jsonable(dict(args or {})))
    if clean.get("namespace") in (namespace, NAMESPACE_PLACEHOLDER, None, ""):
        clean.pop("namespace", None)
    return json.dumps(clean, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Interaction:
    """One recorded tool call and the result the agent got."""

    seq: int
    tool: str
    args: dict[str, Any]
    ok: bool
    output: str
    blocked: bool = False
    violation: str | None = None

    @property
    def result(self) -> ToolResult:
        return ToolResult(self.ok, self.output, self.blocked, self.violation)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "interaction", "seq": self.seq, "tool": self.tool, "args": self.args, "ok": self.ok,
                "output": self.output, "blocked": self.blocked, "violation": self.violation}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Interaction:
        return cls(int(d["seq"]), str(d["tool"]), dict(d.get("args") or {}), bool(d["ok"]), str(d.get("output", "")),
                   bool(d.get("blocked", False)), d.get("violation"))


class CassetteError(ValueError):
    """A cassette file that cannot be read (not JSONL, wrong version, missing fields)."""


@dataclass
class Cassette:
    namespace: str | None = None  # the recorded trial's namespace (matched as a placeholder)
    meta: dict[str, Any] = field(default_factory=dict)
    interactions: list[Interaction] = field(default_factory=list)

    def header(self) -> dict[str, Any]:
        return {"kind": "cassette", "version": VERSION, "namespace": self.namespace, "meta": self.meta}

    def add(self, tool: str, args: Mapping[str, Any] | None, result: ToolResult) -> Interaction:
        item = Interaction(len(self.interactions) + 1, tool, _jsonable(dict(args or {})), result.ok, result.output,
                           result.blocked, result.violation)
        self.interactions.append(item)
        return item

    def dumps(self) -> str:
        lines = [self.header(), *(i.to_dict() for i in self.interactions)]
        return "".join(json.dumps(line, sort_keys=True) + "\n" for line in lines)

    @classmethod
    def loads(cls, text: str) -> Cassette:
        records = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except ValueError as e:
                raise CassetteError(f"line {number}: not JSON: {e}") from None
        if not records or records[0].get("kind") != "cassette":
            raise CassetteError("line 1: not a cassette header")
        if records[0].get("version") != VERSION:
            raise CassetteError(f"line 1: unsupported cassette version {records[0].get('version')!r}")
        cassette = cls(records[0].get("namespace"), dict(records[0].get("meta") or {}))
        for number, record in enumerate(records[1:], start=2):
            try:
                cassette.interactions.append(Interaction.from_dict(record))
            except (KeyError, TypeError, ValueError) as e:
                raise CassetteError(f"line {number}: not an interaction: {e}") from None
        return cassette

    def save(self, path: str | Path) -> Path:
        target = Path(path)
        target.write_text(self.dumps(), encoding="utf-8")
        return target

    @classmethod
    def load(cls, path: str | Path) -> Cassette:
        return cls.loads(Path(path).read_text(encoding="utf-8"))

    @classmethod
    def from_transcript(cls, events: Iterable[Mapping[str, Any]], namespace: str | None = None,
                        meta: Mapping[str, Any] | None = None) -> Cassette:
        """Rebuild the cassette of a finished trial from its transcript events (``tool.call`` +
        ``tool.result`` pairs, joined by call id; the alert of ``session.start`` goes in ``meta``)."""
        cassette = cls(namespace, dict(meta or {}))
        calls: dict[str, tuple[str, dict[str, Any]]] = {}
        for event in events:
            kind = event.get("type") or event.get("event") or event.get("name")
            call_id = event.get("gen_ai.tool.call.id")
            if kind == "session.start" and event.get("alert") is not None:
                cassette.meta.setdefault("alert", event["alert"])  # what the agent was handed
            elif kind == "tool.call" and call_id is not None:
                args = dict(event.get("gen_ai.tool.call.arguments") or {})
                calls[call_id] = (event.get("gen_ai.tool.name", ""), args)
            elif kind == "tool.result" and call_id in calls:
                tool, args = calls.pop(call_id)
                output = str(event.get("gen_ai.tool.call.result", ""))
                cassette.add(tool, args, ToolResult(bool(event.get("ok")), output, bool(event.get("blocked", False)),
                                                    event.get("violation")))
        return cassette


# -- recording ----------------------------------------------------------------------------------------

class RecordingGateway:
    """A ToolGateway that also records: each call goes to the real gateway, then (tool, args, result)
    is appended to ``cassette`` and, when given, written to ``sink`` (a JSONL artifact appender).
    Everything else (budget, definitions, namespace, ...) is the wrapped gateway's."""

    def __init__(self, gateway: Any, cassette: Cassette | None = None, sink: Any = None):
        self._gateway = gateway
        self.cassette = cassette or Cassette(getattr(gateway, "namespace", None))
        self._sink = sink
        if sink is not None:
            sink.write(self.cassette.header())

    async def call(self, tool: str, args: dict[str, Any] | None = None) -> ToolResult:
        result = await self._gateway.call(tool, args)
        item = self.cassette.add(tool, args, result)
        if self._sink is not None:
            self._sink.write(item.to_dict())
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._gateway, name)


# -- replay -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ReplayFinding:
    """Where a replayed agent left the recording: ``no-recording`` (a call never made in the recorded
    trial), ``out-of-order`` (made, but earlier recorded calls were skipped) or ``repeat`` (made more
    often than recorded; answered with the last recorded result)."""

    seq: int
    tool: str
    args: dict[str, Any]
    kind: str
    message: str

    def __str__(self) -> str:
        return f"call {self.seq}: {self.kind}: {self.message}"


class ReplayGateway:
    """Gateway-compatible stand-in that answers from a cassette (no cluster, no side effects)."""

    def __init__(self, cassette: Cassette, *, budget: Budget | None = None, allow_repeats: bool = True):
        self.cassette = cassette
        self.namespace = cassette.namespace or ""
        self.budget = budget or Budget()
        self.allow_repeats = allow_repeats
        self.findings: list[ReplayFinding] = []
        self.calls = 0
        self._used: set[int] = set()
        self._keys = [(i.tool, canonical_args(i.args, cassette.namespace)) for i in cassette.interactions]

    # the parts of ToolGateway agents use besides call()
    def tool_names(self) -> list[str]:
        """Every tool: an agent may call what the recorded one did not (and gets "no recording")."""
        return list(ALL_TOOLS)

    def definitions(self) -> list[dict[str, Any]]:
        return tool_definitions(self.tool_names())

    def report_usage(self, input_tokens: int = 0, output_tokens: int = 0, cost_usd: float = 0.0,
                     model: str | None = None) -> None:
        self.budget.add_tokens(input_tokens, output_tokens, cost_usd)

    async def call(self, tool: str, args: dict[str, Any] | None = None) -> ToolResult:
        self.budget.charge_step()
        self.calls += 1
        key = (tool, canonical_args(args, self.cassette.namespace))
        shown = _jsonable(dict(args or {}))
        matches = [n for n, k in enumerate(self._keys) if k == key]
        fresh = [n for n in matches if n not in self._used]
        if fresh:
            index = fresh[0]
            skipped = [n for n in range(index) if n not in self._used]
            if skipped:
                self.findings.append(ReplayFinding(self.calls, tool, shown, "out-of-order",
                                                   f"{tool} was recorded as call {index + 1}; {len(skipped)} earlier "
                                                   f"recorded call(s) not made yet"))
            self._used.add(index)
            return self.cassette.interactions[index].result
        if matches and self.allow_repeats:
            self.findings.append(ReplayFinding(self.calls, tool, shown, "repeat",
                                               f"{tool} made more often than recorded; the last recorded result "
                                               "is returned"))
            return self.cassette.interactions[matches[-1]].result
        message = f"no recording: {tool} {canonical_args(args, self.cassette.namespace)} was not made in the " \
                  "recorded trial"
        self.findings.append(ReplayFinding(self.calls, tool, shown, "no-recording", message))
        return ToolResult(False, message)

    def unused(self) -> list[Interaction]:
        """Recorded calls the replayed agent never made."""
        return [i for n, i in enumerate(self.cassette.interactions) if n not in self._used]

    @property
    def faithful(self) -> bool:
        """The replay made exactly the recorded calls, in order."""
        return not self.findings and not self.unused()


@dataclass(frozen=True)
class ReplayReport:
    """An agent replayed against a cassette: its answer, where it left the recording, what it skipped."""

    output: Any  # the agent's AgentOutput
    findings: tuple[ReplayFinding, ...]
    unused: tuple[Interaction, ...]

    @property
    def faithful(self) -> bool:
        return not self.findings and not self.unused


async def replay_trial(agent: Any, cassette: Cassette, *, alert: dict[str, Any] | None = None, budgets: Any = None,
                       ctx: Any = None) -> ReplayReport:
    """Run ``agent`` (an ``ontrial.agents.Agent``) against the recording instead of a cluster.

    ``alert`` defaults to the one the recorded agent was handed; ``budgets`` (agents.Budgets) bound
    the replayed steps; ``ctx`` (a TrialContext) is passed to ``setup`` when the agent needs one."""
    from .agents.protocol import Budgets

    budgets = budgets or Budgets()
    gateway = ReplayGateway(cassette, budget=Budget(steps=budgets.steps, tokens=budgets.tokens))
    if ctx is not None:
        await agent.setup(ctx)
    try:
        output = await agent.invoke(alert if alert is not None else dict(cassette.meta.get("alert") or {}),
                                    gateway, budgets)
    finally:
        if ctx is not None:
            await agent.teardown()
    return ReplayReport(output, tuple(gateway.findings), tuple(gateway.unused()))


# -- artifacts ----------------------------------------------------------------------------------------

def store_cassette(store: Any, trial_id: str, cassette: Cassette) -> str:
    """Write ``cassette`` as the trial's cassette artifact; returns its ref."""
    return store.put(trial_id, ARTIFACT_NAME, cassette.dumps())


def cassette_from_trial(store: Any, transcript_ref: str, namespace: str | None = None,
                        meta: Mapping[str, Any] | None = None) -> Cassette:
    """The cassette of a finished trial, rebuilt from its transcript artifact."""
    from .artifacts import read_jsonl

    return Cassette.from_transcript(read_jsonl(store, transcript_ref), namespace, meta)


def load_cassette(store: Any, ref: str) -> Cassette:
    return Cassette.loads(store.get(ref).decode("utf-8"))
