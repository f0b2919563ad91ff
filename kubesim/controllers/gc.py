"""Garbage collection by ownerReferences, and the DELETE propagation policies.

Like the real collector, deletion policies other than Background are carried by finalizers on the
object being deleted: ``orphan`` (strip its ownerReferences from dependents, then let it go) and
``foregroundDeletion`` (delete dependents first; it goes once no blocking dependent remains).
Objects whose owners are all gone (matched by uid) are deleted; references to vanished owners are
dropped when another owner survives; a marked object whose finalizers are all gone is removed.
"""

from __future__ import annotations


from ..errors import ApiError
from ..resources import EVENTS, NAMESPACES, PODS, ResourceType, by_key
from ..store import Obj
from ..tree import clone
from .common import api_delete, being_deleted, now_ts, resolve_kind, sim_seconds, write
from .namespace import begin_delete, check_deletable

COMPONENT = "garbage-collector"
POLICIES = ("Foreground", "Background", "Orphan")
ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"


class GarbageCollector:
    name = COMPONENT

    def __init__(self) -> None:
        self._cluster_uids: set[str] = set()  # cluster-scoped objects seen on the last "" pass

    def reconcile(self, cluster, namespace: str) -> None:
        store = cluster.store
        if not namespace:
            self._revisit_dependents_of_vanished(cluster)
        for key, obj in list(store.iter_namespace(namespace)):
            if key == EVENTS.key:
                continue
            rt = by_key(*key)
            if store.find(rt, namespace, obj["metadata"]["name"]) is not obj:
                continue  # removed or replaced earlier in this pass
            if being_deleted(obj) and rt is not NAMESPACES:
                _progress_deletion(cluster, rt, obj)
                continue
            refs = obj["metadata"].get("ownerReferences") or []
            if not refs:
                continue
            solid = [r for r in refs if owner_exists(cluster, namespace, r)]
            if not solid:
                api_delete(cluster, rt, obj)
            elif len(solid) != len(refs):
                trimmed = clone(obj)
                trimmed["metadata"]["ownerReferences"] = solid
                write(cluster, rt, trimmed)


    def _revisit_dependents_of_vanished(self, cluster) -> None:
        """A cluster-scoped owner may have dependents in any namespace: look at those namespaces again."""
        current = {obj["metadata"].get("uid", "") for _, obj in cluster.store.iter_namespace("")}
        gone, self._cluster_uids = self._cluster_uids - current, current
        if not gone:
            return
        for ns in cluster.store.list(NAMESPACES):
            name = ns["metadata"]["name"]
            for key, obj in cluster.store.iter_namespace(name):
                if any(r.get("uid") in gone for r in obj["metadata"].get("ownerReferences") or []):
                    cluster.store.dirty.add(name)
                    break


def owner_exists(cluster, namespace: str, ref: dict) -> bool:
    """True when the referenced owner exists with that uid (unknown kinds count as existing)."""
    rt = resolve_kind(ref.get("apiVersion", ""), ref.get("kind", ""))
    if rt is None:
        return True
    owner = cluster.store.find(rt, namespace if rt.namespaced else "", ref.get("name", ""))
    return owner is not None and owner["metadata"].get("uid") == ref.get("uid")


def _progress_deletion(cluster, rt: ResourceType, obj: Obj) -> None:
    """Work the orphan/foreground finalizers; remove the object once none are left."""
    m = obj["metadata"]
    finalizers = list(m.get("finalizers") or [])
    if ORPHAN in finalizers:
        orphan_dependents(cluster, obj)
        finalizers.remove(ORPHAN)
    if FOREGROUND in finalizers and not _delete_dependents(cluster, obj):
        finalizers.remove(FOREGROUND)
    ns = m.get("namespace", "")
    if finalizers:
        if finalizers != list(m.get("finalizers") or []):
            updated = clone(obj)
            updated["metadata"]["finalizers"] = finalizers
            write(cluster, rt, updated)
        return
    if rt is PODS and m.get("deletionTimestamp"):
        due = sim_seconds(cluster, m["deletionTimestamp"])
        if cluster.now_s() < due:
            cluster.wake_at(ns, due)
            return
    try:
        cluster.store.delete(rt, ns, m["name"])
    except ApiError:
        pass


def dependents(cluster, owner: Obj) -> list[tuple[ResourceType, Obj]]:
    """Objects holding an ownerReference to ``owner`` (same namespace, or anywhere for cluster scope)."""
    uid = owner["metadata"].get("uid")
    namespace = owner["metadata"].get("namespace")
    spaces = [namespace] if namespace else [""] + [n["metadata"]["name"] for n in cluster.store.list(NAMESPACES)]
    found: list[tuple[ResourceType, Obj]] = []
    for ns in spaces:
        for key, obj in list(cluster.store.iter_namespace(ns)):
            if key != EVENTS.key and any(r.get("uid") == uid for r in obj["metadata"].get("ownerReferences") or []):
                found.append((by_key(*key), obj))
    return found


def orphan_dependents(cluster, owner: Obj) -> None:
    uid = owner["metadata"]["uid"]
    for rt, obj in dependents(cluster, owner):
        updated = clone(obj)
        refs = [r for r in obj["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
        if refs:
            updated["metadata"]["ownerReferences"] = refs
        else:
            updated["metadata"].pop("ownerReferences", None)
        write(cluster, rt, updated)


def _delete_dependents(cluster, owner: Obj) -> bool:
    """Foreground step: start deleting dependents; True while a blocking one remains."""
    uid = owner["metadata"]["uid"]
    blocked = False
    for rt, obj in dependents(cluster, owner):
        refs = obj["metadata"].get("ownerReferences") or []
        mine = next(r for r in refs if r.get("uid") == uid)
        others = [r for r in refs if r.get("uid") != uid]
        ns = obj["metadata"].get("namespace", "")
        if any(owner_exists(cluster, ns, r) for r in others):
            updated = clone(obj)
            updated["metadata"]["ownerReferences"] = others
            write(cluster, rt, updated)
            continue
        if not being_deleted(obj):
            obj = _start_delete(cluster, rt, obj, FOREGROUND if dependents(cluster, obj) else None)
        if mine.get("blockOwnerDeletion") and cluster.store.find(rt, ns, obj["metadata"]["name"]) is not None:
            blocked = True
    return blocked


def _start_delete(cluster, rt: ResourceType, obj: Obj, finalizer: str | None) -> Obj:
    """What the API's DELETE does: remove now, or mark with deletionTimestamp while finalizers remain."""
    finalizers = list(obj["metadata"].get("finalizers") or [])
    if finalizer and finalizer not in finalizers:
        finalizers.append(finalizer)
    if not finalizers:
        return api_delete(cluster, rt, obj)
    marked = clone(obj)
    marked["metadata"]["finalizers"] = finalizers
    marked["metadata"].setdefault("deletionTimestamp", now_ts(cluster))
    marked["metadata"].setdefault("deletionGracePeriodSeconds", 0)
    return write(cluster, rt, marked)


def delete_with_propagation(cluster, rt: ResourceType, namespace: str, name: str, policy: str | None = None,
                            dry_run: bool = False) -> Obj:
    """DELETE one object with a propagationPolicy; returns the deleted (or deletion-marked) object.

    Background (the default) removes the owner now and leaves dependents to the collector;
    Foreground and Orphan mark it with their finalizer for the collector to finish.
    Namespaces start their termination instead (namespace.begin_delete).
    """
    if policy is not None and policy not in POLICIES:
        raise ApiError(422, f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
                            f'"{policy}": supported values: "Foreground", "Background", "Orphan"', "Invalid")
    obj = cluster.store.get(rt, namespace, name)
    if rt is NAMESPACES:
        check_deletable(name)
    if dry_run:
        return obj
    if rt is NAMESPACES:
        return begin_delete(cluster, name)
    finalizer = {"Foreground": FOREGROUND, "Orphan": ORPHAN}.get(policy or "Background")
    return _start_delete(cluster, rt, obj, finalizer)
