"""CronJob controller and its schedule parser, on the simulated clock."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from controller_sim import START, Sim, condition

from kubesim.controllers.common import controller_of
from kubesim.controllers.cron import parse_schedule
from kubesim.resources import CRONJOBS, JOBS


def cronjob(name: str = "rebalance", schedule: str = "*/5 * * * *", **spec) -> dict:
    body = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedule": schedule, "jobTemplate": {
                "metadata": {"labels": {"job": name}},
                "spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                                               "containers": [{"name": "main", "image": "ops/rebalance:1.0"}]}}}}}}
    body["spec"].update(spec)
    return body


def owned_jobs(sim: Sim, cj: dict) -> list[dict]:
    return sorted((j for j in sim.list(JOBS) if (controller_of(j) or {}).get("uid") == cj["metadata"]["uid"]),
                  key=lambda j: j["metadata"]["name"])


def minutes(offset_min: int) -> int:
    return int(START.timestamp()) // 60 + offset_min


def finish(sim: Sim, job: dict, phase: str = "Succeeded") -> None:
    for pod in sim.pods(job):
        sim.finish_pod(pod, phase)


# -- schedule parser ------------------------------------------------------------------------------
@pytest.mark.parametrize("spec,after,expected", [
    ("*/15 * * * *", datetime(2026, 1, 1, 10, 7), datetime(2026, 1, 1, 10, 15)),
    ("0 9-17/4 * * *", datetime(2026, 1, 1, 13, 0), datetime(2026, 1, 1, 17, 0)),
    ("30 2 * * MON-FRI", datetime(2026, 1, 2, 3, 0), datetime(2026, 1, 5, 2, 30)),  # Fri → Mon
    ("0 0 1,15 * *", datetime(2026, 1, 2), datetime(2026, 1, 15)),
    ("0 0 13 * 5", datetime(2026, 2, 1), datetime(2026, 2, 6)),  # day-of-month OR day-of-week
    ("@hourly", datetime(2026, 1, 1, 10, 0), datetime(2026, 1, 1, 11, 0)),
    ("0 0 29 2 *", datetime(2026, 3, 1), datetime(2028, 2, 29)),
    ("5 4 * jan,JUL sun", datetime(2026, 1, 1), datetime(2026, 1, 4, 4, 5)),
])
def test_schedule_next_activation(spec, after, expected):
    got = parse_schedule(spec).next_after(after.replace(tzinfo=timezone.utc))
    assert got == expected.replace(tzinfo=timezone.utc)


def test_schedule_in_a_time_zone():
    sched = parse_schedule("0 9 * * *")
    got = sched.next_after(datetime(2026, 7, 1, tzinfo=timezone.utc), "Europe/Berlin")
    assert got == datetime(2026, 7, 1, 7, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("bad", ["* * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *",
                                 "*/0 * * * *", "5-1 * * * *", "x * * * *", "@fortnightly", ""])
def test_malformed_schedules_are_rejected(bad):
    with pytest.raises(ValueError):
        parse_schedule(bad)


# -- controller -----------------------------------------------------------------------------------
def test_jobs_are_created_at_each_schedule_time_with_deterministic_names():
    sim = Sim()
    cj = sim.create(CRONJOBS, cronjob())
    assert not owned_jobs(sim, cj)
    sim.advance(5 * 60)
    [first] = owned_jobs(sim, cj)
    assert first["metadata"]["name"] == f"rebalance-{minutes(5)}"
    assert first["metadata"]["labels"]["job"] == "rebalance"
    assert first["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] == "2026-03-02T12:05:00Z"
    assert first["metadata"]["creationTimestamp"] == "2026-03-02T12:05:00Z"
    status = sim.get(CRONJOBS, "rebalance")["status"]
    assert status["lastScheduleTime"] == "2026-03-02T12:05:00Z"
    assert [r["name"] for r in status["active"]] == [first["metadata"]["name"]]
    assert sim.messages(cj, "SuccessfulCreate") == [f"Created job {first['metadata']['name']}"]
    assert len(sim.pods(first)) == 1
    sim.advance(5 * 60)
    assert len(owned_jobs(sim, cj)) == 2  # Allow: runs overlap


def test_completed_jobs_leave_the_active_list_and_set_last_successful_time():
    sim = Sim()
    cj = sim.create(CRONJOBS, cronjob())
    sim.advance(300)
    [job] = owned_jobs(sim, cj)
    finish(sim, job)
    status = sim.get(CRONJOBS, "rebalance")["status"]
    assert "active" not in status
    assert status["lastSuccessfulTime"] == sim.get(JOBS, job["metadata"]["name"])["status"]["completionTime"]
    assert sim.messages(cj, "SawCompletedJob") == [f"Saw completed job: {job['metadata']['name']}, status: Complete"]


def test_forbid_skips_while_running_and_runs_the_missed_time_after():
    sim = Sim()
    cj = sim.create(CRONJOBS, cronjob(concurrencyPolicy="Forbid"))
    sim.advance(300)
    [first] = owned_jobs(sim, cj)
    sim.advance(300)
    assert len(owned_jobs(sim, cj)) == 1
    assert sim.messages(cj, "JobAlreadyActive") == [
        "Not starting job because prior execution is running and concurrency policy is Forbid"]
    finish(sim, first)
    names = [j["metadata"]["name"] for j in owned_jobs(sim, cj)]
    assert names == [first["metadata"]["name"], f"rebalance-{minutes(10)}"]


def test_replace_deletes_the_running_job():
    sim = Sim()
    cj = sim.create(CRONJOBS, cronjob(concurrencyPolicy="Replace"))
    sim.advance(300)
    [first] = owned_jobs(sim, cj)
    sim.advance(300)
    [second] = owned_jobs(sim, cj)
    assert second["metadata"]["name"] == f"rebalance-{minutes(10)}"
    assert sim.find(JOBS, first["metadata"]["name"]) is None
    assert not sim.pods(first)
    assert sim.messages(cj, "SuccessfulDelete") == [f"Deleted job {first['metadata']['name']}"]


def test_history_limits_prune_old_finished_jobs():
    sim = Sim()
    cj = sim.create(CRONJOBS, cronjob(successfulJobsHistoryLimit=2, failedJobsHistoryLimit=1))
    for _ in range(4):
        sim.advance(300)
        for job in owned_jobs(sim, cj):
            if condition(job, "Complete") is None:
                finish(sim, job)
    names = [j["metadata"]["name"] for j in owned_jobs(sim, cj)]
    assert names == [f"rebalance-{minutes(15)}", f"rebalance-{minutes(20)}"]


def test_suspend_stops_new_runs_and_resume_picks_up_the_latest_missed_time():
    sim = Sim()
    cj = sim.create(CRONJOBS, cronjob(suspend=True))
    sim.advance(900)
    assert not owned_jobs(sim, cj)
    sim.edit(CRONJOBS, "rebalance", lambda o: o["spec"].update(suspend=False))
    [job] = owned_jobs(sim, cj)
    assert job["metadata"]["name"] == f"rebalance-{minutes(15)}"


def test_starting_deadline_skips_stale_schedule_times():
    sim = Sim()
    cj = sim.create(CRONJOBS, cronjob(suspend=True, startingDeadlineSeconds=60))
    sim.advance(5 * 60 + 90)  # the 12:05 run is 90 s late when we resume
    sim.edit(CRONJOBS, "rebalance", lambda o: o["spec"].update(suspend=False))
    assert not owned_jobs(sim, cj)
    sim.advance(4 * 60)
    assert [j["metadata"]["name"] for j in owned_jobs(sim, cj)] == [f"rebalance-{minutes(10)}"]


def test_unparseable_schedule_is_reported():
    sim = Sim()
    body = cronjob(schedule="every tuesday")
    cj = sim.store.create(CRONJOBS, body)
    sim.reconcile()
    [msg] = sim.messages(cj, "UnparseableSchedule")
    assert msg.startswith("unparseable schedule: 'every tuesday'")
