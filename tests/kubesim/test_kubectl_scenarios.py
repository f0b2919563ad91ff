"""Fault scenarios driven only through kubectl (1.20 and 1.32): the symptoms an agent must read
off `get`/`describe`/`logs`, and the fixes (`rollout undo`, recreating config) must heal them."""

from __future__ import annotations

import re

try:
    from kubectl_helpers import FIXTURES, app, kubectl, parse_table, sim, wait_healthy, wait_until, web_pods
except ImportError:  # collected as part of a package
    from tests.kubesim.kubectl_helpers import (FIXTURES, app, kubectl, parse_table, sim, wait_healthy,
                                               wait_until, web_pods)

__all__ = ["app", "kubectl", "sim"]  # fixtures used by name


def restarts(cell: str) -> int:
    return int(cell.split()[0])


def by_name(rows: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    return {r["NAME"]: r for r in rows}


def test_memory_limit_lowered_oomkills_then_undo_heals(kubectl, sim, app):
    old = set(by_name(app))
    patch = '{"spec":{"template":{"spec":{"containers":[{"name":"web","resources":{"limits":{"memory":"96Mi"}}}]}}}}'
    assert kubectl.ok("patch", "deploy", "web", "-p", patch).strip() == "deployment.apps/web patched"

    def crashing():
        rows = [r for r in web_pods(kubectl) if r["NAME"] not in old]
        return rows if rows and all(r["STATUS"] in ("OOMKilled", "CrashLoopBackOff") for r in rows) else None

    first = wait_until(crashing, sim.advance, step=2, what="new pods OOMKilled/CrashLoopBackOff")
    pod = first[0]["NAME"]
    rows = by_name(web_pods(kubectl))
    assert all(rows[n]["STATUS"] == "Running" and rows[n]["READY"] == "1/1" for n in old), rows  # old pods serve

    described = kubectl.ok("describe", "pod", pod)
    assert re.search(r"Last State:\s+Terminated\s+Reason:\s+OOMKilled\s+Exit Code:\s+137", described), described
    counts, statuses = [], []
    for _ in range(3):
        sim.advance(120)
        row = by_name(web_pods(kubectl))[pod]
        counts.append(restarts(row["RESTARTS"]))
        statuses.append(row["STATUS"])
        assert re.fullmatch(r"\d+ \(\S+ ago\)", row["RESTARTS"]), row
    assert counts == sorted(counts) and counts[-1] > counts[0], counts
    assert set(statuses) <= {"OOMKilled", "CrashLoopBackOff"} and "CrashLoopBackOff" in statuses, statuses

    assert kubectl.ok("rollout", "undo", "deploy/web").strip() == "deployment.apps/web rolled back"
    healed = wait_healthy(kubectl, sim)
    assert all(r["RESTARTS"] == "0" for r in healed), healed
    limit = kubectl.jsonpath("get", "deploy", "web", path="{.spec.template.spec.containers[0].resources.limits.memory}")
    assert limit == "512Mi"
    assert 'deployment "web" successfully rolled out' in kubectl.ok("rollout", "status", "deploy/web")


def test_bad_image_tag_pull_backoff_then_undo_heals(kubectl, sim, app):
    old = set(by_name(app))
    kubectl.ok("set", "image", "deploy/web", "web=ontrial-fixtures/web:9.9")

    def pulling():
        rows = [r for r in web_pods(kubectl) if r["NAME"] not in old]
        return rows if rows and all(r["STATUS"] == "ImagePullBackOff" for r in rows) else None

    stuck = wait_until(pulling, sim.advance, step=2, what="new pods in ImagePullBackOff")
    assert all(r["READY"] == "0/1" and r["RESTARTS"] == "0" for r in stuck), stuck
    rows = by_name(web_pods(kubectl))
    assert all(rows[n]["STATUS"] == "Running" for n in old), rows
    events = kubectl.ok("get", "events")
    assert re.search(r"Failed.*pod/" + re.escape(stuck[0]["NAME"]), events), events
    described = kubectl.ok("describe", "pod", stuck[0]["NAME"])
    assert re.search(r"Reason:\s+(ImagePullBackOff|ErrImagePull)", described), described
    r = kubectl.fails("logs", stuck[0]["NAME"])
    assert f'container "web" in pod "{stuck[0]["NAME"]}" is waiting to start' in r.err, r.describe()

    kubectl.ok("rollout", "undo", "deploy/web")
    healed = wait_healthy(kubectl, sim)
    assert set(by_name(healed)) == old  # the untouched old pods are the survivors
    assert parse_table(kubectl.ok("get", "deploy", "web"))[0]["READY"] == "2/2"


def test_configmap_deleted_then_pod_deleted_breaks_only_the_new_pod(kubectl, sim, app):
    survivor, victim = app[0]["NAME"], app[1]["NAME"]
    kubectl.ok("delete", "configmap", "web-config")
    kubectl.ok("delete", "pod", victim)

    def config_error():
        rows = by_name(web_pods(kubectl))
        new = [r for n, r in rows.items() if n not in (survivor, victim)]
        return new if new and new[0]["STATUS"] == "CreateContainerConfigError" else None

    new = wait_until(config_error, sim.advance, step=2, what="CreateContainerConfigError on the new pod")
    sim.advance(60)
    rows = by_name(web_pods(kubectl))
    assert rows[survivor]["STATUS"] == "Running" and rows[survivor]["READY"] == "1/1", rows  # sticky env
    assert rows[new[0]["NAME"]]["STATUS"] == "CreateContainerConfigError", rows
    described = kubectl.ok("describe", "pod", new[0]["NAME"])
    assert 'configmap "web-config" not found' in described, described

    out = kubectl.ok("apply", "-f", str(FIXTURES / "app.yaml"))
    assert "configmap/web-config created" in out, out
    healed = wait_healthy(kubectl, sim)
    assert survivor in by_name(healed)
