"""Namespace lifecycle: a deleted Namespace turns Terminating, its contents go, then it goes.

``begin_delete`` is the API's DELETE for namespaces. The controller then deletes every object in
the namespace; objects held by finalizers keep it Terminating, with the same status conditions the
real namespace controller reports, until their finalizers are removed.
"""

from __future__ import annotations

from collections import Counter

from ..errors import ApiError
from ..resources import EVENTS, NAMESPACES, by_key
from ..store import Obj
from ..tree import clone
from .common import api_delete, being_deleted, now_ts, write

COMPONENT = "namespace-controller"
UNDELETABLE = ("default", "kube-system", "kube-public")


def check_deletable(name: str) -> None:
    """The system namespaces refuse deletion (403), as the NamespaceLifecycle admission plugin does."""
    if name in UNDELETABLE:
        raise ApiError(403, f'namespaces "{name}" is forbidden: this namespace may not be deleted', "Forbidden",
                       {"name": name, "kind": "namespaces"})


def begin_delete(cluster, name: str) -> Obj:
    """Mark a Namespace for deletion (phase Terminating); the controller finishes the job."""
    ns = cluster.store.get(NAMESPACES, "", name)
    check_deletable(name)
    if being_deleted(ns):
        return ns
    marked = clone(ns)
    marked["metadata"]["deletionTimestamp"] = now_ts(cluster)
    marked["metadata"]["deletionGracePeriodSeconds"] = 0
    marked["status"] = dict(marked.get("status") or {}, phase="Terminating")
    return write(cluster, NAMESPACES, marked)


def _plural(key: tuple[str, str]) -> str:
    group, plural = key
    return f"{plural}.{group}" if group else plural


class NamespaceController:
    name = COMPONENT

    def reconcile(self, cluster, namespace: str) -> None:
        if not namespace:
            return
        ns = cluster.store.find(NAMESPACES, "", namespace)
        if ns is None or not being_deleted(ns):
            return
        content = list(cluster.store.iter_namespace(namespace))
        if all(key == EVENTS.key for key, _ in content):
            # Empty since the last pass (whose deletions may have left late events): finish.
            for key, obj in content:
                api_delete(cluster, EVENTS, obj)
            cluster.store.delete(NAMESPACES, "", namespace)
            return
        for key, obj in content:
            api_delete(cluster, by_key(*key), obj)
        remaining = [(key, obj) for key, obj in cluster.store.iter_namespace(namespace) if key != EVENTS.key]
        if remaining:
            self._report(cluster, ns, remaining)

    @staticmethod
    def _report(cluster, ns: Obj, remaining: list[tuple[tuple[str, str], Obj]]) -> None:
        """The NamespaceContentRemaining / NamespaceFinalizersRemaining conditions."""
        by_resource = Counter(_plural(key) for key, _ in remaining)
        by_finalizer = Counter(f for _, obj in remaining for f in obj["metadata"].get("finalizers") or [])
        content = ", ".join(f"{r} has {n} resource instances" for r, n in sorted(by_resource.items()))
        wanted = [
            ("NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered", "All resources successfully discovered"),
            ("NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions",
             "All legacy kube types successfully parsed"),
            ("NamespaceDeletionContentFailure", "False", "ContentDeleted",
             "All content successfully deleted, may be waiting on finalization"),
            ("NamespaceContentRemaining", "True", "SomeResourcesRemain", f"Some resources are remaining: {content}"),
        ]
        if by_finalizer:
            fins = ", ".join(f"{f} in {n} resource instances" for f, n in sorted(by_finalizer.items()))
            wanted.append(("NamespaceFinalizersRemaining", "True", "SomeFinalizersRemain",
                           f"Some content in the namespace has finalizers remaining: {fins}"))
        else:
            wanted.append(("NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers",
                           "All content-preserving finalizers finished"))
        old = {c.get("type"): c for c in (ns.get("status") or {}).get("conditions") or []}
        now = now_ts(cluster)
        conditions = []
        for type_, status, reason, message in wanted:
            prev = old.get(type_)
            same = prev is not None and (prev.get("status"), prev.get("reason"), prev.get("message")) == (
                status, reason, message)
            conditions.append(prev if same else {"type": type_, "status": status, "lastTransitionTime": now,
                                                 "reason": reason, "message": message})
        updated = clone(ns)
        updated["status"] = dict(updated.get("status") or {}, phase="Terminating", conditions=conditions)
        write(cluster, NAMESPACES, updated)
