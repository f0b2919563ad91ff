"""Where a trial's bulky outputs live: transcripts, audit logs, snapshots, logs, kubeconfigs.

Workflow payloads carry only refs (``file:///…`` URIs) to these. Trial directories are opaque
(a hash of the trial id), so artifact paths never leak task ids to an agent that can see them.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlparse

from .errors import ConfigError, InfraError


class JsonlAppender(Protocol):
    """An append-only JSON Lines artifact: one JSON object per line, flushed per write."""

    ref: str

    def write(self, record: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class ArtifactStore(Protocol):
    def put(self, trial_id: str, name: str, data: bytes | str) -> str:
        """Store ``data`` under ``name`` for the trial; returns its ref."""

    def get(self, ref: str) -> bytes: ...

    def open_append(self, trial_id: str, name: str) -> JsonlAppender: ...

    def local_path(self, ref: str) -> Path | None:
        """A filesystem path for the ref when there is one (tools that need a file, e.g. kubeconfig)."""


def trial_dir_name(trial_id: str) -> str:
    """The opaque directory name for a trial: stable, short, not reversible to the task id."""
    return "t-" + hashlib.sha256(trial_id.encode()).hexdigest()[:20]


def _safe_name(name: str) -> str:
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        raise ValueError(f"invalid artifact name {name!r}")
    return "/".join(parts)


class _FileAppender:
    def __init__(self, path: Path, ref: str):
        self.ref = ref
        self._lock = threading.Lock()
        self._fh = open(path, "a", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, default=str, separators=(",", ":"))
        with self._lock:
            if self._fh.closed:
                raise ValueError(f"artifact {self.ref} is closed")
            self._fh.write(line + "\n")
            self._fh.flush()

    def close(self) -> None:
        with self._lock:
            self._fh.close()

    def __enter__(self) -> "_FileAppender":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalArtifactStore:
    """Artifacts as files under ``root/<opaque trial dir>/<name>``; refs are ``file://`` URIs."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root).expanduser().resolve()

    def _dir(self, trial_id: str) -> Path:
        d = self.root / trial_dir_name(trial_id)
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InfraError(f"cannot create artifact directory {d}: {e}", transient=False) from e
        return d

    def _path(self, trial_id: str, name: str) -> Path:
        path = self._dir(trial_id) / _safe_name(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def put(self, trial_id: str, name: str, data: bytes | str) -> str:
        path = self._path(trial_id, name)
        raw = data.encode("utf-8") if isinstance(data, str) else data
        tmp = path.with_name(path.name + ".tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw)
            os.replace(tmp, path)
        except OSError as e:
            raise InfraError(f"cannot write artifact {path}: {e}", transient=False) from e
        return path.as_uri()

    def open_append(self, trial_id: str, name: str) -> _FileAppender:
        path = self._path(trial_id, name)
        return _FileAppender(path, path.as_uri())

    def local_path(self, ref: str) -> Path:
        if ref.startswith("file://"):
            path = Path(unquote(urlparse(ref).path))
        else:
            path = self.root / _safe_name(ref)
        path = path.resolve()
        if path != self.root and self.root not in path.parents:
            raise ValueError(f"artifact ref {ref!r} is outside the store root {self.root}")
        return path

    def get(self, ref: str) -> bytes:
        path = self.local_path(ref)
        try:
            return path.read_bytes()
        except FileNotFoundError as e:
            raise InfraError(f"artifact {ref} not found", transient=False) from e
        except OSError as e:
            raise InfraError(f"cannot read artifact {ref}: {e}", transient=True) from e


def artifact_store_for(root: str) -> LocalArtifactStore:
    """The store a TrialSpec's ``artifacts_root`` names: a directory path or a ``file://`` URI."""
    if not root:
        raise ConfigError("artifacts_root is empty")
    parsed = urlparse(root)
    if parsed.scheme == "file":
        return LocalArtifactStore(unquote(parsed.path))
    if parsed.scheme and len(parsed.scheme) > 1:
        raise ConfigError(f"unsupported artifacts_root scheme {parsed.scheme!r} (use a path or file://)")
    return LocalArtifactStore(root)


def read_jsonl(store: ArtifactStore, ref: str) -> list[dict[str, Any]]:
    """Parse a JSONL artifact; a torn last line (crash mid-write) is skipped."""
    out: list[dict[str, Any]] = []
    for line in store.get(ref).decode("utf-8").splitlines():
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return out
