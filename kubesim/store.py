"""In-memory object store with a global resourceVersion and a watch log.

Objects are plain dicts shaped like the JSON the API serves. A stored dict is never mutated in
place: writers pass a new dict (``tree.clone`` what you read), so watch-log entries stay true
snapshots. Everything runs on one asyncio loop; no method here awaits.
"""

from __future__ import annotations

import asyncio
import copy
import random
import uuid
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from .clock import SimClock, rfc3339
from .errors import ApiError, already_exists, conflict, not_found
from .resources import ResourceType
from .tree import clone

Obj = dict[str, Any]
ResKey = tuple[str, str]  # (group, plural)

# Same alphabet as apimachinery's rand.String (no vowels, no confusable digits).
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_SERVER_FIELDS = ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields")


@dataclass(frozen=True)
class WatchEvent:
    rv: int
    type: str  # ADDED | MODIFIED | DELETED
    key: ResKey
    namespace: str
    obj: Obj


class Subscription:
    """A live feed of watch events for one resource type (and optionally one namespace)."""

    def __init__(self, store: "Store", key: ResKey, namespace: str | None):
        self.store = store
        self.key = key
        self.namespace = namespace
        self.queue: asyncio.Queue[WatchEvent] = asyncio.Queue()

    def matches(self, ev: WatchEvent) -> bool:
        return ev.key == self.key and (self.namespace is None or ev.namespace == self.namespace)

    def close(self) -> None:
        self.store._subscribers.discard(self)


def meta(obj: Obj) -> dict[str, Any]:
    return obj.setdefault("metadata", {})


def random_suffix(n: int = 5, rng: random.Random | None = None) -> str:
    r = rng or random
    return "".join(r.choice(_NAME_ALPHABET) for _ in range(n))


class Store:
    def __init__(self, clock: SimClock, log_size: int = 20000, seed: int | None = None):
        self.clock = clock
        self._objects: dict[ResKey, dict[tuple[str, str], Obj]] = {}
        self._rv = 0
        self._log: deque[WatchEvent] = deque(maxlen=log_size)
        self._subscribers: set[Subscription] = set()
        self.rng = random.Random(seed)
        # Namespaces written since the controllers last looked ("" = cluster scope).
        self.dirty: set[str] = set()
        self.write_hooks: list[Callable[[WatchEvent], None]] = []

    # -- reads -----------------------------------------------------------------------------
    @property
    def resource_version(self) -> int:
        return self._rv

    def get(self, rt: ResourceType, namespace: str, name: str) -> Obj:
        """The stored object (shared: copy before changing it). Raises 404."""
        obj = self._objects.get(rt.key, {}).get((namespace if rt.namespaced else "", name))
        if obj is None:
            raise not_found(rt.group, rt.plural, name)
        return obj

    def find(self, rt: ResourceType, namespace: str, name: str) -> Obj | None:
        return self._objects.get(rt.key, {}).get((namespace if rt.namespaced else "", name))

    def list(self, rt: ResourceType, namespace: str | None = None) -> list[Obj]:
        """Objects of a type, in one namespace or all, sorted by namespace then name."""
        bucket = self._objects.get(rt.key, {})
        if namespace is None or not rt.namespaced:
            items = list(bucket.items())
        else:
            items = [(k, v) for k, v in bucket.items() if k[0] == namespace]
        items.sort(key=lambda kv: kv[0])
        return [v for _, v in items]

    def iter_namespace(self, namespace: str) -> Iterator[tuple[ResKey, Obj]]:
        for key, bucket in self._objects.items():
            for (ns, _), obj in list(bucket.items()):
                if ns == namespace:
                    yield key, obj

    # -- writes ----------------------------------------------------------------------------
    def _next_rv(self) -> str:
        self._rv += 1
        return str(self._rv)

    def create(self, rt: ResourceType, obj: Obj, dry_run: bool = False) -> Obj:
        m = meta(obj)
        if not m.get("name"):
            prefix = m.get("generateName")
            if not prefix:
                raise ApiError(422, f"{rt.kind} is invalid: metadata.name: Required value: name or generateName is required",
                               "Invalid")
            for _ in range(10):
                candidate = prefix + random_suffix(rng=self.rng)
                if self.find(rt, m.get("namespace", ""), candidate) is None:
                    m["name"] = candidate
                    break
        ns = m.get("namespace", "") if rt.namespaced else ""
        if not rt.namespaced:
            m.pop("namespace", None)
        bucket = self._objects.setdefault(rt.key, {})
        if (ns, m["name"]) in bucket:
            raise already_exists(rt.group, rt.plural, m["name"])
        obj["apiVersion"] = rt.api_version
        obj["kind"] = rt.kind
        m.pop("resourceVersion", None)
        m["uid"] = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        m["creationTimestamp"] = rfc3339(self.clock.now())
        if "spec" in obj or rt.group in ("apps", "batch"):
            m["generation"] = 1
        if dry_run:
            m["resourceVersion"] = str(self._rv)
            return obj
        m["resourceVersion"] = self._next_rv()
        bucket[(ns, m["name"])] = obj
        self._emit(WatchEvent(self._rv, "ADDED", rt.key, ns, obj))
        return obj

    def update(self, rt: ResourceType, obj: Obj, *, check_rv: bool = True, dry_run: bool = False) -> Obj:
        """Replace an object. A stale ``metadata.resourceVersion`` gets 409; an unchanged object is a no-op."""
        m = meta(obj)
        ns = m.get("namespace", "") if rt.namespaced else ""
        old = self.get(rt, ns, m.get("name", ""))
        om = old["metadata"]
        if check_rv and m.get("resourceVersion") and m["resourceVersion"] != om["resourceVersion"]:
            raise conflict(rt.group, rt.plural, m["name"])
        obj["apiVersion"] = rt.api_version
        obj["kind"] = rt.kind
        for f in ("uid", "creationTimestamp"):
            m[f] = om[f]
        if "generation" in om:
            changed_spec = obj.get("spec") != old.get("spec")
            m["generation"] = om["generation"] + (1 if changed_spec else 0)
        if "deletionTimestamp" in om:
            m["deletionTimestamp"] = om["deletionTimestamp"]
        m["resourceVersion"] = om["resourceVersion"]
        if obj == old or dry_run:
            return old if obj == old else obj
        m["resourceVersion"] = self._next_rv()
        self._objects[rt.key][(ns, m["name"])] = obj
        self._emit(WatchEvent(self._rv, "MODIFIED", rt.key, ns, obj))
        return obj

    def delete(self, rt: ResourceType, namespace: str, name: str, dry_run: bool = False) -> Obj:
        ns = namespace if rt.namespaced else ""
        obj = self.get(rt, ns, name)
        if dry_run:
            return obj
        del self._objects[rt.key][(ns, name)]
        gone = copy.copy(obj)
        gone["metadata"] = dict(obj["metadata"], resourceVersion=self._next_rv())
        self._emit(WatchEvent(self._rv, "DELETED", rt.key, ns, gone))
        return gone

    def _emit(self, ev: WatchEvent) -> None:
        self._log.append(ev)
        if ev.key != ("", "events"):
            self.dirty.add(ev.namespace)
            if ev.key == ("", "namespaces"):
                self.dirty.add(ev.obj["metadata"]["name"])
        for sub in list(self._subscribers):
            if sub.matches(ev):
                sub.queue.put_nowait(ev)
        for hook in self.write_hooks:
            hook(ev)

    # -- watch -----------------------------------------------------------------------------
    def subscribe(self, rt: ResourceType, namespace: str | None, since_rv: int | None) -> tuple[list[WatchEvent], Subscription]:
        """Events after ``since_rv`` from the log (410 if it fell out of the window), plus a live feed."""
        backlog: list[WatchEvent] = []
        ns = namespace if rt.namespaced else None
        sub = Subscription(self, rt.key, ns)
        if since_rv is not None and since_rv < self._rv:
            oldest = self._log[0].rv if self._log else self._rv + 1
            if since_rv + 1 < oldest:
                raise ApiError(410, f"too old resource version: {since_rv} ({oldest - 1})", "Expired")
            backlog = [ev for ev in self._log if ev.rv > since_rv and sub.matches(ev)]
        self._subscribers.add(sub)
        return backlog, sub


def strip_server_fields(obj: Obj) -> Obj:
    """A copy without server-owned metadata (used when comparing templates and specs)."""
    out = clone(obj)
    m = out.get("metadata", {})
    for f in _SERVER_FIELDS:
        m.pop(f, None)
    return out
