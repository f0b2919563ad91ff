"""The sandbox backend against a real embedded kubesim: namespace, RBAC, token, quota, app, fault,
snapshot, teardown, the reaper, and Kubernetes errors mapped to InfraError."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator

import pytest
import yaml

from ontrial.artifacts import LocalArtifactStore
from ontrial.errors import InfraError
from ontrial.models.trial import SandboxSettings
from ontrial.sandbox import KubeBackend, KubeError, KubeRest, client_from_kubeconfig_text, reap_expired
from ontrial.sandbox.kinds import lookup_kind
from ontrial.sandbox.kube import EXPIRES_ANNOTATION, MANAGED_LABEL, TRIAL_LABEL
from ontrial.tasks import load_task

embedded = pytest.importorskip("kubesim.embedded", reason="kubesim is not importable")
FIXTURE = Path(__file__).parents[1] / "fixtures" / "shop" / "web-bad-image" / "task.yaml"
NS = lookup_kind("Namespace")
DEPLOY = lookup_kind("Deployment")
POD = lookup_kind("Pod")


@pytest.fixture(scope="module")
def sim() -> Iterator["embedded.Embedded"]:
    with embedded.start(time_scale=0) as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> LocalArtifactStore:
    return LocalArtifactStore(tmp_path / "artifacts")


def backend_for(sim, store: LocalArtifactStore, **settings) -> KubeBackend:
    return KubeBackend.from_settings(SandboxSettings(kubeconfig=sim.kubeconfig_path, **settings), store)


async def test_create_sandbox_scopes_the_agent(sim, store: LocalArtifactStore) -> None:
    backend = backend_for(sim, store, ttl_seconds=600)
    async with backend:
        ref = await backend.create("suite/web-bad-image/0")
        ns = await backend.admin.get(NS, None, ref.namespace)
        labels, annotations = ns["metadata"]["labels"], ns["metadata"]["annotations"]
        assert labels[MANAGED_LABEL] == "true" and len(labels[TRIAL_LABEL]) == 16
        expires = datetime.fromisoformat(annotations[EXPIRES_ANNOTATION].replace("Z", "+00:00"))
        assert timedelta(seconds=500) < expires - datetime.now(timezone.utc) <= timedelta(seconds=600)
        assert "web-bad-image" not in ref.namespace
        assert ref.token_expires_at is not None

        kubeconfig = store.get(ref.agent_kubeconfig_ref)
        doc = yaml.safe_load(kubeconfig)
        assert doc["contexts"][0]["context"]["namespace"] == ref.namespace
        assert doc["users"][0]["user"]["token"] != sim.admin_token
        agent = client_from_kubeconfig_text(kubeconfig)
        rest = KubeRest(agent.api_client)
        try:
            assert await rest.list(POD, ref.namespace) == []
            with pytest.raises(KubeError) as outside:
                await rest.list(POD, "default")
            assert outside.value.status == 403 and not outside.value.transient
            with pytest.raises(KubeError) as secrets:
                await rest.list(lookup_kind("Secret"), ref.namespace)
            assert secrets.value.status == 403
            with pytest.raises(KubeError) as namespaces:
                await rest.delete(NS, None, ref.namespace)
            assert namespaces.value.status == 403
        finally:
            agent.close()

        quotas = await backend.admin.list(lookup_kind("ResourceQuota"), ref.namespace)
        limits = await backend.admin.list(lookup_kind("LimitRange"), ref.namespace)
        assert quotas and quotas[0]["spec"]["hard"]["pods"] and limits
        await backend.teardown(ref.namespace)
        assert await backend.admin.get_or_none(NS, None, ref.namespace) is None
        await backend.teardown(ref.namespace)  # idempotent


async def test_app_becomes_healthy_fault_applies_snapshot_taken(sim, store: LocalArtifactStore) -> None:
    task = load_task(FIXTURE)
    backend = backend_for(sim, store)
    async with backend:
        ref = await backend.create("suite/web-bad-image/1")
        try:
            applied = await backend.deploy(ref.namespace, task.app_objects(), task.profiles())
            assert applied == ["ConfigMap/web-config created", "Deployment/web created", "Service/web created"]
            assert (await backend.deploy(ref.namespace, task.app_objects()))[1] == "Deployment/web configured"
            await backend.wait_healthy(ref.namespace, 120)
            dep = await backend.admin.get(DEPLOY, ref.namespace, "web")
            assert dep["status"]["availableReplicas"] == 2

            snap = json.loads(store.get(await backend.snapshot(ref.trial_id, ref.namespace, "baseline.json")))
            assert [d["metadata"]["name"] for d in snap["objects"]["Deployment"]] == ["web"]
            assert len(snap["objects"]["Pod"]) == 2

            lines = await backend.inject(ref.namespace, list(task.fault.steps))
            assert lines == ["patch Deployment/web (strategic)"]
            dep = await backend.admin.get(DEPLOY, ref.namespace, "web")
            assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "shop/web:9.9"
            with pytest.raises(InfraError, match="not healthy after 20s") as err:
                await backend.wait_healthy(ref.namespace, 20)
            assert not err.value.transient

            deleted = await backend.inject(ref.namespace, [{"delete": {"kind": "Pod", "selector": "app=web"}}])
            assert deleted[0].startswith("delete Pod -l app=web (")
        finally:
            await backend.teardown(ref.namespace)


async def test_bad_manifests_and_steps_are_permanent_errors_naming_the_object(sim, store) -> None:
    backend = backend_for(sim, store)
    async with backend:
        ref = await backend.create("suite/bad/0")
        try:
            bad = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "broken"},
                   "spec": {"replicas": "three"}}
            with pytest.raises(InfraError, match="Deployment/broken") as err:
                await backend.deploy(ref.namespace, [bad])
            assert not err.value.transient
            with pytest.raises(InfraError, match=r"fault.steps\[0\].*Deployment/missing") as err:
                await backend.inject(ref.namespace, [{"patch": {"kind": "Deployment", "name": "missing",
                                                                "patch": {"spec": {"replicas": 1}}}}])
            assert not err.value.transient
        finally:
            await backend.teardown(ref.namespace)


async def test_server_errors_are_transient(sim, store) -> None:
    backend = backend_for(sim, store)
    async with backend:
        await backend.admin.request("POST", "/kubesim/v1/faults",
                                    body={"error_rate": 1.0, "paths": ["/api/v1/namespaces"], "methods": ["POST"]})
        try:
            with pytest.raises(InfraError) as err:
                await backend.create("suite/faulty/0")
            assert err.value.transient
        finally:
            await backend.admin.request("DELETE", "/kubesim/v1/faults")


async def test_unreachable_cluster_is_transient(tmp_path: Path, store) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "x",
        "clusters": [{"name": "x", "cluster": {"server": "http://127.0.0.1:9"}}],
        "users": [{"name": "x", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}]}))
    backend = KubeBackend.from_settings(SandboxSettings(kubeconfig=str(config)), store)
    backend.admin.timeout = 2
    async with backend:
        with pytest.raises(InfraError) as err:
            await backend.create("suite/offline/0")
        assert err.value.transient and "create namespace" in str(err.value)


async def test_reaper_deletes_only_expired_managed_namespaces(sim, store) -> None:
    backend = backend_for(sim, store, ttl_seconds=60)
    async with backend:
        ref = await backend.create("suite/reap/0")
        unmanaged = {"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": "someone-else", "labels": {"team": "x"},
            "annotations": {EXPIRES_ANNOTATION: "2000-01-01T00:00:00Z"}}}
        await backend.admin.create(NS, None, unmanaged)
        try:
            assert ref.namespace not in await reap_expired(backend.admin)
            later = datetime.now(timezone.utc) + timedelta(seconds=120)
            reaped = await reap_expired(backend.admin, now=later)
            assert ref.namespace in reaped and "someone-else" not in reaped
            await backend.teardown(ref.namespace)
        finally:
            await backend.admin.delete(NS, None, "someone-else")


@pytest.mark.skipif(not shutil.which("kubectl"), reason="kubectl is not installed")
async def test_agent_kubeconfig_works_with_kubectl(sim, store) -> None:
    backend = backend_for(sim, store)
    async with backend:
        ref = await backend.create("suite/kubectl/0")
        try:
            path = str(store.local_path(ref.agent_kubeconfig_ref))

            def kubectl(*args: str) -> subprocess.CompletedProcess:
                return subprocess.run(["kubectl", "--kubeconfig", path, *args], capture_output=True, text=True,
                                      timeout=60)

            own = await asyncio.to_thread(kubectl, "get", "serviceaccounts")
            assert own.returncode == 0 and "agent" in own.stdout, own.stderr
            other = await asyncio.to_thread(kubectl, "get", "pods", "-n", "kube-system")
            assert other.returncode != 0 and "forbidden" in other.stderr.lower()
        finally:
            await backend.teardown(ref.namespace)


async def test_request_timeouts_are_transient(sim, store) -> None:
    backend = backend_for(sim, store)
    async with backend:
        await backend.admin.request("POST", "/kubesim/v1/faults",
                                    body={"timeout_rate": 1.0, "timeout_seconds": 3, "paths": ["/api/v1/namespaces"],
                                          "methods": ["POST"]})
        backend.admin.timeout = 0.5
        try:
            with pytest.raises(InfraError) as err:
                await backend.create("suite/slow/0")
            assert err.value.transient and "no response" in str(err.value)
        finally:
            backend.admin.timeout = 30
            await backend.admin.request("DELETE", "/kubesim/v1/faults")


def _workload(kind: str, name: str, image: str, **spec) -> dict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name}, "spec": {
        "selector": {"matchLabels": labels}, **spec,
        "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": name, "image": image}]}}}}


async def test_healthy_means_statefulsets_and_daemonsets_rolled_out_too(sim, store) -> None:
    backend = backend_for(sim, store)
    async with backend:
        ref = await backend.create("suite/stateful/1")
        try:
            await backend.deploy(ref.namespace, [
                _workload("StatefulSet", "journal", "nginx:1.25", serviceName="journal", replicas=2),
                _workload("DaemonSet", "shipper", "nginx:no-such-tag")])
            with pytest.raises(InfraError, match="not healthy after 60s") as err:
                await backend.wait_healthy(ref.namespace, 60)
            assert "daemonset shipper: 0 of 1 updated pods are available" in str(err.value)
            assert "statefulset" not in str(err.value)  # the StatefulSet came up in order meanwhile
            await backend.inject(ref.namespace, [{"patch": {"kind": "DaemonSet", "name": "shipper", "type": "json",
                "patch": [{"op": "replace", "path": "/spec/template/spec/containers/0/image",
                           "value": "nginx:1.25"}]}}])
            await backend.wait_healthy(ref.namespace, 120)
        finally:
            await backend.teardown(ref.namespace)
