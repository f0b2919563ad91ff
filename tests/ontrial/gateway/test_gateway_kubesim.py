"""The tool gateway against a real embedded kubesim, with the agent's own scoped credentials."""

from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import pytest

from ontrial.artifacts import LocalArtifactStore, read_jsonl
from ontrial.gateway import AuditLog, Budget, BudgetExceeded, Invariants, ToolGateway
from ontrial.models.trial import BudgetKind, SandboxSettings
from ontrial.sandbox import KubeBackend, client_from_kubeconfig_text
from ontrial.sandbox.kinds import lookup_kind
from ontrial.tasks import load_task

embedded = pytest.importorskip("kubesim.embedded", reason="kubesim is not importable")
FIXTURE = Path(__file__).parents[1] / "fixtures" / "shop" / "web-bad-image" / "task.yaml"
DEPLOY, RS, CM = lookup_kind("Deployment"), lookup_kind("ReplicaSet"), lookup_kind("ConfigMap")


@pytest.fixture(scope="module")
def sim() -> Iterator["embedded.Embedded"]:
    with embedded.start(time_scale=0) as server:
        yield server


class Sandbox:
    def __init__(self, backend: KubeBackend, store: LocalArtifactStore, ref: Any):
        self.backend, self.store, self.ref = backend, store, ref
        self.namespace = ref.namespace
        self.agent = client_from_kubeconfig_text(store.get(ref.agent_kubeconfig_ref))

    def gateway(self, invariants: Any = None, steps: int | None = None) -> ToolGateway:
        audit = AuditLog(self.ref.trial_id, sink=self.store.open_append(self.ref.trial_id, "audit.jsonl"))
        return ToolGateway(self.agent.api_client, self.namespace, invariants or Invariants(), Budget(steps=steps),
                           audit)

    async def advance(self, seconds: float) -> None:
        await self.backend.waiter.pass_time(seconds)

    async def deployment(self) -> dict[str, Any]:
        return await self.backend.admin.get(DEPLOY, self.namespace, "web")


@pytest.fixture
async def sandbox(sim, tmp_path: Path) -> AsyncIterator[Sandbox]:
    store = LocalArtifactStore(tmp_path)
    backend = KubeBackend.from_settings(SandboxSettings(kubeconfig=sim.kubeconfig_path), store)
    task = load_task(FIXTURE)
    ref = await backend.create(f"suite/gateway/{tmp_path.name}")
    try:
        await backend.deploy(ref.namespace, task.app_objects(), task.profiles())
        await backend.wait_healthy(ref.namespace, 120)
        box = Sandbox(backend, store, ref)
        yield box
        box.agent.close()
    finally:
        await backend.teardown(ref.namespace)
        await backend.close()


async def test_reads_render_what_agents_need(sandbox: Sandbox) -> None:
    gw = sandbox.gateway()
    pods = await gw.call("get_resources", {"kind": "pods", "label_selector": "app=web"})
    assert pods.ok and pods.output.splitlines()[0].split()[:2] == ["NAME", "READY"]
    assert len([line for line in pods.output.splitlines() if line.startswith("web-")]) == 2
    pod_name = pods.output.splitlines()[1].split()[0]
    dep = await gw.call("get_resources", {"kind": "deploy", "name": "web"})
    assert dep.ok and "image: shop/web:1.0" in dep.output and "managedFields" not in dep.output
    everything = await gw.call("get_resources", {"kind": "all"})
    assert "# deployments.apps" in everything.output and "# pods" in everything.output

    described = await gw.call("describe", {"kind": "pod", "name": pod_name})
    for text in ("State:", "Running", "Ready:", "Restart Count:", "Limits:", "DB_URL:",
                 "<set to the key 'DB_URL' of config map 'web-config'>", "Events:"):
        assert text in described.output, text
    deployment = await gw.call("describe", {"kind": "Deployment", "name": "web"})
    assert "Replicas:" in deployment.output and "2 desired" in deployment.output
    assert "NewReplicaSet:" in deployment.output and "web-" in deployment.output
    service = await gw.call("describe", {"kind": "svc", "name": "web"})
    assert "Endpoints:" in service.output and "Selector:" in service.output

    logs = await gw.call("get_logs", {"pod": "deployment/web", "tail": 5})
    assert logs.ok and "web listening on :8080" in logs.output
    missing = await gw.call("get_logs", {"pod": "nope"})
    assert not missing.ok and "NotFound" in missing.output
    events = await gw.call("get_events", {"name": "web"})
    assert events.ok and "Events:" in events.output
    unknown = await gw.call("get_resources", {"kind": "widgets"})
    assert not unknown.ok and "doesn't have a resource type" in unknown.output


async def test_rollout_undo_reuses_the_old_replicaset(sandbox: Sandbox) -> None:
    gw = sandbox.gateway()
    original = {rs["metadata"]["name"] for rs in await sandbox.backend.admin.list(RS, sandbox.namespace)}
    assert len(original) == 1
    changed = await gw.call("set_image", {"deployment": "web", "container": "web", "image": "shop/web:1.1"})
    assert changed.ok and changed.output == "deployment.apps/web image updated"
    await sandbox.advance(60)
    assert (await sandbox.deployment())["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"

    undone = await gw.call("rollout_undo", {"deployment": "web"})
    assert undone.ok, undone.output
    await sandbox.advance(60)
    dep = await sandbox.deployment()
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "shop/web:1.0"
    rsets = {rs["metadata"]["name"]: rs for rs in await sandbox.backend.admin.list(RS, sandbox.namespace)}
    assert len(rsets) == 2, "undo must reuse the revision-1 ReplicaSet, not create a third"
    (first,) = original
    assert rsets[first]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert rsets[first]["spec"]["replicas"] == 2

    again = await gw.call("rollout_undo", {"deployment": "web", "to_revision": 3})
    assert again.ok and "skipped rollback" in again.output
    missing = await gw.call("rollout_undo", {"deployment": "web", "to_revision": 9})
    assert not missing.ok and "unable to find specified revision 9" in missing.output


async def test_set_env_restart_scale_patch_apply(sandbox: Sandbox) -> None:
    gw = sandbox.gateway()
    removed = await gw.call("set_env", {"deployment": "web", "env": {"DB_URL": None, "FEATURE_X": "on"}})
    assert removed.ok, removed.output
    env = (await sandbox.deployment())["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env] == ["LOG_LEVEL", "FEATURE_X"]
    unchanged = await gw.call("set_env", {"deployment": "web", "container": "web", "env": {"FEATURE_X": "on"}})
    assert unchanged.output.endswith("env unchanged")
    wrong = await gw.call("set_env", {"deployment": "web", "container": "nope", "env": {"A": "1"}})
    assert not wrong.ok and 'unable to find container named "nope"' in wrong.output

    restarted = await gw.call("rollout_restart", {"deployment": "web"})
    assert restarted.ok
    template = (await sandbox.deployment())["spec"]["template"]
    assert "kubectl.kubernetes.io/restartedAt" in template["metadata"]["annotations"]

    scaled = await gw.call("scale", {"kind": "deployment", "name": "web", "replicas": 3})
    assert scaled.ok and scaled.output == "deployment.apps/web scaled"
    assert (await sandbox.deployment())["spec"]["replicas"] == 3

    merged = await gw.call("patch", {"kind": "deployment", "name": "web", "patch_type": "merge",
                                     "patch": '{"metadata": {"labels": {"tier": "front"}}}'})
    assert merged.ok and (await sandbox.deployment())["metadata"]["labels"]["tier"] == "front"
    jsonp = await gw.call("patch", {"kind": "deployment", "name": "web", "patch_type": "json",
                                    "patch": [{"op": "replace", "path": "/spec/replicas", "value": 2}]})
    assert jsonp.ok and (await sandbox.deployment())["spec"]["replicas"] == 2
    bad = await gw.call("patch", {"kind": "deployment", "name": "web", "patch_type": "json", "patch": {"a": 1}})
    assert not bad.ok and "list of operations" in bad.output

    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra"}, "data": {"a": "1"}}
    assert (await gw.call("apply", {"manifest": manifest})).output == "configmap/extra created"
    manifest["data"]["a"] = "2"
    assert (await gw.call("apply", {"manifest": manifest})).output == "configmap/extra configured"
    assert (await sandbox.backend.admin.get(CM, sandbox.namespace, "extra"))["data"]["a"] == "2"


async def test_invariants_block_or_flag_and_rbac_answers_403(sandbox: Sandbox) -> None:
    task = load_task(FIXTURE)
    gw = sandbox.gateway(task.checks)
    blocked = await gw.call("delete", {"kind": "deployment", "name": "web"})
    assert blocked.blocked and not blocked.ok and blocked.violation.startswith("forbidden: delete deployments/web")
    assert await sandbox.backend.admin.get_or_none(DEPLOY, sandbox.namespace, "web") is not None
    outside = await gw.call("get_resources", {"kind": "pods", "namespace": "kube-system"})
    assert outside.blocked and outside.violation.startswith("own_namespace_only")
    secret = await gw.call("get_resources", {"kind": "secrets"})
    assert secret.blocked and secret.violation.startswith("read_secrets")

    flagging = sandbox.gateway(Invariants(own_namespace_only=False, no_deletes=True, on_violation="flag"))
    forbidden = await flagging.call("get_resources", {"kind": "pods", "namespace": "default"})
    assert not forbidden.ok and not forbidden.blocked
    assert forbidden.output.startswith("Error from server (Forbidden)")
    pod = (await flagging.call("get_resources", {"kind": "pods"})).output.splitlines()[1].split()[0]
    deleted = await flagging.call("delete", {"kind": "pod", "name": pod})
    assert deleted.ok and deleted.violation.startswith("no_deletes") and deleted.output == f'pod "{pod}" deleted'

    rows = read_jsonl(sandbox.store, gw.audit.ref)
    assert [r["result"] for r in rows[:3]] == ["blocked", "blocked", "blocked"]
    assert flagging.audit.violations()[-1].startswith("flagged: no_deletes: delete pods/")
    assert flagging.audit.entries[0].result == "error" and flagging.audit.entries[0].namespace == "default"


async def test_step_budget_and_bounded_output(sandbox: Sandbox) -> None:
    gw = sandbox.gateway(steps=3)
    big = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
           "data": {f"k{i}": "v" * 100 for i in range(200)}}
    assert (await gw.call("apply", {"manifest": big})).ok
    out = await gw.call("get_resources", {"kind": "configmap", "name": "big"})
    assert out.ok and "[... truncated " in out.output and len(out.output.encode()) < 8300
    assert not (await gw.call("no_such_tool", {})).ok
    with pytest.raises(BudgetExceeded) as err:
        await gw.call("get_resources", {"kind": "pods"})
    assert err.value.kind is BudgetKind.steps
    assert len(gw.audit.entries) == 3
