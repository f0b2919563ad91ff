"""Events as the real controllers and kubelet write them, de-duplicated by bumping ``count``."""

from __future__ import annotations

from typing import Any

from .clock import rfc3339
from .resources import EVENTS
from .store import Obj, Store


class EventRecorder:
    def __init__(self, store: Store):
        self.store = store
        self._index: dict[tuple[str, str, str, str], str] = {}  # (ns, uid, reason, message) -> event name

    def record(self, involved: Obj, type_: str, reason: str, message: str, component: str,
               host: str | None = None, field_path: str | None = None) -> None:
        m = involved["metadata"]
        ns = m.get("namespace") or "default"
        now = rfc3339(self.store.clock.now())
        key = (ns, m.get("uid", ""), reason, message)
        name = self._index.get(key)
        existing = self.store.find(EVENTS, ns, name) if name else None
        if existing is not None:
            ev = dict(existing, count=existing.get("count", 1) + 1, lastTimestamp=now)
            ev["metadata"] = dict(existing["metadata"])
            self.store.update(EVENTS, ev, check_rv=False)
            return
        involved_ref: dict[str, Any] = {
            "kind": involved.get("kind"),
            "namespace": m.get("namespace"),
            "name": m.get("name"),
            "uid": m.get("uid"),
            "apiVersion": involved.get("apiVersion"),
            "resourceVersion": m.get("resourceVersion"),
        }
        if field_path:
            involved_ref["fieldPath"] = field_path
        source: dict[str, str] = {"component": component}
        if host:
            source["host"] = host
        ev = {
            "metadata": {"generateName": f"{m.get('name')}.", "namespace": ns},
            "involvedObject": {k: v for k, v in involved_ref.items() if v is not None},
            "reason": reason,
            "message": message,
            "type": type_,
            "count": 1,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "source": source,
            "reportingComponent": component,
            "reportingInstance": host or "",
        }
        created = self.store.create(EVENTS, ev)
        self._index[key] = created["metadata"]["name"]
