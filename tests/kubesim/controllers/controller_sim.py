"""Drive a Cluster in-process for controller tests: frozen clock, objects created as the API would.

Pods never become Ready without a kubelet, so ``make_ready`` / ``make_running_unready`` / ``finish_pod``
play the kubelet's part by writing pod status directly.
"""

from __future__ import annotations

import copy
from datetime import datetime, timezone
from typing import Any

from kubesim import objects
from kubesim.clock import SimClock, rfc3339
from kubesim.cluster import Cluster
from kubesim.controllers import all_controllers
from kubesim.controllers.common import controller_of
from kubesim.resources import EVENTS, NAMESPACES, PODS, REPLICASETS, ResourceType

START = datetime(2026, 3, 2, 12, 0, 0, tzinfo=timezone.utc)  # a Monday, on the minute


def prepare(rt: ResourceType, obj: dict, old: dict | None = None) -> dict:
    """What the API server stores for a client's create (old=None) or update."""
    return objects.prepare(rt, copy.deepcopy(obj), old)


class Sim:
    """A frozen-clock cluster running only the kube-controller-manager loops."""

    def __init__(self, seed: int = 1) -> None:
        self.cluster = Cluster(SimClock(time_scale=0, start=START), seed=seed)
        self.cluster.controllers = all_controllers()
        self.store = self.cluster.store
        self.add_namespace("default")

    # -- objects ---------------------------------------------------------------------------
    def add_namespace(self, name: str) -> dict:
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
              "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
        created = self.store.create(NAMESPACES, prepare(NAMESPACES, ns))
        self.reconcile()
        return created

    def create(self, rt: ResourceType, obj: dict, reconcile: bool = True) -> dict:
        obj = copy.deepcopy(obj)
        obj.setdefault("metadata", {}).setdefault("namespace", "default")
        created = self.store.create(rt, prepare(rt, obj))
        if reconcile:
            self.reconcile()
        return created

    def get(self, rt: ResourceType, name: str, ns: str = "default") -> dict:
        return self.store.get(rt, ns, name)

    def find(self, rt: ResourceType, name: str, ns: str = "default") -> dict | None:
        return self.store.find(rt, ns, name)

    def list(self, rt: ResourceType, ns: str | None = "default") -> list[dict]:
        return self.store.list(rt, ns)

    def edit(self, rt: ResourceType, name: str, fn, ns: str = "default", reconcile: bool = True,
             prepared: bool = True) -> dict:
        """Apply ``fn`` to a copy of the object and store it like a client PUT (or raw with prepared=False)."""
        old = self.store.get(rt, ns, name)
        obj = copy.deepcopy(old)
        fn(obj)
        updated = self.store.update(rt, prepare(rt, obj, old) if prepared else obj)
        if reconcile:
            self.reconcile()
        return updated

    def reconcile(self) -> None:
        self.cluster.reconcile()

    def advance(self, seconds: float) -> None:
        self.cluster.advance(seconds)

    def now(self) -> str:
        return rfc3339(self.cluster.clock.now())

    # -- relations -------------------------------------------------------------------------
    def pods(self, owner: dict | None = None, ns: str = "default") -> list[dict]:
        pods = self.store.list(PODS, ns)
        if owner is None:
            return pods
        return [p for p in pods if (controller_of(p) or {}).get("uid") == owner["metadata"]["uid"]]

    def replicasets(self, deployment: dict) -> list[dict]:
        uid = deployment["metadata"]["uid"]
        return [rs for rs in self.store.list(REPLICASETS, deployment["metadata"]["namespace"])
                if (controller_of(rs) or {}).get("uid") == uid]

    def events(self, obj: dict | None = None, reason: str | None = None) -> list[dict]:
        evs = self.store.list(EVENTS, None)
        if obj is not None:
            evs = [e for e in evs if e["involvedObject"].get("uid") == obj["metadata"]["uid"]]
        if reason is not None:
            evs = [e for e in evs if e["reason"] == reason]
        return sorted(evs, key=lambda e: int(e["metadata"]["resourceVersion"]))

    def messages(self, obj: dict | None = None, reason: str | None = None) -> list[str]:
        return [e["message"] for e in self.events(obj, reason)]

    # -- kubelet stand-in ------------------------------------------------------------------
    def _set_status(self, pod: dict, status: dict[str, Any], reconcile: bool) -> None:
        current = copy.deepcopy(self.store.get(PODS, pod["metadata"]["namespace"], pod["metadata"]["name"]))
        current.setdefault("spec", {}).setdefault("nodeName", "kubesim-node-1")
        current["status"] = status
        self.store.update(PODS, current, check_rv=False)
        if reconcile:
            self.reconcile()

    def make_ready(self, pods: list[dict] | dict, ip_base: int = 10, reconcile: bool = True) -> None:
        for i, pod in enumerate([pods] if isinstance(pods, dict) else pods):
            now = self.now()
            ip = pod.get("status", {}).get("podIP") or f"10.244.0.{ip_base + len(self.store.list(PODS, None)) + i}"
            self._set_status(pod, {
                "phase": "Running", "podIP": ip, "startTime": now,
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now},
                               {"type": "ContainersReady", "status": "True", "lastTransitionTime": now}],
            }, reconcile=False)
        if reconcile:
            self.reconcile()

    def make_running_unready(self, pods: list[dict] | dict, reconcile: bool = True) -> None:
        for i, pod in enumerate([pods] if isinstance(pods, dict) else pods):
            now = self.now()
            self._set_status(pod, {
                "phase": "Running", "podIP": f"10.244.1.{10 + i + len(self.store.list(PODS, None))}",
                "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": now}],
            }, reconcile=False)
        if reconcile:
            self.reconcile()

    def finish_pod(self, pod: dict, phase: str, reconcile: bool = True) -> None:
        self._set_status(pod, {"phase": phase}, reconcile)

    def ready_all(self, owner: dict | None = None) -> None:
        """Mark every not-yet-ready pod (of ``owner``) Ready, repeatedly until none are left."""
        for _ in range(20):
            pending = [p for p in self.pods(owner) if not _ready(p) and p["status"].get("phase") not in
                       ("Succeeded", "Failed")]
            if not pending:
                return
            self.make_ready(pending)


def _ready(pod: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def deployment(name: str = "web", replicas: int = 3, image: str = "shop/api:1.0", **spec: Any) -> dict:
    labels = {"app": name}
    body = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "labels": dict(labels)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": {"metadata": {"labels": dict(labels)},
                         "spec": {"containers": [{"name": "app", "image": image,
                                                  "ports": [{"containerPort": 8080, "name": "http"}]}]}},
        },
    }
    body["spec"].update(spec)
    return body


def condition(obj: dict, type_: str) -> dict | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == type_:
            return c
    return None


def rollout_status(d: dict) -> str:
    """kubectl's DeploymentStatusViewer, line for line (the text ``kubectl rollout status`` prints)."""
    name = d["metadata"]["name"]
    st = d.get("status") or {}
    if d["metadata"].get("generation", 0) <= st.get("observedGeneration", 0):
        cond = condition(d, "Progressing")
        if cond and cond.get("reason") == "ProgressDeadlineExceeded":
            return f'error: deployment "{name}" exceeded its progress deadline'
        replicas = d["spec"].get("replicas", 1)
        updated = st.get("updatedReplicas", 0)
        if updated < replicas:
            return (f'Waiting for deployment "{name}" rollout to finish: {updated} out of {replicas} '
                    "new replicas have been updated...")
        if st.get("replicas", 0) > updated:
            return (f'Waiting for deployment "{name}" rollout to finish: {st.get("replicas", 0) - updated} '
                    "old replicas are pending termination...")
        if st.get("availableReplicas", 0) < updated:
            return (f'Waiting for deployment "{name}" rollout to finish: {st.get("availableReplicas", 0)} of '
                    f"{updated} updated replicas are available...")
        return f'deployment "{name}" successfully rolled out'
    return "Waiting for deployment spec update to be observed..."
