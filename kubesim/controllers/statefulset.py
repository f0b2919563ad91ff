"""StatefulSet controller: pods with stable names ``<set>-<ordinal>``, created and replaced in order.

What it does, as the real controller does it:
- one ControllerRevision per distinct pod template (``<set>-<hash>``, revision numbers like a
  Deployment's; going back to an old template reuses its revision with a new number, which is what
  ``kubectl rollout history|undo sts`` read and apply); pods carry ``controller-revision-hash``;
- ``OrderedReady`` (default): ordinal *n* is created only once 0..n-1 are Running and Ready; scale
  down removes the highest ordinal first, one at a time. ``Parallel`` creates and removes at once;
- ``RollingUpdate``: once every pod is Running and Ready, the highest ordinal >= ``partition``
  still on the old revision is deleted and recreated on the new one, one at a time; ``OnDelete``
  only uses the new template for pods somebody deleted;
- ``volumeClaimTemplates`` become PVCs ``<claim>-<pod>``, created before their pod and bound at
  once (kubesim has a default dynamic provisioner); they outlive the set unless
  ``persistentVolumeClaimRetentionPolicy`` says Delete;
- status (replicas, ready/available/current/updated, currentRevision/updateRevision) as
  ``kubectl rollout status sts`` reads it, and the controller's events.
"""

from __future__ import annotations

import re

from .. import objects
from ..errors import ApiError
from ..resources import PERSISTENTVOLUMECLAIMS as CLAIMS
from ..resources import PODS, STATEFULSETS
from ..store import Obj
from ..tree import clone
from .common import (api_delete, being_deleted, controller_of, controller_ref, create_pod, is_pod_ready,
                     namespace_terminating, pod_available_at, pod_from_template, pod_phase, selector_is_empty,
                     spec_replicas, write_status)
from .revisions import REVISION_LABEL, revision_of, sync_revisions, template_of, trim_revisions

COMPONENT = "statefulset-controller"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


def _running_and_ready(pod: Obj) -> bool:
    return pod_phase(pod) == "Running" and is_pod_ready(pod) and not being_deleted(pod)


class StatefulSetController:
    name = COMPONENT

    def reconcile(self, cluster, namespace: str) -> None:
        if not namespace:
            return
        sets = cluster.store.list(STATEFULSETS, namespace)
        if sets:
            pods = cluster.store.list(PODS, namespace)
            for sts in sets:
                if not selector_is_empty((sts.get("spec") or {}).get("selector")):
                    _SetSync(cluster, sts, pods).run()


class _SetSync:
    """One pass over one StatefulSet."""

    def __init__(self, cluster, sts: Obj, pods: list[Obj]):
        self.cluster, self.sts = cluster, sts
        self.ns, self.name = sts["metadata"]["namespace"], sts["metadata"]["name"]
        self.spec = sts.get("spec") or {}
        strategy = self.spec.get("updateStrategy") or {}
        self.rolling = strategy.get("type", "RollingUpdate") == "RollingUpdate"
        self.partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        ordinal = re.compile(rf"^{re.escape(self.name)}-(\d+)$")
        self.pods: dict[int, Obj] = {}  # ordinal -> pod this set controls (terminating ones too)
        for pod in pods:
            match = ordinal.match(pod["metadata"]["name"])
            ref = controller_of(pod)
            if match and ref is not None and ref.get("uid") == sts["metadata"]["uid"]:
                self.pods[int(match.group(1))] = pod

    def event(self, reason: str, message: str, type_: str = "Normal") -> None:
        self.cluster.events.record(self.sts, type_, reason, message, COMPONENT)

    # -- the pass ----------------------------------------------------------------------------
    def run(self) -> None:
        current, update = self.revisions()
        if not being_deleted(self.sts) and not namespace_terminating(self.cluster, self.ns):
            self.manage(current, update)
        self.update_status(current, update)

    def manage(self, current: Obj, update: Obj) -> None:
        replicas = spec_replicas(self.sts)
        ordered = self.spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        for ordinal in range(replicas):
            pod = self.pods.get(ordinal)
            if pod is not None and pod_phase(pod) in ("Failed", "Succeeded") and not being_deleted(pod):
                self.delete(ordinal)
                pod = None
            if pod is None:
                if ordinal in self.pods:  # still terminating: its name is not free yet
                    if ordered:
                        return
                    continue
                self.create(ordinal, current, update)
                if ordered:
                    return  # the next ordinal waits until this one is Running and Ready
                continue
            if ordered and not _running_and_ready(pod):
                return
        condemned = sorted((o for o in self.pods if o >= replicas), reverse=True)
        for ordinal in condemned:
            if ordered and (being_deleted(self.pods[ordinal]) or not self._all_ready(replicas)):
                return
            self.delete(ordinal)
            if ordered:
                return
        self.roll(replicas, update)

    def _all_ready(self, replicas: int) -> bool:
        return all(o in self.pods and _running_and_ready(self.pods[o]) for o in range(replicas))

    def roll(self, replicas: int, update: Obj) -> None:
        """RollingUpdate: replace the highest out-of-date ordinal at or above the partition, one at a time."""
        if not self.rolling or not self._all_ready(replicas):
            return
        for ordinal in range(replicas - 1, self.partition - 1, -1):
            if revision_of(self.pods[ordinal]) != update["metadata"]["name"]:
                self.delete(ordinal)
                return

    # -- pods and claims ---------------------------------------------------------------------
    def create(self, ordinal: int, current: Obj, update: Obj) -> None:
        revision = current if ordinal < self.partition else update
        pod_name = f"{self.name}-{ordinal}"
        template = template_of(revision)
        pod = pod_from_template(template, self.sts, "")
        meta = pod["metadata"]
        meta.pop("generateName")
        meta["name"] = pod_name
        meta["labels"] = {**(meta.get("labels") or {}), REVISION_LABEL: revision["metadata"]["name"],
                          POD_NAME_LABEL: pod_name, POD_INDEX_LABEL: str(ordinal)}
        pod["spec"]["hostname"] = pod_name
        if self.spec.get("serviceName"):
            pod["spec"]["subdomain"] = self.spec["serviceName"]
        try:
            self.claims_for(pod)
            created = create_pod(self.cluster, pod)
        except ApiError as err:
            self.event("FailedCreate", f"create Pod {pod_name} in StatefulSet {self.name} failed error: "
                                       f"{err.message}", "Warning")
            return
        self.pods[ordinal] = created
        self.event("SuccessfulCreate", f"create Pod {pod_name} in StatefulSet {self.name} successful")

    def claims_for(self, pod: Obj) -> None:
        """Create the pod's missing PVCs (bound at once) and point its volumes at them."""
        volumes = [v for v in pod["spec"].get("volumes") or [] if isinstance(v, dict)]
        policy = self.spec.get("persistentVolumeClaimRetentionPolicy") or {}
        for template in self.spec.get("volumeClaimTemplates") or []:
            claim_name = f"{template['metadata']['name']}-{pod['metadata']['name']}"
            volumes = [v for v in volumes if v.get("name") != template["metadata"]["name"]]
            volumes.append({"name": template["metadata"]["name"], "persistentVolumeClaim": {"claimName": claim_name}})
            if self.cluster.store.find(CLAIMS, self.ns, claim_name) is not None:
                continue
            claim_spec = clone(template.get("spec") or {})
            labels = dict((self.spec.get("selector") or {}).get("matchLabels") or {})
            claim: Obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                          "metadata": {"name": claim_name, "namespace": self.ns, "labels": labels},
                          "spec": claim_spec}
            if policy.get("whenDeleted") == "Delete":
                claim["metadata"]["ownerReferences"] = [dict(controller_ref(self.sts), controller=False)]
            claim["status"] = {"phase": "Bound", "accessModes": list(claim_spec.get("accessModes") or []),
                               "capacity": dict((claim_spec.get("resources") or {}).get("requests") or {})}
            self.cluster.store.create(CLAIMS, objects.prepare(CLAIMS, claim, None))
            self.event("SuccessfulCreate", f"create Claim {claim_name} Pod {pod['metadata']['name']} in "
                                           f"StatefulSet {self.name} success")
        if volumes:
            pod["spec"]["volumes"] = volumes

    def delete(self, ordinal: int) -> None:
        pod = self.pods[ordinal]
        api_delete(self.cluster, PODS, pod)
        self.event("SuccessfulDelete", f"delete Pod {pod['metadata']['name']} in StatefulSet {self.name} successful")
        gone = self.cluster.store.find(PODS, self.ns, pod["metadata"]["name"])
        if gone is None:
            del self.pods[ordinal]
        else:
            self.pods[ordinal] = gone

    # -- revisions ---------------------------------------------------------------------------
    def revisions(self) -> tuple[Obj, Obj]:
        """(current, update): update matches today's template, current is the one status names (update
        when there is none); history beyond what pods and status use is trimmed."""
        owned, update = sync_revisions(self.cluster, self.sts)
        status_current = (self.sts.get("status") or {}).get("currentRevision")
        current = next((r for r in owned if r["metadata"]["name"] == status_current), update)
        in_use = {current["metadata"]["name"], update["metadata"]["name"]}
        in_use |= {revision_of(p) for p in self.pods.values()}
        trim_revisions(self.cluster, self.sts, owned, in_use)
        return current, update

    # -- status ------------------------------------------------------------------------------
    def update_status(self, current: Obj, update: Obj) -> None:
        sts = self.sts
        now, min_ready = self.cluster.now_s(), int(self.spec.get("minReadySeconds") or 0)
        live = [p for p in self.pods.values() if not being_deleted(p)]
        counts = {"replicas": len(live), "readyReplicas": 0, "availableReplicas": 0,
                  "currentReplicas": 0, "updatedReplicas": 0}
        next_available = None
        for pod in live:
            if _running_and_ready(pod):
                counts["readyReplicas"] += 1
                at = pod_available_at(self.cluster, pod, min_ready)
                if at is not None and at <= now:
                    counts["availableReplicas"] += 1
                elif at is not None:
                    next_available = at if next_available is None else min(next_available, at)
            revision = revision_of(pod)
            counts["currentReplicas"] += revision == current["metadata"]["name"]
            counts["updatedReplicas"] += revision == update["metadata"]["name"]
        if next_available is not None:
            self.cluster.wake_at(self.ns, next_available)
        current_name = current["metadata"]["name"]
        if self.rolling and counts["updatedReplicas"] == counts["replicas"] == counts["readyReplicas"]:
            current_name, counts["currentReplicas"] = update["metadata"]["name"], counts["updatedReplicas"]
        status = {**(sts.get("status") or {}), **counts,
                  "observedGeneration": sts["metadata"].get("generation", 1),
                  "currentRevision": current_name, "updateRevision": update["metadata"]["name"],
                  "collisionCount": (sts.get("status") or {}).get("collisionCount", 0)}
        write_status(self.cluster, STATEFULSETS, sts, status,
                     omit_if_zero=("readyReplicas", "availableReplicas", "currentReplicas", "updatedReplicas"))
