"""Job controller: parallelism/completions, failure back-off and limits, deadlines, suspend, TTL."""

from __future__ import annotations

from controller_sim import Sim, condition

from kubesim.resources import JOBS, PODS


def job(name: str = "migrate", **spec) -> dict:
    body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "main", "image": "shop/migrate:1.0"}]}}}}
    body["spec"].update(spec)
    return body


def active(sim: Sim, j: dict) -> list[dict]:
    return [p for p in sim.pods(j) if p["status"]["phase"] not in ("Succeeded", "Failed")]


def test_parallel_job_runs_until_completions_succeed():
    sim = Sim()
    j = sim.create(JOBS, job(completions=3, parallelism=2))
    pods = active(sim, j)
    assert len(pods) == 2
    for p in pods:
        assert p["metadata"]["generateName"] == "migrate-"
        assert p["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "migrate"
        assert p["metadata"]["ownerReferences"][0]["kind"] == "Job"
    status = sim.get(JOBS, "migrate")["status"]
    assert status["active"] == 2 and status["startTime"] == sim.now()
    sim.finish_pod(pods[0], "Succeeded")
    assert len(active(sim, j)) == 2  # one more to reach three completions
    for p in active(sim, j):
        sim.finish_pod(p, "Succeeded")
    done = sim.get(JOBS, "migrate")
    assert done["status"]["succeeded"] == 3 and "active" not in done["status"]
    assert condition(done, "Complete")["status"] == "True"
    assert done["status"]["completionTime"] == sim.now()
    assert sim.messages(j, "Completed") == ["Job completed"]
    assert len(sim.messages(j, "SuccessfulCreate")) == 3
    assert not active(sim, j)


def test_failures_back_off_then_exceed_the_backoff_limit():
    sim = Sim()
    j = sim.create(JOBS, job(backoffLimit=1))
    [first] = active(sim, j)
    sim.finish_pod(first, "Failed")
    assert not active(sim, j)  # replacement waits out the 10 s back-off
    sim.advance(9)
    assert not active(sim, j)
    sim.advance(2)
    [second] = active(sim, j)
    assert sim.get(JOBS, "migrate")["status"]["failed"] == 1
    sim.finish_pod(second, "Failed")
    failed = sim.get(JOBS, "migrate")
    cond = condition(failed, "Failed")
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
    assert failed["status"]["failed"] == 2
    assert sim.messages(j, "BackoffLimitExceeded") == ["Job has reached the specified backoff limit"]
    sim.advance(600)
    assert not active(sim, j)


def test_active_deadline_fails_the_job_and_stops_its_pods():
    sim = Sim()
    j = sim.create(JOBS, job(activeDeadlineSeconds=60))
    assert len(active(sim, j)) == 1
    sim.advance(59)
    assert condition(sim.get(JOBS, "migrate"), "Failed") is None
    sim.advance(1)
    cond = condition(sim.get(JOBS, "migrate"), "Failed")
    assert cond["reason"] == "DeadlineExceeded"
    assert not sim.pods(j)


def test_suspend_removes_pods_and_resume_restarts_them():
    sim = Sim()
    j = sim.create(JOBS, job())
    assert len(active(sim, j)) == 1
    sim.edit(JOBS, "migrate", lambda o: o["spec"].update(suspend=True))
    cur = sim.get(JOBS, "migrate")
    assert not active(sim, j) and condition(cur, "Suspended")["reason"] == "JobSuspended"
    sim.advance(30)
    sim.edit(JOBS, "migrate", lambda o: o["spec"].update(suspend=False))
    cur = sim.get(JOBS, "migrate")
    assert len(active(sim, j)) == 1
    assert condition(cur, "Suspended")["status"] == "False"
    assert cur["status"]["startTime"] == sim.now()
    assert sim.messages(j, "Suspended") == ["Job suspended"] and sim.messages(j, "Resumed") == ["Job resumed"]


def test_counted_success_survives_pod_deletion():
    sim = Sim()
    j = sim.create(JOBS, job(completions=2, parallelism=1))
    [p] = active(sim, j)
    sim.finish_pod(p, "Succeeded")
    sim.store.delete(PODS, "default", p["metadata"]["name"])
    sim.reconcile()
    assert sim.get(JOBS, "migrate")["status"]["succeeded"] == 1
    [q] = active(sim, j)
    sim.finish_pod(q, "Succeeded")
    assert condition(sim.get(JOBS, "migrate"), "Complete")["status"] == "True"


def test_ttl_after_finished_deletes_job_and_pods():
    sim = Sim()
    j = sim.create(JOBS, job(ttlSecondsAfterFinished=100))
    [p] = active(sim, j)
    sim.finish_pod(p, "Succeeded")
    sim.advance(99)
    assert sim.find(JOBS, "migrate") is not None
    sim.advance(2)
    assert sim.find(JOBS, "migrate") is None
    assert not sim.list(PODS)


def test_generated_selector_when_none_given():
    sim = Sim()
    body = job(name="")
    body["metadata"] = {"generateName": "adhoc-", "namespace": "default"}
    j = sim.create(JOBS, body)
    j = sim.get(JOBS, j["metadata"]["name"])
    assert j["spec"]["selector"]["matchLabels"]
    [p] = active(sim, j)
    labels = p["metadata"]["labels"]
    assert all(labels.get(k) == v for k, v in j["spec"]["selector"]["matchLabels"].items())
