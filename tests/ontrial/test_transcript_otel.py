"""The transcript's steps as OpenTelemetry spans (GenAI conventions), via an in-memory exporter."""

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from ontrial.gateway import ToolResult
from ontrial.transcript import Transcript
from ontrial.transcript_otel import export_transcript_spans


def test_spans_mirror_the_transcript() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    t = Transcript("suite/task/0", None)
    t.start("openai", "gpt-x", {"name": "Alert"}, {"steps": 5})
    t.message("user", "investigate")
    t.usage(100, 20, model="gpt-x")
    t.tool_call("call-1", "get_resources", {"kind": "pods"})
    t.tool_result("call-1", "get_resources", ToolResult(True, "NAME READY"))
    t.tool_call("call-2", "delete", {"kind": "deployment", "name": "web"})
    t.tool_result("call-2", "delete", ToolResult(False, "blocked by policy: ...", True, "forbidden: delete"))
    t.event("budget.exhausted", kind="steps", message="steps budget exhausted")
    t.end("budget_exhausted", None, {"steps": 2, "tokens": 120, "wall_seconds": 1.0, "cost_usd": 0.0})
    assert export_transcript_spans(t.records, provider.get_tracer("test")) == 4

    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert set(spans) == {"invoke_agent openai", "chat gpt-x", "execute_tool get_resources", "execute_tool delete"}
    root = spans["invoke_agent openai"]
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent" and root.attributes["ontrial.usage.tokens"] == 120
    assert root.status.status_code is StatusCode.ERROR
    assert [e.name for e in root.events] == ["gen_ai.user.message", "ontrial.budget.exhausted"]
    chat = spans["chat gpt-x"]
    assert chat.parent.span_id == root.context.span_id
    assert (chat.attributes["gen_ai.usage.input_tokens"], chat.attributes["gen_ai.usage.output_tokens"]) == (100, 20)
    tool = spans["execute_tool get_resources"]
    assert tool.attributes["gen_ai.tool.call.id"] == "call-1" and tool.attributes["gen_ai.tool.call.arguments"] == \
        '{"kind": "pods"}'
    assert tool.status.status_code is StatusCode.UNSET
    blocked = spans["execute_tool delete"]
    assert blocked.status.status_code is StatusCode.ERROR and blocked.attributes["ontrial.tool.blocked"] is True
    assert root.start_time <= tool.start_time <= tool.end_time <= root.end_time
