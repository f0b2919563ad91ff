"""The transcript schema: OpenTelemetry GenAI attribute names, one JSON object per line."""

from pathlib import Path

from ontrial.artifacts import LocalArtifactStore
from ontrial.gateway import ToolResult
from ontrial.transcript import SCHEMA, Transcript, read_transcript


def test_transcript_lines(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    tr = Transcript.open(store, "s/t/0")
    tr.start("reference", None, {"name": "HighErrorRate"}, {"steps": 30, "tokens": 10, "wall_seconds": 5})
    tr.message("assistant", "looking at pods", model="m1")
    tr.tool_call("call-1", "get_resources", {"kind": "pods"})
    tr.tool_result("call-1", "get_resources", ToolResult(True, "NAME  READY"))
    tr.usage(120, 30, model="m1")
    tr.end("completed", {"root_cause": ["oom"]}, {"steps": 1}, "done")
    tr.close()
    rows = read_transcript(store, tr.ref)
    assert [r["type"] for r in rows] == ["session.start", "message", "tool.call", "tool.result", "usage",
                                         "session.end"]
    assert all(r["schema"] == SCHEMA and r["trial"] == "s/t/0" for r in rows)
    assert [r["seq"] for r in rows] == list(range(1, 7))
    assert rows[1]["parts"] == [{"type": "text", "content": "looking at pods"}]
    assert rows[2]["gen_ai.tool.name"] == "get_resources" and rows[2]["gen_ai.operation.name"] == "execute_tool"
    assert rows[3]["gen_ai.tool.call.id"] == "call-1" and rows[3]["ok"] is True
    assert rows[4]["gen_ai.usage.input_tokens"] == 120 and rows[4]["gen_ai.usage.output_tokens"] == 30
