"""DaemonSet controller: one pod on every node the template may run on.

As the real controller does it: a node is eligible when the template's node selector, node affinity
and tolerations (plus the tolerations every daemon pod gets) let a pod land there, capacity aside.
Each daemon pod is pinned to its node by node affinity on ``metadata.name`` and placed by the
scheduler. Pods on nodes that are no longer eligible are removed, duplicates too, failed ones
replaced. ``RollingUpdate`` replaces out-of-date pods while at most ``maxUnavailable`` nodes lack an
available daemon pod; ``OnDelete`` leaves that to whoever deletes them. Template history lives in
ControllerRevisions (``kubectl rollout history|undo ds``); status as ``kubectl rollout status ds``
reads it.
"""

from __future__ import annotations

from ..errors import ApiError
from ..resources import DAEMONSETS, NODES, PODS
from ..store import Obj
from ..workloads.scheduler import placement_reasons
from .common import (api_delete, being_deleted, controller_of, create_pod, namespace_terminating,
                     pod_available_at, pod_from_template, pod_phase, selector_is_empty, write_status)
from .revisions import REVISION_LABEL, revision_of, sync_revisions, trim_revisions
from .rollout import scaled_value

COMPONENT = "daemonset-controller"
TEMPLATE_GENERATION_LABEL = "pod-template-generation"
# What every daemon pod tolerates, so a node's own troubles do not evict the agents that report them.
DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)


class DaemonSetController:
    name = COMPONENT

    def __init__(self) -> None:
        self._nodes_seen: tuple = ()

    def reconcile(self, cluster, namespace: str) -> None:
        if not namespace:
            self._revisit_on_node_change(cluster)
            return
        sets = cluster.store.list(DAEMONSETS, namespace)
        if not sets:
            return
        nodes = cluster.store.list(NODES)
        pods = cluster.store.list(PODS, namespace)
        for ds in sets:
            if not selector_is_empty((ds.get("spec") or {}).get("selector")):
                _DaemonSync(cluster, ds, nodes, pods).run()

    def _revisit_on_node_change(self, cluster) -> None:
        """Nodes are cluster-scoped: when one comes, goes or changes, every namespace with a DaemonSet
        needs a pass."""
        seen = tuple((n["metadata"]["name"], n["metadata"].get("resourceVersion")) for n in cluster.store.list(NODES))
        if seen != self._nodes_seen:
            self._nodes_seen = seen
            cluster.store.dirty.update(ds["metadata"]["namespace"] for ds in cluster.store.list(DAEMONSETS))


def _for_running_pods(node: Obj) -> Obj:
    """The node as a pod already on it sees it: cordons and NoSchedule taints only stop new pods."""
    spec = dict(node.get("spec") or {})
    spec.pop("unschedulable", None)
    spec["taints"] = [t for t in spec.get("taints") or [] if isinstance(t, dict) and t.get("effect") == "NoExecute"]
    return {**node, "spec": spec}


def target_node(pod: Obj) -> str:
    """The node a daemon pod is for: where it runs, or the node its affinity pins it to."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return spec["nodeName"]
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in required.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and field.get("values"):
                return str(field["values"][0])
    return ""


def with_daemon_tolerations(spec: dict) -> dict:
    tolerations = [t for t in spec.get("tolerations") or [] if isinstance(t, dict)]
    have = {(t.get("key"), t.get("effect")) for t in tolerations}
    extra = [{"key": key, "operator": "Exists", "effect": effect}
             for key, effect in DAEMON_TOLERATIONS if (key, effect) not in have]
    return {**spec, "tolerations": tolerations + extra}


class _DaemonSync:
    """One pass over one DaemonSet."""

    def __init__(self, cluster, ds: Obj, nodes: list[Obj], pods: list[Obj]):
        self.cluster, self.ds = cluster, ds
        self.ns, self.name = ds["metadata"]["namespace"], ds["metadata"]["name"]
        self.spec = ds.get("spec") or {}
        probe = {"metadata": {}, "spec": with_daemon_tolerations((self.spec.get("template") or {}).get("spec") or {})}
        self.eligible = [n["metadata"]["name"] for n in nodes if not placement_reasons(probe, n)]
        self.may_stay = {n["metadata"]["name"] for n in nodes if not placement_reasons(probe, _for_running_pods(n))}
        self.by_node: dict[str, list[Obj]] = {}
        for pod in pods:
            ref = controller_of(pod)
            if ref is not None and ref.get("uid") == ds["metadata"]["uid"] and not being_deleted(pod):
                self.by_node.setdefault(target_node(pod), []).append(pod)
        for pods_here in self.by_node.values():
            pods_here.sort(key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]))

    def event(self, reason: str, message: str, type_: str = "Normal") -> None:
        self.cluster.events.record(self.ds, type_, reason, message, COMPONENT)

    def run(self) -> None:
        owned, update = sync_revisions(self.cluster, self.ds)
        if not being_deleted(self.ds) and not namespace_terminating(self.cluster, self.ns):
            self.manage(update)
        in_use = {update["metadata"]["name"]} | {revision_of(p) for ps in self.by_node.values() for p in ps}
        trim_revisions(self.cluster, self.ds, owned, in_use)
        self.update_status(update)

    # -- placement ---------------------------------------------------------------------------
    def manage(self, update: Obj) -> None:
        for node, pods in list(self.by_node.items()):
            if node not in self.may_stay:
                self.delete(node, pods)  # the node no longer fits the template (or evicts with NoExecute)
            elif len(pods) > 1:
                self.delete(node, pods[1:])  # keep the oldest
        for node in self.eligible:
            failed = [p for p in self.by_node.get(node, []) if pod_phase(p) in ("Failed", "Succeeded")]
            if failed:
                self.delete(node, failed)
            if not self.by_node.get(node):
                self.create(node, update)
        if (self.spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate":
            self.roll(update)

    def roll(self, update: Obj) -> None:
        """Replace out-of-date pods: unavailable ones at once, available ones while the budget lasts."""
        rolling = (self.spec.get("updateStrategy") or {}).get("rollingUpdate") or {}
        budget = max(1, scaled_value(rolling.get("maxUnavailable", 1), len(self.eligible), round_up=True))
        unavailable = sum(1 for node in self.eligible if not self._available_on(node))
        for node in self.eligible:
            pods = self.by_node.get(node) or []
            if not pods or revision_of(pods[0]) == update["metadata"]["name"]:
                continue
            if not self._available_on(node):
                self.delete(node, pods)
            elif unavailable < budget:
                self.delete(node, pods)
                unavailable += 1

    def _available_on(self, node: str) -> bool:
        pods = [p for p in self.by_node.get(node) or [] if not being_deleted(p)]
        at = pod_available_at(self.cluster, pods[0], int(self.spec.get("minReadySeconds") or 0)) if pods else None
        return at is not None and at <= self.cluster.now_s()

    def create(self, node: str, update: Obj) -> None:
        pod = pod_from_template(self.spec.get("template") or {}, self.ds, f"{self.name}-")
        pod["metadata"]["labels"] = {**(pod["metadata"].get("labels") or {}),
                                     REVISION_LABEL: update["metadata"]["name"],
                                     TEMPLATE_GENERATION_LABEL: str(self.ds["metadata"].get("generation", 1))}
        spec = with_daemon_tolerations(pod["spec"])
        affinity = dict(spec.get("affinity") or {})
        affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}
        pod["spec"] = {**spec, "affinity": affinity}
        try:
            created = create_pod(self.cluster, pod)
        except ApiError as err:
            self.event("FailedCreate", f"Error creating: {err.message}", "Warning")
            return
        self.by_node[node] = [created]
        self.event("SuccessfulCreate", f"Created pod: {created['metadata']['name']}")

    def delete(self, node: str, pods: list[Obj]) -> None:
        for pod in pods:
            api_delete(self.cluster, PODS, pod)
            self.event("SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}")
        gone = {p["metadata"]["uid"] for p in pods}
        left = [p for p in self.by_node.get(node, []) if p["metadata"]["uid"] not in gone]
        if left:
            self.by_node[node] = left
        else:
            self.by_node.pop(node, None)

    # -- status ------------------------------------------------------------------------------
    def update_status(self, update: Obj) -> None:
        ds, now = self.ds, self.cluster.now_s()
        min_ready = int(self.spec.get("minReadySeconds") or 0)
        scheduled = [n for n in self.eligible if self.by_node.get(n)]
        ready = available = updated = 0
        next_available = None
        for node in scheduled:
            pod = self.by_node[node][0]
            at = pod_available_at(self.cluster, pod, min_ready)
            ready += at is not None and pod_phase(pod) == "Running"
            if at is not None and at <= now:
                available += 1
            elif at is not None:
                next_available = at if next_available is None else min(next_available, at)
            updated += revision_of(pod) == update["metadata"]["name"]
        if next_available is not None:
            self.cluster.wake_at(self.ns, next_available)
        desired = len(self.eligible)
        status = {**(ds.get("status") or {}),
                  "desiredNumberScheduled": desired, "currentNumberScheduled": len(scheduled),
                  "numberMisscheduled": sum(1 for n in self.by_node if n not in self.eligible),
                  "numberReady": ready, "numberAvailable": available, "numberUnavailable": desired - available,
                  "updatedNumberScheduled": updated, "observedGeneration": ds["metadata"].get("generation", 1)}
        write_status(self.cluster, DAEMONSETS, ds, status,
                     omit_if_zero=("numberAvailable", "numberUnavailable", "updatedNumberScheduled"))
