"""Job controller (plus the TTL-after-finished cleanup): run pods to completion, count outcomes.

Non-indexed Jobs: keep up to ``parallelism`` pods active until ``completions`` succeed; failed pods
are replaced after an exponential back-off (10 s doubling, capped) until ``backoffLimit`` is passed.
Outcomes are counted once per pod, so deleting a finished pod does not undo its count.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ApiError
from ..resources import JOBS, PODS
from ..store import Obj
from ..tree import clone
from .common import (api_delete, being_deleted, controller_of, create_pod, is_pod_active, is_pod_ready,
                     namespace_terminating, now_ts, pod_from_template, pod_phase, selector_matches,
                     sim_seconds, write)
from .replicaset import pods_to_delete

COMPONENT = "job-controller"
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID = "controller-uid"
LEGACY_JOB_NAME = "job-name"
POD_BACKOFF_S = 10.0
POD_BACKOFF_MAX_S = 600.0
BACKOFF_MESSAGE = "Job has reached the specified backoff limit"
DEADLINE_MESSAGE = "Job was active longer than specified deadline"


@dataclass
class _Ledger:
    """Pods whose outcome has been counted (the real controller uses a tracking finalizer)."""

    succeeded: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)
    base_succeeded: int = 0
    base_failed: int = 0
    last_failure_s: float | None = None
    consecutive_failures: int = 0


def finished_condition(job: Obj) -> str | None:
    """"Complete" or "Failed" when the job is finished (IsJobFinished)."""
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond.get("type") in ("Complete", "Failed") and cond.get("status") == "True":
            return cond["type"]
    return None


def _condition(type_: str, status: str, reason: str, message: str, now: str) -> dict:
    cond = {"type": type_, "status": status, "lastProbeTime": now, "lastTransitionTime": now}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    return cond


class JobController:
    name = COMPONENT

    def __init__(self) -> None:
        self._ledgers: dict[str, _Ledger] = {}

    def reconcile(self, cluster, namespace: str) -> None:
        if not namespace:
            return
        for job in cluster.store.list(JOBS, namespace):
            if not being_deleted(job):
                self._sync(cluster, job)

    # -- one job ---------------------------------------------------------------------------
    def _sync(self, cluster, stored: Obj) -> None:
        job = self._ensure_selector(cluster, stored)
        if finished_condition(job):
            self._ttl(cluster, job)
            return
        spec = job.get("spec") or {}
        selector = spec.get("selector")
        pods = [p for p in cluster.store.list(PODS, job["metadata"]["namespace"])
                if _owned(p, job) and selector_matches(selector, p["metadata"].get("labels"))]
        ledger = self._ledger(job, pods)
        now_s = cluster.now_s()
        self._count(ledger, pods, now_s)
        status = clone(job.get("status") or {})
        now = now_ts(cluster)
        suspended = bool(spec.get("suspend"))
        self._suspension(cluster, job, status, suspended, now)
        if not suspended and not status.get("startTime"):
            status["startTime"] = now
        active = [p for p in pods if is_pod_active(p)]
        succeeded = ledger.base_succeeded + len(ledger.succeeded)
        failed = ledger.base_failed + len(ledger.failed)
        completions = spec.get("completions", None if "parallelism" in spec else 1)
        parallelism = int(spec.get("parallelism", 1))
        failure = self._failure_reason(cluster, job, status, active, failed, suspended)
        if failure is not None:
            reason, message = failure
            failed += self._delete(cluster, job, active)
            active = []
            status["conditions"] = (status.get("conditions") or []) + [
                _condition("FailureTarget", "True", reason, message, now),
                _condition("Failed", "True", reason, message, now)]
            cluster.events.record(job, "Warning", reason, message, COMPONENT)
        elif (completions is not None and succeeded >= int(completions)) or (
                completions is None and succeeded > 0 and not active):
            self._delete(cluster, job, active)
            active = []
            msg = "Reached expected number of succeeded pods"
            status["conditions"] = (status.get("conditions") or []) + [
                _condition("SuccessCriteriaMet", "True", "CompletionsReached", msg, now),
                _condition("Complete", "True", "CompletionsReached", msg, now)]
            status["completionTime"] = now
            cluster.events.record(job, "Normal", "Completed", "Job completed", COMPONENT)
        else:
            if suspended:
                want = 0
            elif completions is None:
                want = 0 if succeeded > 0 else parallelism
            else:
                want = max(min(parallelism, int(completions) - succeeded), 0)
            active = self._manage(cluster, job, active, want, ledger, now_s)
        self._write_status(cluster, job, status, active, succeeded, failed)

    def _ensure_selector(self, cluster, job: Obj) -> Obj:
        """The API server's generated selector and pod labels (needs the uid, so done after create)."""
        spec = job.get("spec") or {}
        if spec.get("selector") or spec.get("manualSelector"):
            return job
        m = job["metadata"]
        uid, name = m["uid"], m["name"]
        updated = clone(job)
        uspec = updated.setdefault("spec", {})
        uspec["selector"] = {"matchLabels": {CONTROLLER_UID: uid}}
        tmeta = uspec.setdefault("template", {}).setdefault("metadata", {})
        tmeta["labels"] = dict(tmeta.get("labels") or {}, **{
            CONTROLLER_UID: uid, JOB_NAME: name, LEGACY_CONTROLLER_UID: uid, LEGACY_JOB_NAME: name})
        return write(cluster, JOBS, updated)

    def _ledger(self, job: Obj, pods: list[Obj]) -> _Ledger:
        uid = job["metadata"]["uid"]
        ledger = self._ledgers.get(uid)
        if ledger is None:
            status = job.get("status") or {}
            succ = {p["metadata"]["uid"] for p in pods if pod_phase(p) == "Succeeded"}
            fail = {p["metadata"]["uid"] for p in pods if pod_phase(p) == "Failed"}
            ledger = _Ledger(succ, fail, max(int(status.get("succeeded") or 0) - len(succ), 0),
                             max(int(status.get("failed") or 0) - len(fail), 0))
            self._ledgers[uid] = ledger
        return ledger

    @staticmethod
    def _count(ledger: _Ledger, pods: list[Obj], now_s: float) -> None:
        for pod in pods:
            uid, phase = pod["metadata"]["uid"], pod_phase(pod)
            if phase == "Succeeded" and uid not in ledger.succeeded:
                ledger.succeeded.add(uid)
                ledger.consecutive_failures = 0
            elif phase == "Failed" and uid not in ledger.failed:
                ledger.failed.add(uid)
                ledger.last_failure_s = now_s
                ledger.consecutive_failures += 1

    def _suspension(self, cluster, job: Obj, status: dict, suspended: bool, now: str) -> None:
        conds = status.get("conditions") or []
        current = next((c for c in conds if c.get("type") == "Suspended"), None)
        was = current is not None and current.get("status") == "True"
        if suspended == was:
            return
        others = [c for c in conds if c.get("type") != "Suspended"]
        if suspended:
            others.append(_condition("Suspended", "True", "JobSuspended", "Job suspended", now))
            cluster.events.record(job, "Normal", "Suspended", "Job suspended", COMPONENT)
        else:
            others.append(_condition("Suspended", "False", "JobResumed", "Job resumed", now))
            status["startTime"] = now
            cluster.events.record(job, "Normal", "Resumed", "Job resumed", COMPONENT)
        status["conditions"] = others

    def _failure_reason(self, cluster, job: Obj, status: dict, active: list[Obj], failed: int,
                        suspended: bool) -> tuple[str, str] | None:
        spec = job.get("spec") or {}
        limit = int(spec.get("backoffLimit", 6))
        policy = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy", "Never")
        if failed > limit:
            return "BackoffLimitExceeded", BACKOFF_MESSAGE
        if policy == "OnFailure":
            restarts = sum(int(cs.get("restartCount") or 0) for p in active
                           for cs in ((p.get("status") or {}).get("containerStatuses") or []))
            if (limit == 0 and restarts > 0) or (limit > 0 and restarts >= limit):
                return "BackoffLimitExceeded", BACKOFF_MESSAGE
        deadline = spec.get("activeDeadlineSeconds")
        if deadline is not None and status.get("startTime") and not suspended:
            due = sim_seconds(cluster, status["startTime"]) + int(deadline)
            if cluster.now_s() >= due:
                return "DeadlineExceeded", DEADLINE_MESSAGE
            cluster.wake_at(job["metadata"]["namespace"], due)
        return None

    def _manage(self, cluster, job: Obj, active: list[Obj], want: int, ledger: _Ledger, now_s: float) -> list[Obj]:
        ns = job["metadata"]["namespace"]
        diff = len(active) - want
        if diff > 0:
            doomed = pods_to_delete(cluster, active, diff)
            self._delete(cluster, job, doomed)
            gone = {p["metadata"]["uid"] for p in doomed}
            return [p for p in active if p["metadata"]["uid"] not in gone]
        if diff == 0 or namespace_terminating(cluster, ns):
            return active
        if ledger.last_failure_s is not None and ledger.consecutive_failures:
            delay = _backoff(ledger.consecutive_failures)
            if now_s < ledger.last_failure_s + delay:
                cluster.wake_at(ns, ledger.last_failure_s + delay)
                return active
        template = (job.get("spec") or {}).get("template") or {}
        for _ in range(-diff):
            pod = pod_from_template(template, job, f"{job['metadata']['name']}-")
            try:
                created = create_pod(cluster, pod)
            except ApiError as err:
                cluster.events.record(job, "Warning", "FailedCreate", f"Error creating: {err.message}", COMPONENT)
                ledger.last_failure_s = now_s
                ledger.consecutive_failures += 1
                cluster.wake_at(ns, now_s + _backoff(ledger.consecutive_failures))
                break
            cluster.events.record(job, "Normal", "SuccessfulCreate", f"Created pod: {created['metadata']['name']}",
                                  COMPONENT)
            active.append(created)
        return active

    @staticmethod
    def _delete(cluster, job: Obj, pods: list[Obj]) -> int:
        for pod in pods:
            api_delete(cluster, PODS, pod)
            cluster.events.record(job, "Normal", "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}",
                                  COMPONENT)
        return len(pods)

    @staticmethod
    def _write_status(cluster, job: Obj, status: dict, active: list[Obj], succeeded: int, failed: int) -> None:
        out: dict = {}
        for key in ("conditions", "startTime", "completionTime"):
            if status.get(key):
                out[key] = status[key]
        for key, value in (("active", len(active)), ("succeeded", succeeded), ("failed", failed)):
            if value:
                out[key] = value
        out["uncountedTerminatedPods"] = {}
        out["ready"] = sum(1 for p in active if is_pod_ready(p))
        if out != (job.get("status") or {}):
            updated = clone(job)
            updated["status"] = out
            write(cluster, JOBS, updated)

    # -- ttl-after-finished ----------------------------------------------------------------
    def _ttl(self, cluster, job: Obj) -> None:
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        if ttl is None:
            return
        status = job.get("status") or {}
        finished_at = status.get("completionTime") or next(
            (c.get("lastTransitionTime") for c in status.get("conditions") or []
             if c.get("type") in ("Complete", "Failed") and c.get("status") == "True"), None)
        if not finished_at:
            return
        due = sim_seconds(cluster, finished_at) + int(ttl)
        if cluster.now_s() < due:
            cluster.wake_at(job["metadata"]["namespace"], due)
            return
        from .gc import delete_with_propagation

        try:
            delete_with_propagation(cluster, JOBS, job["metadata"]["namespace"], job["metadata"]["name"],
                                    "Foreground")
        except ApiError:
            pass
        self._ledgers.pop(job["metadata"]["uid"], None)


def _backoff(failures: int) -> float:
    """Delay before the next pod after ``failures`` consecutive failed pods or rejected creates."""
    return min(POD_BACKOFF_S * 2 ** (failures - 1), POD_BACKOFF_MAX_S)


def _owned(pod: Obj, job: Obj) -> bool:
    ref = controller_of(pod)
    return ref is not None and ref.get("uid") == job["metadata"]["uid"]
