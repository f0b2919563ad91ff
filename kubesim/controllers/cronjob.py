"""CronJob controller: creates a Job at each schedule time on the simulated clock.

Jobs are named ``<cronjob>-<scheduled unix minutes>`` so a time is never run twice. Honours
``suspend``, ``startingDeadlineSeconds``, ``concurrencyPolicy`` (Allow/Forbid/Replace), ``timeZone``
and the successful/failed history limits, and asks the cluster to wake it at the next schedule.
"""

from __future__ import annotations

from datetime import datetime, timezone

from .. import objects
from ..clock import parse_rfc3339, rfc3339
from ..errors import ApiError
from ..resources import CRONJOBS, JOBS
from ..store import Obj
from ..tree import clone
from .common import being_deleted, controller_ref, is_controlled_by, namespace_terminating, sim_seconds, write
from .cron import CronSchedule, check_time_zone, parse_schedule
from .gc import delete_with_propagation
from .jobs import finished_condition

COMPONENT = "cronjob-controller"
SCHEDULED_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"
MAX_MISSED = 100


class CronJobController:
    name = COMPONENT

    def __init__(self) -> None:
        self._unexpected: set[str] = set()  # job uids already reported as UnexpectedJob
        self._reported: set[tuple[str, str, str]] = set()  # (cronjob uid, reason, schedule time) already told

    def reconcile(self, cluster, namespace: str) -> None:
        if not namespace:
            return
        jobs = cluster.store.list(JOBS, namespace)
        for cj in cluster.store.list(CRONJOBS, namespace):
            _CronJobSync(self, cluster, cj, [j for j in jobs if is_controlled_by(j, cj)]).run()


class _CronJobSync:
    def __init__(self, controller: CronJobController, cluster, cj: Obj, jobs: list[Obj]):
        self.controller = controller
        self.cluster = cluster
        self.cj = clone(cj)
        self.jobs = jobs
        self.ns = cj["metadata"]["namespace"]
        self.status = clone(cj.get("status") or {})
        self.now = cluster.clock.now()

    def event(self, type_: str, reason: str, message: str) -> None:
        self.cluster.events.record(self.cj, type_, reason, message, COMPONENT)

    def event_once(self, scheduled: datetime, type_: str, reason: str, message: str) -> None:
        """Report a skipped schedule time once, not on every pass over the namespace."""
        key = (self.cj["metadata"]["uid"], reason, rfc3339(scheduled))
        if key not in self.controller._reported:
            self.controller._reported.add(key)
            self.event(type_, reason, message)

    def run(self) -> None:
        self.sync_active()
        if not being_deleted(self.cj):
            self.schedule()
        self.cleanup_history()
        self.save()

    def save(self) -> None:
        status = {k: v for k, v in self.status.items() if v not in (None, [], {})}
        if status != (self.cj.get("status") or {}):
            self.cj["status"] = status
            write(self.cluster, CRONJOBS, self.cj)

    # -- active list -----------------------------------------------------------------------
    def sync_active(self) -> None:
        active = list(self.status.get("active") or [])
        active_uids = {ref.get("uid") for ref in active}
        for job in self.jobs:
            uid, name = job["metadata"]["uid"], job["metadata"]["name"]
            finished = finished_condition(job)
            if uid not in active_uids and not finished:
                if uid not in self.controller._unexpected:
                    self.controller._unexpected.add(uid)
                    self.event("Warning", "UnexpectedJob",
                               f"Saw a job that the controller did not create or forgot: {name}")
            elif uid in active_uids and finished:
                active = [ref for ref in active if ref.get("uid") != uid]
                self.event("Normal", "SawCompletedJob", f"Saw completed job: {name}, status: {finished}")
            if finished == "Complete":
                done = (job.get("status") or {}).get("completionTime")
                last = self.status.get("lastSuccessfulTime")
                if done and (not last or parse_rfc3339(done) > parse_rfc3339(last)):
                    self.status["lastSuccessfulTime"] = done
        owned = {j["metadata"]["uid"] for j in self.jobs}
        for ref in list(active):
            if ref.get("uid") not in owned:
                active = [r for r in active if r.get("uid") != ref.get("uid")]
                self.event("Normal", "MissingJob", f"Active job went missing: {ref.get('name')}")
        self.status["active"] = active

    # -- scheduling ------------------------------------------------------------------------
    def schedule(self) -> None:
        spec = self.cj.get("spec") or {}
        if spec.get("suspend"):
            return
        tz = spec.get("timeZone")
        try:
            if tz:
                check_time_zone(tz)
        except ValueError:
            self.event("Warning", "UnknownTimeZone", f"invalid timeZone: {tz!r}: unknown time zone {tz}")
            return
        try:
            sched = parse_schedule(spec.get("schedule", ""))
        except ValueError as err:
            self.event("Warning", "UnparseableSchedule", f"unparseable schedule: {spec.get('schedule')!r} : {err}")
            return
        tz = tz or sched.tz
        self.wake_next(sched, tz)
        scheduled = self.most_recent_unmet(sched, tz)
        if scheduled is None:
            return
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None and (self.now - scheduled).total_seconds() > int(deadline):
            self.event_once(scheduled, "Warning", "MissSchedule",
                       f"Missed scheduled time to start a job: {scheduled.strftime('%a, %d %b %Y %H:%M:%S +0000')}")
            return
        name = job_name(self.cj, scheduled)
        active = self.status.get("active") or []
        if any(ref.get("name") == name for ref in active) or self.status.get("lastScheduleTime") == rfc3339(scheduled):
            return
        policy = spec.get("concurrencyPolicy", "Allow")
        if policy == "Forbid" and active:
            self.event_once(scheduled, "Normal", "JobAlreadyActive",
                       "Not starting job because prior execution is running and concurrency policy is Forbid")
            return
        if policy == "Replace":
            for ref in list(active):
                self.delete_job(ref.get("name"))
            self.status["active"] = []
        if namespace_terminating(self.cluster, self.ns):
            return
        try:
            job = objects.prepare(JOBS, self.job_from_template(name, scheduled, tz), None)
            created = self.cluster.store.create(JOBS, job)
        except ApiError as err:
            if err.code != 409:
                self.event("Warning", "FailedCreate", f"Error creating job: {err.message}")
            return
        self.event("Normal", "SuccessfulCreate", f"Created job {created['metadata']['name']}")
        m = created["metadata"]
        self.status["active"] = (self.status.get("active") or []) + [{
            "kind": "Job", "namespace": m["namespace"], "name": m["name"], "uid": m["uid"],
            "apiVersion": JOBS.api_version, "resourceVersion": m["resourceVersion"]}]
        self.status["lastScheduleTime"] = rfc3339(scheduled)

    def most_recent_unmet(self, sched: CronSchedule, tz: str | None) -> datetime | None:
        earliest_text = self.status.get("lastScheduleTime") or self.cj["metadata"].get("creationTimestamp")
        earliest = parse_rfc3339(earliest_text) if earliest_text else self.now
        deadline = (self.cj.get("spec") or {}).get("startingDeadlineSeconds")
        if deadline is not None:
            window_start = self.now.timestamp() - int(deadline)
            if window_start > earliest.timestamp():
                earliest = datetime.fromtimestamp(window_start, tz=timezone.utc)
        latest: datetime | None = None
        missed = 0
        t = sched.next_after(earliest, tz)
        while t is not None and t <= self.now:
            latest, missed = t, missed + 1
            t = sched.next_after(t, tz)
            if missed > 100000:
                break
        if missed > MAX_MISSED and latest is not None:
            self.event_once(latest, "Warning", "TooManyMissedTimes",
                       f"too many missed start times: {missed}. Set or decrease .spec.startingDeadlineSeconds "
                       "or check clock skew")
        return latest

    def wake_next(self, sched: CronSchedule, tz: str | None) -> None:
        nxt = sched.next_after(self.now, tz)
        if nxt is not None:
            self.cluster.wake_at(self.ns, sim_seconds(self.cluster, nxt))

    def job_from_template(self, name: str, scheduled: datetime, tz: str | None) -> Obj:
        template = (self.cj.get("spec") or {}).get("jobTemplate") or {}
        tmeta = template.get("metadata") or {}
        annotations = dict(tmeta.get("annotations") or {})
        annotations[SCHEDULED_ANNOTATION] = _rfc3339_in_zone(scheduled, sched_zone(tz))
        meta: dict = {"name": name, "namespace": self.ns}
        if tmeta.get("labels"):
            meta["labels"] = dict(tmeta["labels"])
        meta["annotations"] = annotations
        meta["ownerReferences"] = [controller_ref(self.cj)]
        return {"apiVersion": JOBS.api_version, "kind": JOBS.kind, "metadata": meta,
                "spec": clone(template.get("spec") or {})}

    # -- history ---------------------------------------------------------------------------
    def delete_job(self, name: str | None) -> None:
        if not name or self.cluster.store.find(JOBS, self.ns, name) is None:
            return
        delete_with_propagation(self.cluster, JOBS, self.ns, name, "Background")
        self.event("Normal", "SuccessfulDelete", f"Deleted job {name}")

    def cleanup_history(self) -> None:
        spec = self.cj.get("spec") or {}
        limits = {"Complete": spec.get("successfulJobsHistoryLimit", 3),
                  "Failed": spec.get("failedJobsHistoryLimit", 1)}
        for outcome, limit in limits.items():
            if limit is None:
                continue
            done = [j for j in self.jobs if finished_condition(j) == outcome
                    and self.cluster.store.find(JOBS, self.ns, j["metadata"]["name"]) is not None]
            done.sort(key=lambda j: ((j.get("status") or {}).get("startTime") or j["metadata"].get(
                "creationTimestamp", ""), j["metadata"]["name"]))
            for job in done[:max(len(done) - int(limit), 0)]:
                self.delete_job(job["metadata"]["name"])


def job_name(cj: Obj, scheduled: datetime) -> str:
    return f"{cj['metadata']['name']}-{int(scheduled.timestamp()) // 60}"


def sched_zone(tz: str | None):
    return CronSchedule(tz=tz).zone()


def _rfc3339_in_zone(t: datetime, zone) -> str:
    local = t.astimezone(zone)
    offset = local.utcoffset()
    if not offset:
        return local.strftime("%Y-%m-%dT%H:%M:%SZ")
    return local.isoformat(timespec="seconds")
