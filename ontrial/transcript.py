"""The agent transcript: one JSONL schema for every agent kind, written through the artifact store.

Attribute names follow the OpenTelemetry GenAI semantic conventions where they fit, so a
transcript maps onto GenAI spans/events without renaming:

Every line: ``{"schema": "ontrial.transcript/1", "seq": n, "time": RFC3339 (wall, ms),
"trial": trial id, "type": <type>, ...}`` with one of these types:

- ``session.start``: ``gen_ai.agent.name``, ``gen_ai.request.model`` (or null), ``alert`` (the
  payload handed to the agent), ``budgets`` ({steps, tokens, wall_seconds}).
- ``message``: ``gen_ai.operation.name`` = "chat", ``role`` (system | user | assistant | tool),
  ``parts`` (list of ``{"type": "text", "content"}``, ``{"type": "tool_call", "id", "name",
  "arguments"}``, ``{"type": "tool_call_response", "id", "response"}``), optional
  ``gen_ai.request.model`` and ``gen_ai.response.finish_reasons``.
- ``tool.call``: ``gen_ai.operation.name`` = "execute_tool", ``gen_ai.tool.name``,
  ``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments`` (written by the tool gateway).
- ``tool.result``: ``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.call.result``
  (the bounded output the agent saw), ``ok``, ``blocked``, ``violation``.
- ``usage``: ``gen_ai.usage.input_tokens``, ``gen_ai.usage.output_tokens``,
  ``gen_ai.request.model``, ``cost_usd`` — one line per model call the agent reports.
- ``budget.exhausted``: ``kind`` (steps | tokens | wall), ``message``.
- ``agent.error``: ``error.type``, ``message``.
- ``agent.process`` / ``agent.process.exit``: CLI agents only — ``argv`` and ``workdir``; then
  ``returncode`` and the tails of ``stdout``/``stderr``.
- ``session.end``: ``status`` (an AgentRunStatus), ``diagnosis`` (or null), ``usage`` ({steps,
  tokens, wall_seconds, cost_usd}), ``text`` (the agent's free-text answer).

Tool calls the agent makes through the audit proxy (kubectl, its own client) appear as
``tool.call``/``tool.result`` with ``gen_ai.tool.name`` = "kube-api" and call ids "kube-<n>"; the
full request record is in the audit log. ``ontrial.transcript_otel.export_transcript_spans``
turns the same records into OpenTelemetry spans.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from .artifacts import ArtifactStore, JsonlAppender, read_jsonl

if TYPE_CHECKING:
    from .gateway.gateway import ToolResult

SCHEMA = "ontrial.transcript/1"
TRANSCRIPT_NAME = "transcript.jsonl"


def text_parts(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "content": content}] if isinstance(content, str) else list(content)


class Transcript:
    """Appends transcript lines; also the gateway's ToolCallRecorder."""

    def __init__(self, trial_id: str, sink: JsonlAppender | None):
        self.trial_id = trial_id
        self.sink = sink
        self.seq = 0
        self.records: list[dict[str, Any]] = []  # kept for the OpenTelemetry export (ontrial.transcript_otel)

    @classmethod
    def open(cls, store: ArtifactStore, trial_id: str, name: str = TRANSCRIPT_NAME) -> "Transcript":
        return cls(trial_id, store.open_append(trial_id, name))

    @property
    def ref(self) -> str | None:
        return self.sink.ref if self.sink is not None else None

    def event(self, type_: str, **attrs: Any) -> dict[str, Any]:
        self.seq += 1
        record = {"schema": SCHEMA, "seq": self.seq,
                  "time": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
                  "trial": self.trial_id, "type": type_, **attrs}
        self.records.append(record)
        if self.sink is not None:
            self.sink.write(record)
        return record

    def start(self, agent: str, model: str | None, alert: dict[str, Any] | None, budgets: dict[str, Any]) -> None:
        self.event("session.start", **{"gen_ai.agent.name": agent, "gen_ai.request.model": model,
                                       "alert": alert, "budgets": budgets})

    def message(self, role: str, content: str | list[dict[str, Any]], *, model: str | None = None,
                finish_reasons: list[str] | None = None) -> None:
        attrs: dict[str, Any] = {"gen_ai.operation.name": "chat", "role": role, "parts": text_parts(content)}
        if model:
            attrs["gen_ai.request.model"] = model
        if finish_reasons:
            attrs["gen_ai.response.finish_reasons"] = finish_reasons
        self.event("message", **attrs)

    def tool_call(self, call_id: str, tool: str, args: dict[str, Any]) -> None:
        self.event("tool.call", **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
                                   "gen_ai.tool.call.id": call_id, "gen_ai.tool.call.arguments": args})

    def tool_result(self, call_id: str, tool: str, result: "ToolResult") -> None:
        self.event("tool.result", **{"gen_ai.tool.name": tool, "gen_ai.tool.call.id": call_id,
                                     "gen_ai.tool.call.result": result.output, "ok": result.ok,
                                     "blocked": result.blocked, "violation": result.violation})

    def usage(self, input_tokens: int, output_tokens: int, *, model: str | None = None,
              cost_usd: float = 0.0) -> None:
        self.event("usage", **{"gen_ai.usage.input_tokens": input_tokens,
                               "gen_ai.usage.output_tokens": output_tokens,
                               "gen_ai.request.model": model, "cost_usd": cost_usd})

    def end(self, status: str, diagnosis: dict[str, Any] | None, usage: dict[str, Any], text: str = "") -> None:
        self.event("session.end", status=status, diagnosis=diagnosis, usage=usage, text=text)

    def close(self) -> None:
        if self.sink is not None:
            self.sink.close()


def read_transcript(store: ArtifactStore, ref: str) -> list[dict[str, Any]]:
    return read_jsonl(store, ref)
