"""Audit entries (in memory and JSONL) and bounded tool output."""

from pathlib import Path

from ontrial.artifacts import LocalArtifactStore, read_jsonl
from ontrial.gateway import Action, AuditLog, bound


def test_audit_entries_are_sequenced_and_written(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    audit = AuditLog("s/t/0", sink=store.open_append("s/t/0", "audit.jsonl"))
    audit.record(actor="agent", tool="get_resources", args={"kind": "pods"}, action=Action("list", "pods", "ns"),
                 result="ok")
    audit.record(actor="agent", tool="delete", args={"kind": "pod", "name": "p"},
                 action=Action("delete", "pods", "ns", "p"), result="blocked", violation="no_deletes: delete pods/p",
                 sim_seconds=12.5)
    audit.record(actor="agent", tool="nope", args={"x": object()}, action=None, result="error", error="unknown")
    audit.close()
    rows = read_jsonl(store, audit.ref)
    assert [r["seq"] for r in rows] == [1, 2, 3]
    assert rows[1]["verb"] == "delete" and rows[1]["resource"] == "pods" and rows[1]["name"] == "p"
    assert rows[1]["result"] == "blocked" and rows[1]["sim_seconds"] == 12.5
    assert rows[2]["verb"] is None and isinstance(rows[2]["args"]["x"], str)
    assert rows[0]["trial"] == "s/t/0" and rows[0]["wall_time"]
    assert audit.violations() == ["blocked: no_deletes: delete pods/p"]


def test_bound_keeps_head_or_tail_with_marker() -> None:
    assert bound("short", 100) == "short"
    text = "x" * 100 + "END"
    out = bound(text, 50)
    assert out.startswith("x" * 50) and out.endswith("[... truncated 53 bytes ...]")
    tail = bound("START" + "y" * 100, 50, keep="tail")
    assert tail.startswith("[... truncated 55 bytes ...]") and tail.endswith("y" * 50)


def test_bound_counts_bytes_and_never_splits_characters() -> None:
    out = bound("é" * 100, 51)  # 2 bytes each: 25 whole characters fit
    assert out.startswith("é" * 25) and "[... truncated 150 bytes ...]" in out
