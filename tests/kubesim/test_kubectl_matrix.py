"""The kubectl command matrix: every command an SRE agent reaches for, run with real kubectl 1.20
and 1.32 against an embedded kubesim, asserting on what kubectl prints."""

from __future__ import annotations

import re

import pytest
import yaml

try:
    from kubectl_helpers import (FIXTURES, Kubectl, LineReader, app, healthy_web, kubectl, parse_table, sim,
                                 wait_healthy, wait_until, web_pods)
except ImportError:  # collected as part of a package
    from tests.kubesim.kubectl_helpers import (FIXTURES, Kubectl, LineReader, app, healthy_web, kubectl,
                                               parse_table, sim, wait_healthy, wait_until, web_pods)

__all__ = ["app", "kubectl", "sim"]  # fixtures used by name

POD_COLUMNS = ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
WIDE_POD_COLUMNS = POD_COLUMNS + ["IP", "NODE", "NOMINATED NODE", "READINESS GATES"]


def header(text: str) -> list[str]:
    return [c for c in re.split(r"\s{2,}", text.splitlines()[0].strip())]


def env_of(k: Kubectl) -> dict[str, str]:
    containers = k.json("get", "deploy", "web")["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e.get("value", "<from>") for e in containers[0].get("env", [])}


# -- reading state ------------------------------------------------------------------------------
def test_version_and_api_resources(kubectl):
    assert "Server Version" in kubectl.ok("version")
    rows = parse_table(kubectl.ok("api-resources"))
    by_name = {(r["NAME"], r["APIVERSION"]): r for r in rows}
    assert by_name[("deployments", "apps/v1")]["SHORTNAMES"] == "deploy"
    assert by_name[("pods", "v1")]["KIND"] == "Pod"


def test_get_pods_table_and_wide(kubectl, app):
    out = kubectl.ok("get", "pods")
    assert header(out) == POD_COLUMNS
    rows = parse_table(out)
    assert len(rows) == 2 and all(r["NAME"].startswith("web-") for r in rows)
    assert {(r["READY"], r["STATUS"], r["RESTARTS"]) for r in rows} == {("1/1", "Running", "0")}
    wide = kubectl.ok("get", "pods", "-o", "wide")
    assert header(wide) == WIDE_POD_COLUMNS
    for r in parse_table(wide):
        assert r["NODE"] == "kubesim-node-1" and re.fullmatch(r"\d+\.\d+\.\d+\.\d+", r["IP"])
        assert r["NOMINATED NODE"] == "<none>" and r["READINESS GATES"] == "<none>"
    chunked = kubectl.run("get", "pods", "--chunk-size=1", "-v=6")  # two pages, one table
    assert chunked.rc == 0 and header(chunked.out) == POD_COLUMNS and parse_table(chunked.out) == rows
    pages = [line for line in chunked.err.splitlines() if "/namespaces/default/pods?" in line]
    assert len(pages) == 2 and "limit=1" in pages[0] and "continue=" in pages[1], chunked.describe()


def test_get_yaml_json_and_jsonpath(kubectl, app):
    deploy = yaml.safe_load(kubectl.ok("get", "deploy", "web", "-o", "yaml"))
    assert deploy["kind"] == "Deployment"
    assert deploy["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert deploy["spec"]["strategy"]["type"] == "RollingUpdate"
    assert kubectl.jsonpath("get", "deploy", "web", path="{.status.readyReplicas}") == "2"
    custom = kubectl.ok("get", "pods", "-o", "custom-columns=NAME:.metadata.name,IMAGE:.spec.containers[0].image")
    assert parse_table(custom)[0]["IMAGE"] == "ontrial-fixtures/web:1.0"


def test_get_all_expands_the_category(kubectl, app):
    out = kubectl.ok("get", "all")
    for prefix in ("pod/web-", "service/web ", "deployment.apps/web ", "replicaset.apps/web-"):
        assert re.search(rf"^{re.escape(prefix)}", out, re.M), out
    assert re.search(r"^deployment\.apps/web\s+2/2\s+2\s+2\s", out, re.M), out


def test_get_other_kinds_use_their_printers(kubectl, app):
    deploy = kubectl.ok("get", "deploy")
    assert header(deploy) == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert parse_table(kubectl.ok("get", "rs"))[0]["DESIRED"] == "2"
    svc = {r["NAME"]: r for r in parse_table(kubectl.ok("get", "svc"))}
    assert svc["web"]["TYPE"] == "ClusterIP" and svc["web"]["PORT(S)"] == "80/TCP"
    assert svc["web"]["EXTERNAL-IP"] == "<none>"
    assert "SELECTOR" in header(kubectl.ok("get", "svc", "-o", "wide"))
    ep = {r["NAME"]: r for r in parse_table(kubectl.ok("get", "endpoints"))}
    assert ep["web"]["ENDPOINTS"].count(":8080") == 2
    cm = {r["NAME"]: r for r in parse_table(kubectl.ok("get", "cm"))}
    assert cm["web-config"]["DATA"] == "1"
    ns = {r["NAME"]: r for r in parse_table(kubectl.ok("get", "ns"))}
    assert ns["default"]["STATUS"] == "Active"
    nodes = parse_table(kubectl.ok("get", "nodes"))
    assert nodes[0]["NAME"] == "kubesim-node-1" and nodes[0]["STATUS"] == "Ready"
    assert "KERNEL-VERSION" in header(kubectl.ok("get", "nodes", "-o", "wide"))
    assert header(kubectl.ok("get", "sa")) == ["NAME", "SECRETS", "AGE"]


def test_get_events(kubectl, app):
    out = kubectl.ok("get", "events")
    assert header(out) == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    rows = parse_table(out)
    assert any(r["REASON"] == "ScalingReplicaSet" and r["OBJECT"] == "deployment/web" for r in rows), out
    assert any(r["OBJECT"].startswith("pod/web-") and r["TYPE"] == "Normal" for r in rows), out
    wide = kubectl.ok("get", "events", "-o", "wide")
    assert header(wide)[-3:] == ["FIRST SEEN", "COUNT", "NAME"]


def test_get_all_namespaces_selector_and_labels(kubectl, app):
    rows = parse_table(kubectl.ok("get", "pods", "-A"))
    assert {r["NAMESPACE"] for r in rows if r["NAME"].startswith("web-")} == {"default"}
    out = kubectl.ok("get", "pods", "-l", "app=web", "--show-labels")
    assert header(out)[-1] == "LABELS"
    assert all(re.fullmatch(r"app=web,pod-template-hash=\w+", r["LABELS"]) for r in parse_table(out)), out
    assert kubectl.run("get", "pods", "-l", "app=nothing").out == ""


def test_get_watch_streams_table_rows(kubectl, sim, app):
    before = {r["NAME"] for r in app}
    proc = kubectl.popen("get", "pods", "-w")
    try:
        reader = LineReader(proc)
        lines = reader.until(lambda ls: len(ls) >= 3)
        assert header(lines[0]) == POD_COLUMNS, lines
        kubectl.ok("scale", "deploy/web", "--replicas=3")
        sim.advance(10)
        lines += reader.until(lambda ls: any(ln.split()[0] not in before and re.search(r"\s1/1\s+Running\s", ln)
                                             for ln in ls))
    finally:
        proc.kill()
        proc.wait()
    new = [ln for ln in lines[1:] if ln.split()[0] not in before]
    assert new, lines
    assert all(len(ln.split()) >= 5 for ln in new), lines  # table rows, not the NAME/AGE fallback
    assert any(re.search(r"\s1/1\s+Running\s", ln) for ln in new), lines


def test_describe_pod_and_deployment(kubectl, app):
    pod = app[0]["NAME"]
    out = kubectl.ok("describe", "pod", pod)
    for needle in (f"Name:", pod, "Status:", "Running", "Image:", "ontrial-fixtures/web:1.0",
                   "Restart Count:  0", "Controlled By:", "ReplicaSet/web-", "Events:", "Started"):
        assert needle in out, out
    out = kubectl.ok("describe", "deploy", "web")
    assert re.search(r"Replicas:\s+2 desired \| 2 updated \| 2 total \| 2 available \| 0 unavailable", out), out
    assert re.search(r"StrategyType:\s+RollingUpdate", out), out
    assert re.search(r"NewReplicaSet:\s+web-\w+ \(2/2 replicas created\)", out), out
    assert "ScalingReplicaSet" in out, out


def test_logs_tail_deploy_and_previous(kubectl, sim, app):
    pod = app[0]["NAME"]
    assert "listening on :8080" in kubectl.ok("logs", pod)
    assert "listening on :8080" in kubectl.ok("logs", pod, "-c", "web")
    assert len(kubectl.ok("logs", "deploy/web", "--tail=1").splitlines()) == 1
    assert kubectl.ok("logs", "-l", "app=web").count("listening on :8080") == 2
    r = kubectl.fails("logs", pod, "--previous")
    assert f'previous terminated container "web" in pod "{pod}" not found' in r.err, r.describe()
    kubectl.ok("set", "env", "deploy/web", "DB_URL-")
    crashing = wait_until(lambda: [p for p in web_pods(kubectl) if p["STATUS"] in ("CrashLoopBackOff", "Error")],
                          sim.advance, what="a crash-looping pod")
    previous = kubectl.ok("logs", crashing[0]["NAME"], "--previous")
    assert "FATAL: required environment variable DB_URL is not set" in previous, previous


def test_top_pods_and_nodes(kubectl, sim, app):
    sim.advance(60)
    out = kubectl.ok("top", "pods")
    assert header(out) == ["NAME", "CPU(cores)", "MEMORY(bytes)"]
    rows = {r["NAME"]: r for r in parse_table(out)}
    assert set(rows) == {r["NAME"] for r in app}
    assert all(re.fullmatch(r"\d+Mi", r["MEMORY(bytes)"]) and 150 <= int(r["MEMORY(bytes)"][:-2]) <= 220
               for r in rows.values()), out
    nodes = parse_table(kubectl.ok("top", "nodes"))
    assert nodes[0]["NAME"] == "kubesim-node-1"
    cpu_share = nodes[0].get("CPU%") or nodes[0]["CPU(%)"]  # kubectl >= 1.31 titles it CPU(%)
    assert re.fullmatch(r"\d+%", cpu_share), nodes


def test_create_token(kubectl):
    if kubectl.version == "1.20":
        pytest.skip("kubectl 1.20 has no 'create token' (added in 1.24)")
    token = kubectl.ok("create", "token", "default").strip()
    assert re.fullmatch(r"[\w-]+\.[\w-]+\.[\w-]*", token), token


# -- changing state -----------------------------------------------------------------------------
def test_apply_created_unchanged_configured(kubectl, sim):
    out = kubectl.ok("apply", "-f", str(FIXTURES / "app.yaml"))
    assert out.splitlines() == ["configmap/web-config created", "deployment.apps/web created", "service/web created"]
    wait_healthy(kubectl, sim)
    out = kubectl.ok("apply", "-f", str(FIXTURES / "app.yaml"))
    assert out.splitlines() == ["configmap/web-config unchanged", "deployment.apps/web unchanged",
                                "service/web unchanged"]
    out = kubectl.ok("apply", "-f", str(FIXTURES / "app-v2.yaml"))
    assert out.splitlines() == ["configmap/web-config unchanged", "deployment.apps/web configured",
                                "service/web unchanged"]
    assert env_of(kubectl)["LOG_LEVEL"] == "debug"
    wait_healthy(kubectl, sim, replicas=3)


def test_apply_server_side(kubectl):
    out = kubectl.ok("apply", "--server-side", "-f", str(FIXTURES / "extra-configmap.yaml"))
    assert "configmap/feature-flags serverside-applied" in out, out
    assert kubectl.jsonpath("get", "cm", "feature-flags", path="{.data.checkout}") == "on"


def test_create_from_file_and_already_exists(kubectl):
    out = kubectl.ok("create", "-f", str(FIXTURES / "extra-configmap.yaml"))
    assert out.strip() == "configmap/feature-flags created"
    r = kubectl.fails("create", "-f", str(FIXTURES / "extra-configmap.yaml"))
    assert 'configmaps "feature-flags" already exists' in r.err, r.describe()


def test_replace_and_stale_resource_version_conflict(kubectl):
    kubectl.ok("create", "-f", str(FIXTURES / "extra-configmap.yaml"))
    current = yaml.safe_load(kubectl.ok("get", "cm", "feature-flags", "-o", "yaml"))
    stale = kubectl.workdir / "stale.yaml"
    stale.write_text(yaml.safe_dump(current))
    current["data"]["search"] = "on"
    fresh = kubectl.workdir / "fresh.yaml"
    fresh.write_text(yaml.safe_dump(current))
    assert kubectl.ok("replace", "-f", str(fresh)).strip() == "configmap/feature-flags replaced"
    assert kubectl.jsonpath("get", "cm", "feature-flags", path="{.data.search}") == "on"
    r = kubectl.fails("replace", "-f", str(stale))
    assert ('Operation cannot be fulfilled on configmaps "feature-flags": the object has been modified; '
            "please apply your changes to the latest version and try again") in r.err, r.describe()


def test_edit_with_a_sed_editor(kubectl, app):
    editor = kubectl.workdir / "editor.sh"
    editor.write_text('#!/bin/sh\nsed -i "s/value: info/value: warn/" "$1"\n')
    editor.chmod(0o755)
    out = kubectl.ok("edit", "deploy", "web", env={"EDITOR": str(editor), "KUBE_EDITOR": str(editor)})
    assert "deployment.apps/web edited" in out, out
    assert env_of(kubectl)["LOG_LEVEL"] == "warn"


def test_delete_and_recreate_by_the_replicaset(kubectl, sim, app):
    victim = app[0]["NAME"]
    assert kubectl.ok("delete", "pod", victim).strip() == f'pod "{victim}" deleted'
    rows = wait_healthy(kubectl, sim)
    assert victim not in {r["NAME"] for r in rows}
    assert kubectl.ok("delete", "cm", "web-config").strip() == 'configmap "web-config" deleted'
    r = kubectl.fails("get", "cm", "web-config")
    assert 'configmaps "web-config" not found' in r.err, r.describe()


def test_delete_deployment_garbage_collects_its_replicasets_and_pods(kubectl, sim, app):
    assert kubectl.ok("delete", "deploy", "web").strip() == 'deployment.apps "web" deleted'
    wait_until(lambda: not web_pods(kubectl) and not kubectl.json("get", "rs", "-l", "app=web")["items"],
               sim.advance, what="ReplicaSets and pods of a deleted Deployment collected")
    out = kubectl.ok("get", "all")
    assert "service/web" in out and "web-" not in out, out


def test_namespace_lifecycle(kubectl, sim):
    ns = kubectl.workdir / "ns.yaml"
    ns.write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: trial-1\n")
    assert kubectl.ok("apply", "-f", str(ns)).strip() == "namespace/trial-1 created"
    kubectl.ok("create", "-f", str(FIXTURES / "extra-configmap.yaml"), "-n", "trial-1")
    assert parse_table(kubectl.ok("get", "cm", "-n", "trial-1", "feature-flags"))[0]["DATA"] == "2"
    assert 'namespace "trial-1" deleted' in kubectl.ok("delete", "ns", "trial-1", "--wait=false")
    wait_until(lambda: kubectl.run("get", "ns", "trial-1").rc != 0, sim.advance, what="namespace trial-1 gone")
    listed = kubectl.run("get", "cm", "-n", "trial-1")  # the real apiserver lists a missing namespace as empty
    assert listed.rc == 0 and "No resources found in trial-1 namespace." in listed.err, listed.describe()
    r = kubectl.fails("get", "cm", "-n", "trial-1", "feature-flags")  # kubectl re-checks the namespace on a 404
    assert 'namespaces "trial-1" not found' in r.err, r.describe()


def test_label_and_annotate(kubectl, app):
    pod = app[0]["NAME"]
    assert kubectl.ok("label", "pod", pod, "tier=frontend").strip() == f"pod/{pod} labeled"
    assert [r["NAME"] for r in parse_table(kubectl.ok("get", "pods", "-l", "tier=frontend"))] == [pod]
    r = kubectl.fails("label", "pod", pod, "tier=backend")
    assert "already has a value (frontend)" in r.err, r.describe()
    kubectl.ok("label", "pod", pod, "tier-")
    assert kubectl.run("get", "pods", "-l", "tier").out == ""
    assert kubectl.ok("annotate", "deploy", "web", "note=hello").strip() == "deployment.apps/web annotated"
    assert kubectl.jsonpath("get", "deploy", "web", path="{.metadata.annotations.note}") == "hello"


def test_scale_up_and_down(kubectl, sim, app):
    assert kubectl.ok("scale", "deploy/web", "--replicas=3").strip() == "deployment.apps/web scaled"
    wait_healthy(kubectl, sim, replicas=3)
    assert parse_table(kubectl.ok("get", "deploy", "web"))[0]["READY"] == "3/3"
    kubectl.ok("scale", "deploy/web", "--replicas=0")
    wait_until(lambda: not web_pods(kubectl), sim.advance, what="no web pods")
    assert parse_table(kubectl.ok("get", "deploy", "web"))[0]["READY"] == "0/0"


def test_set_image_and_env(kubectl, sim, app):
    out = kubectl.ok("set", "image", "deploy/web", "web=ontrial-fixtures/web:1.1")
    assert out.strip() == "deployment.apps/web image updated"
    rows = wait_healthy(kubectl, sim)
    images = kubectl.jsonpath("get", "pods", "-l", "app=web", path="{.items[*].spec.containers[0].image}")
    assert images.split() == ["ontrial-fixtures/web:1.1"] * 2
    assert {r["NAME"] for r in rows}.isdisjoint({r["NAME"] for r in app})
    assert kubectl.ok("set", "env", "deploy/web", "FEATURE_X=on").strip() == "deployment.apps/web env updated"
    assert list(env_of(kubectl)) == ["DB_URL", "LOG_LEVEL", "FEATURE_X"]
    kubectl.ok("set", "env", "deploy/web", "LOG_LEVEL-")
    assert list(env_of(kubectl)) == ["DB_URL", "FEATURE_X"]
    wait_healthy(kubectl, sim)


def test_patch_strategic_merge_and_json(kubectl, app):
    smp = '{"spec":{"template":{"spec":{"containers":[{"name":"web","env":[{"name":"EXTRA","value":"1"}]}]}}}}'
    assert kubectl.ok("patch", "deploy", "web", "-p", smp).strip() == "deployment.apps/web patched"
    assert env_of(kubectl) == {"DB_URL": "<from>", "LOG_LEVEL": "info", "EXTRA": "1"}  # merged by name
    merge = '{"metadata":{"labels":{"tier":"backend"}}}'
    kubectl.ok("patch", "deploy", "web", "--type=merge", "-p", merge)
    assert kubectl.jsonpath("get", "deploy", "web", path="{.metadata.labels.tier}") == "backend"
    merge_list = '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"ontrial-fixtures/web:1.0"}]}}}}'
    kubectl.ok("patch", "deploy", "web", "--type=merge", "-p", merge_list)
    assert env_of(kubectl) == {}  # a merge patch replaces the whole container list
    jp = '[{"op":"replace","path":"/spec/replicas","value":1}]'
    kubectl.ok("patch", "deploy", "web", "--type=json", "-p", jp)
    assert kubectl.jsonpath("get", "deploy", "web", path="{.spec.replicas}") == "1"
    assert "patched (no change)" in kubectl.ok("patch", "deploy", "web", "--type=merge", "-p", merge)
    r = kubectl.fails("patch", "deploy", "web", "--type=json", "-p", '[{"op":"remove","path":"/spec/nope"}]')
    assert "The request is invalid" in r.err and "/spec/nope" in r.err, r.describe()


def test_rollout_status_history_undo(kubectl, sim, app):
    assert 'deployment "web" successfully rolled out' in kubectl.ok("rollout", "status", "deploy/web")
    kubectl.ok("set", "image", "deploy/web", "web=ontrial-fixtures/web:1.1")
    wait_healthy(kubectl, sim)
    history = kubectl.ok("rollout", "history", "deploy/web")
    assert re.findall(r"^(\d+)\s", history, re.M) == ["1", "2"], history
    rev1 = kubectl.ok("rollout", "history", "deploy/web", "--revision=1")
    assert "ontrial-fixtures/web:1.0" in rev1, rev1
    assert kubectl.ok("rollout", "undo", "deploy/web").strip() == "deployment.apps/web rolled back"
    wait_healthy(kubectl, sim)
    assert kubectl.jsonpath("get", "deploy", "web", path="{.spec.template.spec.containers[0].image}") == \
        "ontrial-fixtures/web:1.0"
    rs = kubectl.json("get", "rs", "-l", "app=web")["items"]
    assert len(rs) == 2, "undo must reuse the revision-1 ReplicaSet"
    revs = sorted(r["metadata"]["annotations"]["deployment.kubernetes.io/revision"] for r in rs)
    assert revs == ["2", "3"], revs
    kubectl.ok("rollout", "undo", "deploy/web", "--to-revision=2")
    wait_healthy(kubectl, sim)
    assert kubectl.jsonpath("get", "deploy", "web", path="{.spec.template.spec.containers[0].image}") == \
        "ontrial-fixtures/web:1.1"
    r = kubectl.fails("rollout", "undo", "deploy/web", "--to-revision=42")
    assert "unable to find specified revision 42 in history" in r.err, r.describe()


def test_rollout_restart_pause_resume(kubectl, sim, app):
    assert kubectl.ok("rollout", "restart", "deploy/web").strip() == "deployment.apps/web restarted"
    rows = wait_healthy(kubectl, sim)
    assert {r["NAME"] for r in rows}.isdisjoint({r["NAME"] for r in app})
    annotations = kubectl.json("get", "deploy", "web")["spec"]["template"]["metadata"]["annotations"]
    assert "kubectl.kubernetes.io/restartedAt" in annotations
    assert kubectl.ok("rollout", "pause", "deploy/web").strip() == "deployment.apps/web paused"
    assert kubectl.jsonpath("get", "deploy", "web", path="{.spec.paused}") == "true"
    kubectl.ok("set", "image", "deploy/web", "web=ontrial-fixtures/web:1.1")
    sim.advance(30)
    assert len(kubectl.json("get", "rs", "-l", "app=web")["items"]) == 2, "a paused deployment must not roll"
    assert kubectl.ok("rollout", "resume", "deploy/web").strip() == "deployment.apps/web resumed"
    wait_healthy(kubectl, sim)
    assert len(kubectl.json("get", "rs", "-l", "app=web")["items"]) == 3


def test_rollout_status_times_out_on_a_stuck_rollout(kubectl, sim, app):
    kubectl.ok("set", "image", "deploy/web", "web=ontrial-fixtures/web:9.9")
    sim.advance(30)
    r = kubectl.fails("rollout", "status", "deploy/web", "--timeout=2s")
    assert 'Waiting for deployment "web" rollout to finish' in r.out, r.describe()
    assert healthy_web(kubectl) is None
