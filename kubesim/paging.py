"""Chunked lists: ``limit`` and ``continue``, as client-go pagers and ``kubectl get`` use them.

Items are in (namespace, name) order, so a continue token only has to remember where the last
page ended. The real server serves every page from a snapshot at the first page's
resourceVersion; kubesim keeps no snapshots and serves later pages from the current state,
which is what a client sees anyway once that snapshot is compacted.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from .errors import ApiError

Obj = dict[str, Any]


@dataclass(frozen=True)
class Page:
    items: list[Obj]
    continue_token: str | None = None
    remaining: int | None = None

    def metadata(self) -> dict[str, Any]:
        """The list metadata fields this page adds (``continue``, ``remainingItemCount``)."""
        if self.continue_token is None:
            return {}
        return {"continue": self.continue_token, "remainingItemCount": self.remaining}


def _key(obj: Obj) -> tuple[str, str]:
    m = obj.get("metadata") or {}
    return m.get("namespace", ""), m.get("name", "")


def _decode(token: str) -> tuple[str, str]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        start = data["start"]
        if data.get("v") != "meta.k8s.io/v1" or not isinstance(start, list) or len(start) != 2:
            raise ValueError("unknown version or shape")
        return str(start[0]), str(start[1])
    except (ValueError, KeyError, TypeError, binascii.Error):  # UnicodeDecodeError is a ValueError
        raise ApiError(400, "continue key is not valid: it was not issued by this server", "BadRequest") from None


def _encode(after: tuple[str, str], rv: str) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": int(rv), "start": list(after)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def paginate(items: list[Obj], query: dict[str, str], resource_version: str) -> Page:
    """The page of ``items`` (sorted by namespace, name) that ``limit`` / ``continue`` ask for."""
    token = query.get("continue") or ""
    raw_limit = query.get("limit") or ""
    if token:
        after = _decode(token)
        items = [o for o in items if _key(o) > after]
    if not raw_limit:
        return Page(items)
    try:
        limit = int(raw_limit)
    except ValueError:
        raise ApiError(400, f'invalid value for limit: "{raw_limit}" is not an integer', "BadRequest") from None
    if limit <= 0 or len(items) <= limit:  # the apiserver treats limit <= 0 as no limit
        return Page(items)
    page = items[:limit]
    return Page(page, _encode(_key(page[-1]), resource_version), len(items) - limit)
