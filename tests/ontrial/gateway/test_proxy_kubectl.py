"""The audit proxy with real kubectl (1.32, and 1.20 when available) in front of kubesim."""

from __future__ import annotations

import asyncio
import os
import shutil
import ssl
from pathlib import Path

import httpx
import pytest

from ontrial.agents.endpoints import upstream_of
from ontrial.gateway import Invariants
from ontrial.gateway.proxy import AuditProxy
from ontrial.sandbox.kinds import lookup_kind

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
KUBECTL_120 = os.environ.get("KUBECTL_120", "/tmp/k120/root/usr/bin/kubectl")
DEPLOY = lookup_kind("Deployment")
pytestmark = pytest.mark.skipif(not os.path.exists(KUBECTL), reason="kubectl is not installed")


class Kubectl:
    def __init__(self, binary: str, kubeconfig: Path, home: Path):
        self.binary, self.kubeconfig, self.home = binary, kubeconfig, home

    async def __call__(self, *args: str) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            self.binary, "--kubeconfig", str(self.kubeconfig), *args, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env={"HOME": str(self.home), "PATH": os.environ["PATH"]})
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        return proc.returncode, out.decode(), err.decode()

    async def start(self, *args: str) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            self.binary, "--kubeconfig", str(self.kubeconfig), *args, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env={"HOME": str(self.home), "PATH": os.environ["PATH"]})


async def proxied(box, tmp_path: Path, binary: str = KUBECTL, **gateway_kw):
    gw = box.gateway(**gateway_kw)
    proxy = AuditProxy(gw, upstream_of(gw))
    await proxy.start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(proxy.kubeconfig())
    return gw, proxy, Kubectl(binary, kubeconfig, tmp_path)


async def test_kubectl_reads_and_writes_are_audited_one_step_per_command(web_box, tmp_path: Path) -> None:
    gw, proxy, kubectl = await proxied(web_box, tmp_path, steps=20)
    try:
        rc, out, err = await kubectl("get", "pods")
        assert rc == 0 and out.splitlines()[0].split()[:3] == ["NAME", "READY", "STATUS"], err
        discovery = [e for e in gw.audit.entries if e.verb is None]
        assert discovery and all(e.result == "ok" and e.tool == "kube-api" for e in discovery)
        assert gw.budget.used_steps == 1  # discovery is free
        before = await gw.sim_seconds()
        rc, out, err = await kubectl("scale", "deployment/web", "--replicas=3")
        assert rc == 0 and "scaled" in out, err
        assert gw.budget.used_steps == 2  # kubectl scale: a GET and a PATCH, one command
        assert await gw.sim_seconds() >= before + 5  # cluster time moves per step on kubesim
        dep = await web_box.backend.admin.get(DEPLOY, web_box.namespace, "web")
        assert dep["spec"]["replicas"] == 3
        rc, out, err = await kubectl("logs", "deployment/web", "--tail=1")
        assert rc == 0 and out.strip(), err
    finally:
        await proxy.stop()
    scale = [e for e in gw.audit.entries if e.verb == "patch"]
    assert len(scale) == 1 and (scale[0].resource, scale[0].name, scale[0].namespace) == (
        "deployments/scale", "web", web_box.namespace)
    assert scale[0].args["command"] == "kubectl scale" and scale[0].args["session"]
    assert '"replicas":3' in scale[0].args["body"].replace(" ", "") and scale[0].sim_seconds is not None
    assert any(e.resource == "pods/log" and e.result == "ok" for e in gw.audit.entries)
    # the transcript sees each counted request
    calls = [r for r in gw.recorder.records if r["type"] == "tool.call"]
    assert {c["gen_ai.tool.name"] for c in calls} == {"kube-api"} and len(calls) >= 4


async def test_forbidden_requests_are_refused_with_a_status(web_box, tmp_path: Path) -> None:
    gw, proxy, kubectl = await proxied(web_box, tmp_path)
    try:
        rc, _, err = await kubectl("delete", "namespace", web_box.namespace, "--wait=false")
        assert rc != 0 and "Error from server (Forbidden): ontrial proxy: blocked by policy: own_namespace_only" in err
        rc, _, err = await kubectl("get", "pods", "-n", "default")
        assert rc != 0 and "own_namespace_only: list pods in default" in err
        rc, _, err = await kubectl("get", "secret", "anything")
        assert rc != 0 and "read_secrets: get secrets/anything" in err
        rc, _, err = await kubectl("delete", "deployment", "web")
        assert rc != 0 and "forbidden: delete deployments/web" in err
        rc, _, err = await kubectl("get", "pods", "--as", "system:admin")
        assert rc != 0 and "impersonation" in err
        rc, _, err = await kubectl("exec", "deploy/web", "--", "sh")
        assert rc != 0 and "exec, attach, port-forward and proxy are not available" in err
    finally:
        await proxy.stop()
    assert await web_box.backend.admin.get_or_none(DEPLOY, web_box.namespace, "web") is not None
    violations = gw.audit.violations()
    assert [v.split(":")[1].strip() for v in violations] == [
        "own_namespace_only", "own_namespace_only", "read_secrets", "forbidden", "impersonation"]
    assert all(v.startswith("blocked: ") for v in violations)


async def test_flag_mode_forwards_and_rbac_still_applies(web_box, tmp_path: Path) -> None:
    gw, proxy, kubectl = await proxied(web_box, tmp_path, invariants=Invariants(on_violation="flag"))
    try:
        rc, _, err = await kubectl("get", "secrets")
        assert rc != 0 and "Forbidden" in err and "cannot list resource \"secrets\"" in err
    finally:
        await proxy.stop()
    [entry] = [e for e in gw.audit.entries if e.violation]
    assert entry.result == "error" and entry.violation.startswith("read_secrets") and "403" in entry.error
    assert gw.audit.violations() == [f"flagged: {entry.violation}"]


async def test_step_budget_refuses_the_command_past_it(web_box, tmp_path: Path) -> None:
    gw, proxy, kubectl = await proxied(web_box, tmp_path, steps=2)
    try:
        assert (await kubectl("get", "pods"))[0] == 0
        assert (await kubectl("get", "deployments"))[0] == 0
        rc, _, err = await kubectl("get", "services")
        assert rc != 0 and "steps budget exhausted" in err
    finally:
        await proxy.stop()
    assert gw.budget.used_steps == 2 and gw.budget.exhausted is not None
    refused = [e for e in gw.audit.entries if e.error and "budget exhausted" in e.error]
    assert refused and refused[0].result == "blocked" and refused[0].resource == "services"


async def test_watch_and_follow_stream_through(web_box, tmp_path: Path) -> None:
    gw, proxy, kubectl = await proxied(web_box, tmp_path)
    try:
        watch = await kubectl.start("get", "deployments", "-w", "--output-watch-events")
        first = await asyncio.wait_for(watch.stdout.readline(), 20)
        assert b"web" in first or b"EVENT" in first
        assert (await gw.call("scale", {"kind": "deployment", "name": "web", "replicas": 1})).ok
        seen = b""
        while b"MODIFIED" not in seen:
            seen += await asyncio.wait_for(watch.stdout.readline(), 20)
        pod = (await gw.call("get_resources", {"kind": "pods"})).output.splitlines()[1].split()[0]
        follow = await kubectl.start("logs", "-f", pod)  # streamed through as it comes (kubesim ends it)
        assert (await asyncio.wait_for(follow.stdout.readline(), 20)).strip()
        for proc in (watch, follow):
            if proc.returncode is None:
                proc.terminate()
            await proc.wait()
        assert watch.returncode != 0  # the watch was still open: ended by us, not by the proxy
        watches = [e for e in gw.audit.entries if e.verb == "watch"]
        assert watches and watches[0].result == "ok"  # recorded when the stream opened
    finally:
        await proxy.stop()


async def test_only_the_proxy_token_gets_in_and_admin_paths_are_not_served(web_box, tmp_path: Path) -> None:
    gw, proxy, _ = await proxied(web_box, tmp_path)
    ca = tmp_path / "ca.pem"
    ca.write_bytes(proxy.ca_pem)
    try:
        async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=str(ca))) as http:
            wrong = await http.get(proxy.url + "/api/v1/namespaces/x/pods", headers={"Authorization": "Bearer x"})
            assert wrong.status_code == 401 and wrong.json()["kind"] == "Status"
            agent_token = upstream_of(gw).token
            theirs = await http.get(proxy.url + "/version", headers={"Authorization": f"Bearer {agent_token}"})
            assert theirs.status_code == 401  # the real token is useless here, and never in the kubeconfig
            assert agent_token not in proxy.kubeconfig()
            auth = {"Authorization": f"Bearer {proxy.proxy_token}"}
            admin = await http.post(proxy.url + "/kubesim/v1/clock/advance", json={"seconds": 60}, headers=auth)
            assert admin.status_code == 404 and "not served to agents" in admin.json()["message"]
    finally:
        await proxy.stop()
    assert [e.result for e in gw.audit.entries] == ["error", "error", "blocked"]
    assert gw.budget.used_steps == 0


@pytest.mark.skipif(not os.path.exists(KUBECTL_120), reason=f"kubectl 1.20 not found at {KUBECTL_120} "
                    "(set KUBECTL_120)")
async def test_kubectl_120_counts_each_request(web_box, tmp_path: Path) -> None:
    gw, proxy, kubectl = await proxied(web_box, tmp_path, binary=KUBECTL_120)
    try:
        rc, out, err = await kubectl("get", "pods")
        assert rc == 0 and "NAME" in out, err
        rc, out, err = await kubectl("scale", "deployment/web", "--replicas=2")
        assert rc == 0, err
    finally:
        await proxy.stop()
    counted = [e for e in gw.audit.entries if e.verb]
    assert all("session" not in e.args for e in counted)
    assert gw.budget.used_steps == len(counted) >= 3
