"""Deployment controller: owns ReplicaSets per pod template and rolls between them.

Follows kube-controller-manager's sync loop: claim ReplicaSets, honour pause and scaling events,
then roll (RollingUpdate with surge/unavailable fenceposts, or Recreate), clean up old revisions and
write status with the Available/Progressing conditions that ``kubectl rollout status`` reads.
"""

from __future__ import annotations


from .. import objects
from ..errors import ApiError
from ..resources import DEPLOYMENTS, REPLICASETS
from ..store import Obj
from . import rollout as R
from . import strategies
from ..tree import clone
from .common import (POD_TEMPLATE_HASH, api_delete, being_deleted, controller_of, controller_ref,
                     is_controlled_by, namespace_terminating, normalised_template, now_ts,
                     selector_is_empty, selector_matches, sim_seconds, spec_replicas, template_equal, template_hash,
                     working_copy, write)

COMPONENT = "deployment-controller"


class DeploymentController:
    name = COMPONENT

    def reconcile(self, cluster, namespace: str) -> None:
        if not namespace:
            return
        for stored in cluster.store.list(DEPLOYMENTS, namespace):
            if not being_deleted(stored):
                _DeploymentSync(cluster, stored).run()


class _DeploymentSync:
    """One syncDeployment pass over a single Deployment (a working copy in ``self.d``)."""

    def __init__(self, cluster, stored: Obj):
        self.cluster = cluster
        self.store = cluster.store
        self.d = working_copy(stored)
        self.ns = stored["metadata"]["namespace"]
        self.now = now_ts(cluster)

    # -- entry -----------------------------------------------------------------------------
    def run(self) -> None:
        d = self.d
        selector = (d.get("spec") or {}).get("selector")
        if selector_is_empty(selector):
            self.cluster.events.record(d, "Warning", "SelectingAll",
                                       "This deployment is selecting all pods. A non-empty selector is required.",
                                       COMPONENT)
            status = dict(d.get("status") or {})
            status["observedGeneration"] = d["metadata"].get("generation", 1)
            self.save(status)
            return
        rs_list = self.claim_replica_sets()
        self.check_paused_conditions()
        new, old = self.split(rs_list)
        if (d.get("spec") or {}).get("paused") or self.is_scaling_event(new, old):
            self.sync_scale(new, old)
        elif R.is_rolling(d):
            strategies.rolling_update(self, new, old)
        else:
            strategies.recreate(self, new, old)

    # -- writes ----------------------------------------------------------------------------
    def save(self, status: dict | None = None) -> None:
        """Write the Deployment's annotations/status (no-op when unchanged)."""
        if status is not None:
            self.d["status"] = status
        self.d = working_copy(write(self.cluster, DEPLOYMENTS, self.d))

    def fresh(self, rs: Obj | None) -> Obj | None:
        if rs is None:
            return None
        return self.store.find(REPLICASETS, self.ns, rs["metadata"]["name"]) or rs

    def claim_replica_sets(self) -> list[Obj]:
        """getReplicaSetsForDeployment: owned ones that still match, plus adopted orphans."""
        d = self.d
        selector = d["spec"]["selector"]
        owned: list[Obj] = []
        for rs in self.store.list(REPLICASETS, self.ns):
            labels = rs["metadata"].get("labels")
            ref = controller_of(rs)
            if ref is not None and ref.get("uid") == d["metadata"]["uid"]:
                if selector_matches(selector, labels):
                    owned.append(rs)
                else:
                    released = clone(rs)
                    refs = [r for r in rs["metadata"]["ownerReferences"] if r.get("uid") != d["metadata"]["uid"]]
                    if refs:
                        released["metadata"]["ownerReferences"] = refs
                    else:
                        released["metadata"].pop("ownerReferences")
                    write(self.cluster, REPLICASETS, released)
            elif ref is None and not being_deleted(rs) and selector_matches(selector, labels):
                adopted = clone(rs)
                adopted["metadata"].setdefault("ownerReferences", []).append(controller_ref(d))
                owned.append(write(self.cluster, REPLICASETS, adopted))
        return owned

    def event(self, reason: str, message: str, type_: str = "Normal") -> None:
        self.cluster.events.record(self.d, type_, reason, message, COMPONENT)

    # -- paused ----------------------------------------------------------------------------
    def check_paused_conditions(self) -> None:
        if R.progress_deadline(self.d) is None:
            return
        status = clone(self.d.get("status") or {})
        cond = R.get_condition(status, "Progressing")
        if cond and cond.get("reason") == R.TIMED_OUT:
            return
        paused = bool(self.d["spec"].get("paused"))
        paused_cond = cond is not None and cond.get("reason") == R.PAUSED
        if paused and not paused_cond:
            R.set_condition(status, R.new_condition("Progressing", "Unknown", R.PAUSED, "Deployment is paused",
                                                    self.now))
        elif not paused and paused_cond:
            R.set_condition(status, R.new_condition("Progressing", "Unknown", R.RESUMED, "Deployment is resumed",
                                                    self.now))
        else:
            return
        self.save(status)

    # -- new / old replica sets ------------------------------------------------------------
    def split(self, rs_list: list[Obj]) -> tuple[Obj | None, list[Obj]]:
        """getAllReplicaSetsAndSyncRevision: (new RS or None, old RSs), syncing the new one's revision."""
        wanted = normalised_template(self.d)
        existing = next((rs for rs in R.by_creation(rs_list) if normalised_template(rs) == wanted), None)
        old = [rs for rs in rs_list if existing is None or rs["metadata"]["uid"] != existing["metadata"]["uid"]]
        if existing is not None:
            return self.sync_existing_new(existing, str(R.max_revision(old) + 1)), old
        return None, old

    def ensure_new(self, new: Obj | None, old: list[Obj]) -> Obj | None:
        return new if new is not None else self.create_new(old, str(R.max_revision(old) + 1))

    def sync_existing_new(self, existing: Obj, new_revision: str) -> Obj:
        rs = working_copy(existing)
        changed = R.set_new_rs_annotations(self.d, rs, new_revision, exists=True)
        mrs = self.d["spec"].get("minReadySeconds", 0) or 0
        if (rs["spec"].get("minReadySeconds", 0) or 0) != mrs:
            rs["spec"] = dict(rs["spec"], minReadySeconds=mrs)
            changed = True
        if changed:
            existing = write(self.cluster, REPLICASETS, rs)
        needs = self.set_revision(existing["metadata"].get("annotations", {}).get(R.REVISION))
        status = clone(self.d.get("status") or {})
        if R.progress_deadline(self.d) is not None and R.get_condition(status, "Progressing") is None:
            R.set_condition(status, R.new_condition("Progressing", "True", R.FOUND_NEW_RS,
                                                    f'Found new replica set "{existing["metadata"]["name"]}"',
                                                    self.now))
            needs = True
        if needs:
            self.save(status)
        return existing

    def set_revision(self, revision: str | None) -> bool:
        if revision is None:
            return False
        ann = self.d["metadata"].setdefault("annotations", {})
        if ann.get(R.REVISION) == revision:
            return False
        ann[R.REVISION] = revision
        return True

    def create_new(self, old: list[Obj], new_revision: str) -> Obj | None:
        d = self.d
        if namespace_terminating(self.cluster, self.ns):
            return None
        status = clone(d.get("status") or {})
        template = clone(d["spec"]["template"])
        h = template_hash(template, status.get("collisionCount"))
        template.setdefault("metadata", {})
        template["metadata"]["labels"] = dict(template["metadata"].get("labels") or {}, **{POD_TEMPLATE_HASH: h})
        selector = clone(d["spec"]["selector"])
        selector["matchLabels"] = dict(selector.get("matchLabels") or {}, **{POD_TEMPLATE_HASH: h})
        rs: Obj = {
            "apiVersion": REPLICASETS.api_version,
            "kind": REPLICASETS.kind,
            "metadata": {"name": f"{d['metadata']['name']}-{h}", "namespace": self.ns,
                         "labels": dict(template["metadata"]["labels"]), "ownerReferences": [controller_ref(d)]},
            "spec": {"replicas": 0, "selector": selector, "template": template},
        }
        if d["spec"].get("minReadySeconds"):
            rs["spec"]["minReadySeconds"] = d["spec"]["minReadySeconds"]
        count = R.new_rs_new_replicas(d, old + [rs], rs)
        rs["spec"]["replicas"] = count
        R.set_new_rs_annotations(d, rs, new_revision, exists=False)
        already = False
        try:
            created = self.store.create(REPLICASETS, objects.prepare(REPLICASETS, rs, None))
        except ApiError as err:
            if err.code != 409:
                self.event("FailedCreate", f"Failed to create new replica set \"{rs['metadata']['name']}\": "
                           f"{err.message}", "Warning")
                return None
            clash = self.store.find(REPLICASETS, self.ns, rs["metadata"]["name"])
            if clash is not None and is_controlled_by(clash, d) and template_equal(
                    clash["spec"].get("template"), d["spec"]["template"]):
                created, already = clash, True
            else:
                status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
                self.save(status)
                return None
        needs = self.set_revision(new_revision)
        if not already and count > 0:
            self.event("ScalingReplicaSet", f"Scaled up replica set {created['metadata']['name']} to {count}")
        if not already and R.progress_deadline(d) is not None:
            R.set_condition(status, R.new_condition("Progressing", "True", R.NEW_RS_CREATED,
                                                    f'Created new replica set "{created["metadata"]["name"]}"',
                                                    self.now))
            needs = True
        if needs:
            self.save(status)
        return created

    # -- scaling ---------------------------------------------------------------------------
    def scale_rs(self, rs: Obj, new_scale: int, op: str) -> tuple[bool, Obj]:
        """scaleReplicaSet: set size and replica annotations; event only when the size changes."""
        size_changes = R.spec_replicas(rs, 0) != new_scale
        updated = working_copy(rs)
        desired = spec_replicas(self.d)
        ann_changes = R.set_replicas_annotations(updated, desired, desired + R.max_surge(self.d))
        if not (size_changes or ann_changes):
            return False, rs
        updated["spec"] = dict(updated["spec"], replicas=new_scale)
        stored = write(self.cluster, REPLICASETS, updated)
        if size_changes:
            self.event("ScalingReplicaSet", f"Scaled {op} replica set {rs['metadata']['name']} to {new_scale}")
        return size_changes, stored

    def scale_and_record(self, rs: Obj, new_scale: int) -> tuple[bool, Obj]:
        current = R.spec_replicas(rs, 0)
        if current == new_scale:
            return False, rs
        return self.scale_rs(rs, new_scale, "up" if current < new_scale else "down")

    def is_scaling_event(self, new: Obj | None, old: list[Obj]) -> bool:
        desired = spec_replicas(self.d)
        for rs in R.active(old + [new]):
            wanted = R.annotation_int(rs, R.DESIRED_REPLICAS)
            if wanted is not None and wanted != desired:
                return True
        return False

    def sync_scale(self, new: Obj | None, old: list[Obj]) -> None:
        """dc.sync: scaling (and paused) path, status without progress estimation."""
        strategies.proportional_scale(self, new, old)
        if self.d["spec"].get("paused"):
            self.cleanup([self.fresh(rs) for rs in old])
        all_rss = [self.fresh(rs) for rs in old + [new] if rs]
        status = R.calculate_status(self.d, all_rss, self.fresh(new), self.now)
        if status != (self.d.get("status") or {}):
            self.save(status)

    # -- rolling update --------------------------------------------------------------------
    # -- cleanup and status ----------------------------------------------------------------
    def cleanup(self, old: list[Obj]) -> None:
        """Delete the oldest zero-sized ReplicaSets beyond revisionHistoryLimit."""
        limit = self.d["spec"].get("revisionHistoryLimit", 10)
        if limit is None:
            return
        cleanable = [rs for rs in old if rs and not being_deleted(rs)]
        diff = len(cleanable) - int(limit)
        if diff <= 0:
            return
        cleanable.sort(key=lambda rs: (R.revision_of(rs), rs["metadata"].get("creationTimestamp", "")))
        for rs in cleanable[:diff]:
            st = rs.get("status") or {}
            if (int(st.get("replicas") or 0) != 0 or R.spec_replicas(rs, 0) != 0
                    or rs["metadata"].get("generation", 1) > int(st.get("observedGeneration") or 0)):
                continue
            api_delete(self.cluster, REPLICASETS, rs)

    def sync_rollout_status(self, old: list[Obj], new: Obj | None) -> None:
        d = self.d
        new = self.fresh(new)
        all_rss = [self.fresh(rs) for rs in old] + ([new] if new else [])
        status = R.calculate_status(d, all_rss, new, self.now)
        deadline = R.progress_deadline(d)
        if deadline is None:
            R.remove_condition(status, "Progressing")
        current = R.get_condition(d.get("status") or {}, "Progressing")
        complete_before = (int(status.get("replicas") or 0) == int(status.get("updatedReplicas") or 0)
                           and current is not None and current.get("reason") == R.NEW_RS_AVAILABLE)
        subject = f'ReplicaSet "{new["metadata"]["name"]}"' if new else f'Deployment "{d["metadata"]["name"]}"'
        if deadline is not None and not complete_before:
            if R.deployment_complete(d, status):
                R.set_condition(status, R.new_condition("Progressing", "True", R.NEW_RS_AVAILABLE,
                                                        f"{subject} has successfully progressed.", self.now))
            elif R.deployment_progressing(d, status):
                cond = R.new_condition("Progressing", "True", R.RS_UPDATED, f"{subject} is progressing.", self.now)
                if current is not None:
                    if current.get("status") == "True":
                        cond["lastTransitionTime"] = current.get("lastTransitionTime")
                    R.remove_condition(status, "Progressing")
                R.set_condition(status, cond)
            elif self.timed_out(status, deadline):
                R.set_condition(status, R.new_condition("Progressing", "False", R.TIMED_OUT,
                                                        f"{subject} has timed out progressing.", self.now))
        failure = _replica_failure(all_rss, new)
        if failure is not None:
            R.set_condition(status, failure)
        else:
            R.remove_condition(status, "ReplicaFailure")
        if status == (d.get("status") or {}):
            self.requeue_if_stuck(status, deadline)
            return
        self.save(status)

    def timed_out(self, status: dict, deadline: int) -> bool:
        cond = R.get_condition(status, "Progressing")
        if cond is None or cond.get("reason") == R.NEW_RS_AVAILABLE:
            return False
        if cond.get("reason") == R.TIMED_OUT:
            return True
        last = cond.get("lastUpdateTime")
        return bool(last) and sim_seconds(self.cluster, last) + deadline < self.cluster.now_s()

    def requeue_if_stuck(self, status: dict, deadline: int | None) -> None:
        cond = R.get_condition(status, "Progressing")
        if (deadline is None or cond is None or cond.get("reason") in (R.TIMED_OUT, R.NEW_RS_AVAILABLE)
                or R.deployment_complete(self.d, status) or not cond.get("lastUpdateTime")):
            return
        due = sim_seconds(self.cluster, cond["lastUpdateTime"]) + deadline
        self.cluster.wake_at(self.ns, max(due, self.cluster.now_s()) + 1)


def _replica_failure(all_rss: list[Obj], new: Obj | None) -> dict | None:
    """Surface a ReplicaSet's ReplicaFailure condition (the new RS's first) on the Deployment."""
    for rs in ([new] if new else []) + all_rss:
        for cond in (rs.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "ReplicaFailure":
                ltt = cond.get("lastTransitionTime")
                return {"type": "ReplicaFailure", "status": cond.get("status", "True"), "lastUpdateTime": ltt,
                        "lastTransitionTime": ltt, "reason": cond.get("reason", ""),
                        "message": cond.get("message", "")}
    return None
