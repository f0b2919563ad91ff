"""Tool output bounded to a size agents can take in, with a visible marker where bytes were cut."""

from __future__ import annotations

from typing import Literal

MAX_OUTPUT_BYTES = 8192


def bound(text: str, limit: int = MAX_OUTPUT_BYTES, keep: Literal["head", "tail"] = "head") -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes of content plus a ``[... truncated N bytes ...]`` line.

    ``keep="tail"`` keeps the end (logs: the latest lines matter most)."""
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text
    if keep == "tail":
        kept = raw[len(raw) - limit:].decode("utf-8", "ignore")
        cut = len(raw) - len(kept.encode("utf-8"))
        return f"[... truncated {cut} bytes ...]\n{kept}"
    kept = raw[:limit].decode("utf-8", "ignore")
    cut = len(raw) - len(kept.encode("utf-8"))
    return f"{kept}\n[... truncated {cut} bytes ...]"
