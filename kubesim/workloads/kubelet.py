"""The kubelet: runs bound pods on the simulated node(s) and reports their status.

Level-triggered like every kubesim controller: each reconcile replays the transitions due up
to now (containers.drive), re-checks what depends on other objects (sleeping probes, blocked
scripts, missing ConfigMaps), writes the pod status only when it changed, and asks the cluster
for a wake-up at the next scheduled transition. Pods that vanished from the store lose their
runtime state (their running containers are reported stopped).
"""

from __future__ import annotations

import logging
from typing import Any

from ..resources import NAMESPACES, NODES, PODS
from . import behaviour, containers, probes
from ..tree import clone
from .context import NodeInfo, SyncContext
from .podconfig import MountError, check_volumes
from .podstatus import build_status, init_done
from .runtime import ContainerRuntime, PodRuntime, Runtime, at_ms, due
from .units import parse_cpu_millis, parse_memory_bytes

log = logging.getLogger("kubesim.workloads")


def node_info(node: dict[str, Any]) -> NodeInfo:
    status = node.get("status") or {}
    alloc = status.get("allocatable") or status.get("capacity") or {}
    ip = next((a.get("address") for a in status.get("addresses") or []
               if isinstance(a, dict) and a.get("type") == "InternalIP"), "")
    return NodeInfo(node["metadata"]["name"], str(ip or ""), parse_cpu_millis(alloc.get("cpu", "0")),
                    parse_memory_bytes(alloc.get("memory", "0")))


def _stub(pr: PodRuntime) -> dict[str, Any]:
    return {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": pr.name, "namespace": pr.namespace, "uid": pr.uid}}


class Kubelet:
    """Pod lifecycle for every pod bound to a node that exists."""

    name = "kubelet"

    def __init__(self, seed: Any = 0):
        self.seed = str(seed)

    def reconcile(self, cluster: Any, namespace: str) -> None:
        if namespace == "":
            return
        runtime: Runtime = cluster.runtime
        now = cluster.now_s()
        live: set[str] = set()
        nodes: dict[str, NodeInfo | None] = {}
        for pod in cluster.store.list(PODS, namespace):
            uid = pod["metadata"].get("uid", "")
            live.add(uid)
            node_name = (pod.get("spec") or {}).get("nodeName")
            if not node_name:
                continue
            if node_name not in nodes:
                node = cluster.store.find(NODES, "", node_name)
                nodes[node_name] = node_info(node) if node is not None else None
            info = nodes[node_name]
            if info is None:
                continue
            try:
                self.sync_pod(cluster, pod, info, now)
            except Exception:  # one pod's surprise must not stop the node (or the API server) for the others
                log.exception("kubelet: syncing pod %s/%s failed", namespace, pod["metadata"].get("name"))
        for uid, pr in list(runtime.items()):
            if pr.namespace == namespace and uid not in live:
                self.forget(cluster, pr, now)

    # -- one pod ------------------------------------------------------------------------------
    def _runtime_for(self, cluster: Any, pod: dict[str, Any], node: NodeInfo, now: float) -> PodRuntime:
        runtime: Runtime = cluster.runtime
        m = pod["metadata"]
        pr = runtime.get(m["uid"])
        if pr is None:
            spec = pod.get("spec") or {}
            pr = PodRuntime(m["uid"], m.get("namespace", "default"), m["name"], node.name, now, node.host_ip)
            pr.init = [ContainerRuntime(str(c.get("name")), True, str(c.get("image") or ""))
                       for c in spec.get("initContainers") or [] if isinstance(c, dict)]
            pr.containers = [ContainerRuntime(str(c.get("name")), False, str(c.get("image") or ""))
                             for c in spec.get("containers") or [] if isinstance(c, dict)]
            runtime[m["uid"]] = pr
        return pr

    def sync_pod(self, cluster: Any, pod: dict[str, Any], node: NodeInfo, now: float) -> None:
        if pod["metadata"].get("uid") not in cluster.runtime and (pod.get("status") or {}).get("phase") in (
                "Succeeded", "Failed"):
            return  # a finished pod this node never ran: nothing to start
        pr = self._runtime_for(cluster, pod, node, now)
        sc = SyncContext(cluster, pod, pr, node, self.seed)
        if pod["metadata"].get("deletionTimestamp"):
            self.stop_pod(sc, now)
            return
        self._apply_spec_changes(sc, now)
        if pr.sandbox_at is None and not self._setup_sandbox(sc, now):
            self._write_status(sc, now)
            self._wake(sc, now)
            return
        self._drive_all(sc, now)
        if self._recheck(sc, now):
            self._drive_all(sc, now)
        self._write_status(sc, now)
        self._wake(sc, now)

    def _setup_sandbox(self, sc: SyncContext, now: float) -> bool:
        pr = sc.pr
        try:
            check_volumes(sc.cluster.store, sc.pod)
        except MountError as e:
            if pr.mount_event_at is None or due(pr.mount_event_at, now):
                sc.event(None, "Warning", "FailedMount", f'MountVolume.SetUp failed for volume "{e.volume}" : {e}')
                pr.mount_backoff.next(now)
                pr.mount_event_at = at_ms(now + pr.mount_backoff.delay)
            return False
        pr.sandbox_at = at_ms(now)
        pr.pod_ip = sc.cluster.runtime.allocate_ip(pr.uid)
        return True

    def _drive_all(self, sc: SyncContext, now: float) -> None:
        pr = sc.pr
        ready_at = pr.sandbox_at
        for c in pr.init:
            if c.phase == containers.CREATED and c.next_at is None and ready_at is not None:
                c.next_at = at_ms(ready_at)
            containers.drive(sc, c, now)
            if not init_done(c):
                return
            ready_at = c.finished_at
        for c in pr.containers:
            if c.phase == containers.CREATED and c.next_at is None and ready_at is not None:
                c.next_at = at_ms(ready_at)
            containers.drive(sc, c, now)

    def _recheck(self, sc: SyncContext, now: float) -> bool:
        """React to changes elsewhere in the cluster; True when a transition became due now."""
        changed = False
        for c in sc.pr.all_containers():
            if c.phase == containers.RUNNING and c.run is not None:
                run = c.run
                if run.blocked_on and sc.resolve(run.blocked_on):
                    behaviour.resume_script(run, at_ms(now))
                    containers._schedule_running(c)
                probes.recheck(sc, c, now)
                containers._schedule_running(c)
            elif c.phase == containers.CONFIG_ERROR and containers.config_ready(sc, c):
                c.next_at = at_ms(now)
            changed = changed or due(c.next_at, now)
        return changed

    def _apply_spec_changes(self, sc: SyncContext, now: float) -> None:
        """A new image on a pod's container restarts just that container (pod images are mutable)."""
        for c in sc.pr.all_containers():
            image = str(sc.spec_of(c).get("image") or "")
            if c.phase == containers.CREATED:
                c.image = image
            if image == c.image:
                continue
            if c.phase == containers.RUNNING:
                containers.kill(sc, c, now, f"Container {c.name} definition changed, will be restarted")
                c.crash_backoff.delay = 0.0
                c.next_at = at_ms(now)
            elif c.phase in (containers.PULLING, containers.PULL_ERROR, containers.CONFIG_ERROR, containers.BACKOFF):
                c.pull_backoff.delay = 0.0
                c.image = image
                c.phase, c.next_at = containers.CREATED, at_ms(now)

    @staticmethod
    def _fingerprint(pr: PodRuntime) -> tuple[Any, ...]:
        """Everything the status is derived from (cheap to compare, unlike building the status)."""
        return (pr.sandbox_at, pr.pod_ip, tuple(
            (c.phase, c.waiting_reason, c.waiting_message, c.ready, c.started, c.attempts, len(c.deaths), c.image,
             c.container_id) for c in pr.all_containers()))

    def _write_status(self, sc: SyncContext, now: float) -> None:
        fingerprint = self._fingerprint(sc.pr)
        rv = sc.pod["metadata"].get("resourceVersion")
        if sc.pr.synced == (rv, fingerprint):
            return
        status = build_status(sc, now)
        if status != sc.pod.get("status"):
            new = clone(sc.pod)
            new["status"] = status
            sc.pod = sc.cluster.store.update(PODS, new, check_rv=False)
        sc.pr.synced = (sc.pod["metadata"].get("resourceVersion"), fingerprint)

    def _wake(self, sc: SyncContext, now: float) -> None:
        times = [c.next_at for c in sc.pr.all_containers() if c.next_at is not None]
        if sc.pr.sandbox_at is None and sc.pr.mount_event_at is not None:
            times.append(sc.pr.mount_event_at)
        future = [t for t in times if t > now]
        if future:
            sc.cluster.wake_at(sc.namespace, min(future))

    # -- stopping -------------------------------------------------------------------------------
    def stop_pod(self, sc: SyncContext, now: float) -> None:
        """Graceful deletion: stop the containers, then remove the pod (unless finalizers hold it)."""
        for c in sc.pr.all_containers():
            if c.phase == containers.RUNNING and c.run is not None:
                containers.kill(sc, c, now, f"Stopping container {c.name}")
            c.phase, c.next_at = (containers.DONE if c.deaths else c.phase), None
        meta = sc.pod["metadata"]
        if meta.get("finalizers"):
            self._write_status(sc, now)
            return
        if sc.cluster.store.find(PODS, sc.namespace, sc.pr.name) is not None:
            sc.cluster.store.delete(PODS, sc.namespace, sc.pr.name)
        sc.cluster.runtime.drop(sc.pr.uid)

    def forget(self, cluster: Any, pr: PodRuntime, now: float) -> None:
        """The pod is gone from the API: report its running containers stopped and drop its state."""
        ns = cluster.store.find(NAMESPACES, "", pr.namespace)
        alive = ns is not None and not ns["metadata"].get("deletionTimestamp")
        for c in pr.all_containers():
            if c.phase == containers.RUNNING and alive:
                cluster.events.record(_stub(pr), "Normal", "Killing", f"Stopping container {c.name}", "kubelet",
                                      host=pr.node, field_path=f"spec.{'initContainers' if c.init else 'containers'}"
                                                               f"{{{c.name}}}")
        cluster.runtime.drop(pr.uid)
