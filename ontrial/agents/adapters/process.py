"""Child processes of CLI agents: bounded output capture and killing the whole process tree."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path


class BoundedCapture:
    """Reads a stream to the end, keeping the first ``limit`` bytes and counting the rest."""

    def __init__(self, limit: int):
        self.limit = limit
        self.data = bytearray()
        self.dropped = 0

    async def drain(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        while chunk := await stream.read(65536):
            room = self.limit - len(self.data)
            self.data += chunk[:max(0, room)]
            self.dropped += max(0, len(chunk) - max(0, room))

    def text(self) -> str:
        text = self.data.decode("utf-8", "replace")
        return text + (f"\n[... truncated {self.dropped} bytes ...]" if self.dropped else "")


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (Linux /proc), so children that left the process group die too."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _signal_all(pgid: int, pids: list[int], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


async def kill_tree(proc: asyncio.subprocess.Process, grace_seconds: float = 3.0) -> None:
    """SIGTERM the process group (and any descendant that left it), SIGKILL whatever is left after
    ``grace_seconds``; returns once the leader is reaped."""
    pgid = proc.pid  # started with start_new_session=True: the leader's pid is the group id
    pids = descendants(proc.pid)
    if proc.returncode is not None:  # the leader is gone: only stragglers left in its group
        _signal_all(pgid, pids, signal.SIGKILL)
        return
    _signal_all(pgid, pids, signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), timeout=grace_seconds)
    except (asyncio.TimeoutError, TimeoutError):
        pass
    _signal_all(pgid, pids + descendants(proc.pid), signal.SIGKILL)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(proc.wait(), timeout=5.0)
