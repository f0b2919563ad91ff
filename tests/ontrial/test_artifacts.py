"""LocalArtifactStore: opaque trial directories, refs round-trip, JSONL appends, no escapes from root."""

import json
import stat
from pathlib import Path

import pytest

from ontrial.artifacts import LocalArtifactStore, artifact_store_for, read_jsonl, trial_dir_name
from ontrial.errors import ConfigError, InfraError


def test_put_get_round_trip_and_opaque_dirs(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    ref = store.put("suite-1/oom-memory-limit-cut/0", "baseline.json", '{"a": 1}')
    assert ref.startswith("file://")
    assert store.get(ref) == b'{"a": 1}'
    assert "oom-memory-limit-cut" not in ref
    assert trial_dir_name("suite-1/oom-memory-limit-cut/0") in ref
    binary = store.put("suite-1/oom-memory-limit-cut/0", "logs/pod-a/api.log", b"\x00\x01")
    assert store.get(binary) == b"\x00\x01"
    assert store.local_path(binary).parent.name == "pod-a"


def test_artifacts_are_private_files(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    path = store.local_path(store.put("t", "agent-kubeconfig.yaml", "token: x"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_different_trials_different_dirs(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    a = store.local_path(store.put("s/t/0", "x", "1"))
    b = store.local_path(store.put("s/t/1", "x", "2"))
    assert a.parent != b.parent


def test_jsonl_append_and_read_skips_torn_line(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    with store.open_append("t", "audit.jsonl") as out:
        out.write({"seq": 1})
        out.write({"seq": 2, "text": "ünïcode"})
        ref = out.ref
    with open(store.local_path(ref), "a") as fh:
        fh.write('{"seq": 3')  # a crash mid-write
    assert [r["seq"] for r in read_jsonl(store, ref)] == [1, 2]
    assert json.loads(store.get(ref).splitlines()[1])["text"] == "ünïcode"


def test_refs_cannot_escape_the_root(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "root")
    (tmp_path / "secret").write_text("x")
    with pytest.raises(ValueError):
        store.get((tmp_path / "secret").as_uri())
    with pytest.raises(ValueError):
        store.put("t", "../../escape", "x")


def test_missing_artifact_is_infra_error(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path)
    with pytest.raises(InfraError) as err:
        store.get((tmp_path / "nope").as_uri())
    assert not err.value.transient


def test_store_from_root_forms(tmp_path: Path) -> None:
    assert artifact_store_for(str(tmp_path)).root == tmp_path.resolve()
    assert artifact_store_for(tmp_path.as_uri()).root == tmp_path.resolve()
    with pytest.raises(ConfigError):
        artifact_store_for("s3://bucket/x")
    with pytest.raises(ConfigError):
        artifact_store_for("")
