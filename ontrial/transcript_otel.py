"""The transcript's steps as OpenTelemetry spans (GenAI semantic conventions).

Built from the same records the JSONL transcript holds, so both views agree: one
``invoke_agent <agent>`` span for the session; a ``chat <model>`` child per model call (a
``usage`` record: it spans from the previous record to the usage report); an ``execute_tool
<tool>`` child per tool call (``tool.call`` → its ``tool.result``; failures and blocked calls get
an ERROR status); messages, budget exhaustion and agent errors as events on the session span.
Spans go to the global tracer provider (nested under the current span, e.g. the Temporal
activity's) unless a tracer is passed.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode, Tracer

MAX_ATTRIBUTE = 4096


def _ns(record: dict[str, Any]) -> int | None:
    try:
        return int(datetime.fromisoformat(str(record["time"]).replace("Z", "+00:00")).timestamp() * 1e9)
    except (KeyError, ValueError):
        return None


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str, sort_keys=True)
    return text if len(text) <= MAX_ATTRIBUTE else text[:MAX_ATTRIBUTE] + "...[truncated]"


def _attrs(pairs: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs.items():
        if value is None:
            continue
        out[key] = value if isinstance(value, (bool, int, float)) else _text(value)
    return out


def export_transcript_spans(records: list[dict[str, Any]], tracer: Tracer | None = None) -> int:
    """Emit the spans of one transcript; returns how many spans were started."""
    if not records:
        return 0
    tracer = tracer or trace.get_tracer("ontrial.transcript")
    start = next((r for r in records if r.get("type") == "session.start"), records[0])
    end = next((r for r in reversed(records) if r.get("type") == "session.end"), records[-1])
    agent = start.get("gen_ai.agent.name") or "agent"
    model = start.get("gen_ai.request.model")
    usage = end.get("usage") or {}
    root = tracer.start_span(f"invoke_agent {agent}", start_time=_ns(start), attributes=_attrs({
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent, "gen_ai.request.model": model,
        "ontrial.trial": start.get("trial"), "ontrial.status": end.get("status"),
        "ontrial.usage.steps": usage.get("steps"), "ontrial.usage.tokens": usage.get("tokens"),
        "ontrial.usage.cost_usd": usage.get("cost_usd")}))
    ctx = trace.set_span_in_context(root)
    count, previous, calls = 1, start, {}
    for record in records:
        kind = record.get("type")
        if kind == "usage":
            name = record.get("gen_ai.request.model") or model or "model"
            span = tracer.start_span(f"chat {name}", context=ctx, start_time=_ns(previous), attributes=_attrs({
                "gen_ai.operation.name": "chat", "gen_ai.request.model": name,
                "gen_ai.usage.input_tokens": record.get("gen_ai.usage.input_tokens"),
                "gen_ai.usage.output_tokens": record.get("gen_ai.usage.output_tokens"),
                "ontrial.cost_usd": record.get("cost_usd")}))
            span.end(end_time=_ns(record))
            count += 1
        elif kind == "tool.call":
            calls[record.get("gen_ai.tool.call.id")] = record
        elif kind == "tool.result":
            call = calls.pop(record.get("gen_ai.tool.call.id"), None) or record
            span = tracer.start_span(f"execute_tool {record.get('gen_ai.tool.name')}", context=ctx,
                                     start_time=_ns(call), attributes=_attrs({
                                         "gen_ai.operation.name": "execute_tool",
                                         "gen_ai.tool.name": record.get("gen_ai.tool.name"),
                                         "gen_ai.tool.call.id": record.get("gen_ai.tool.call.id"),
                                         "gen_ai.tool.call.arguments": call.get("gen_ai.tool.call.arguments"),
                                         "gen_ai.tool.call.result": record.get("gen_ai.tool.call.result"),
                                         "ontrial.tool.blocked": record.get("blocked"),
                                         "ontrial.tool.violation": record.get("violation")}))
            if not record.get("ok"):
                span.set_status(Status(StatusCode.ERROR, "blocked" if record.get("blocked") else "tool error"))
            span.end(end_time=_ns(record))
            count += 1
        elif kind == "message":
            root.add_event(f"gen_ai.{record.get('role', 'unknown')}.message", timestamp=_ns(record),
                           attributes=_attrs({"gen_ai.message.parts": record.get("parts")}))
        elif kind in ("budget.exhausted", "agent.error"):
            root.add_event(f"ontrial.{kind}", timestamp=_ns(record),
                           attributes=_attrs({k: v for k, v in record.items() if k not in ("schema", "trial", "seq")}))
        previous = record
    if end.get("status") not in (None, "completed"):
        root.set_status(Status(StatusCode.ERROR, str(end.get("status"))))
    root.end(end_time=_ns(end))
    return count
