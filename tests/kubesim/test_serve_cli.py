"""``python -m kubesim serve``: writes a working kubeconfig, serves kubectl 1.32 / 1.20 and the
Python client over HTTPS, and exits cleanly on SIGTERM/SIGINT even with a watch open."""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import httpx
import pytest
import yaml
from kubernetes import client, config

KUBECTL_132 = "/usr/bin/kubectl"
KUBECTL_120 = os.environ.get("KUBECTL_120", "/tmp/k120/root/usr/bin/kubectl")
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Served:
    proc: subprocess.Popen
    url: str
    http_url: str
    kubeconfig: Path

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15) -> tuple[int, str]:
        self.proc.send_signal(sig)
        out, _ = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out


def _first_line(proc: subprocess.Popen, timeout: float = 30) -> str:
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if sel.select(timeout=0.2):
                return proc.stdout.readline()
            if proc.poll() is not None:
                break
    finally:
        sel.close()
    output = proc.stdout.read() if proc.poll() is not None else ""
    raise AssertionError(f"kubesim serve did not start (rc={proc.poll()}): {output}")


def launch(tmp_path: Path, *extra: str) -> Served:
    kubeconfig = tmp_path / "kube" / "config"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubesim", "serve", "--port", "0", "--http-port", "0", "--kubeconfig",
         str(kubeconfig), "--time-scale", "0", "--seed", "3", "--log-level", "warning", *extra],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = _first_line(proc)
    m = re.search(r"serving (https://\S+)\s+kubeconfig: (\S+)\s+plain http: (http://\S+)", line)
    assert m, line
    assert Path(m.group(2)) == kubeconfig
    return Served(proc, m.group(1), m.group(3), kubeconfig)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    s = launch(tmp_path)
    try:
        yield s
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()


def kubectl(binary: str, served: Served, cache: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([binary, "--kubeconfig", str(served.kubeconfig), "--cache-dir", str(cache), *args],
                          capture_output=True, text=True, timeout=60)


def test_kubeconfig_points_at_https_with_admin_token(served: Served):
    doc = yaml.safe_load(served.kubeconfig.read_text())
    assert doc["current-context"] == "kubesim"
    (ctx,) = doc["contexts"]
    assert ctx["context"]["namespace"] == "default"
    (cluster,) = doc["clusters"]
    assert cluster["cluster"]["server"] == served.url and cluster["cluster"]["certificate-authority-data"]
    token = doc["users"][0]["user"]["token"]
    assert oct(served.kubeconfig.stat().st_mode & 0o777) == "0o600"
    assert httpx.get(f"{served.http_url}/api", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    assert httpx.get(f"{served.http_url}/api").status_code == 401


def test_kubectl_132_version_get_and_api_resources(served: Served, tmp_path: Path):
    if not os.access(KUBECTL_132, os.X_OK):
        pytest.skip(f"kubectl 1.32 not found at {KUBECTL_132}")
    version = kubectl(KUBECTL_132, served, tmp_path / "c1", "version")
    assert version.returncode == 0, version.stderr
    assert "Server Version: v1.32" in version.stdout and "WARNING" not in version.stderr
    pods = kubectl(KUBECTL_132, served, tmp_path / "c2", "get", "pods")
    assert pods.returncode == 0 and "No resources found in default namespace." in pods.stderr, pods
    nodes = kubectl(KUBECTL_132, served, tmp_path / "c2", "get", "nodes")
    assert re.search(r"kubesim-node-1\s+Ready", nodes.stdout), nodes
    resources = kubectl(KUBECTL_132, served, tmp_path / "c3", "api-resources")
    assert resources.returncode == 0, resources.stderr
    assert re.search(r"^deployments\s+deploy\s+apps/v1\s+true\s+Deployment$", resources.stdout, re.M), resources.stdout
    assert re.search(r"^pods\s+po\s+v1\s+true\s+Pod$", resources.stdout, re.M)


def test_kubectl_120_works_too(served: Served, tmp_path: Path):
    if not os.access(KUBECTL_120, os.X_OK):
        pytest.skip(f"kubectl 1.20 not found at {KUBECTL_120} (set KUBECTL_120 to a kubectl 1.20 binary)")
    version = kubectl(KUBECTL_120, served, tmp_path / "c1", "version")
    assert version.returncode == 0 and 'GitVersion:"v1.32' in version.stdout, version
    namespaces = kubectl(KUBECTL_120, served, tmp_path / "c2", "get", "ns")
    assert re.search(r"^kube-system\s+Active", namespaces.stdout, re.M), namespaces
    can_i = kubectl(KUBECTL_120, served, tmp_path / "c2", "auth", "can-i", "delete", "pods")
    assert can_i.stdout.strip() == "yes", can_i


def test_python_client_through_the_kubeconfig(served: Served):
    api = config.new_client_from_config(config_file=str(served.kubeconfig))
    try:
        names = {n.metadata.name for n in client.CoreV1Api(api).list_namespace().items}
    finally:
        api.close()
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_stops_the_server_even_with_an_open_watch(tmp_path: Path, sig: int):
    s = launch(tmp_path)
    token = yaml.safe_load(s.kubeconfig.read_text())["users"][0]["user"]["token"]
    with httpx.Client(timeout=30) as http:
        with http.stream("GET", f"{s.http_url}/api/v1/namespaces/default/pods", params={"watch": "true"},
                         headers={"Authorization": f"Bearer {token}"}) as watch:
            assert watch.status_code == 200
            started = time.monotonic()
            rc, out = s.stop(sig)
            elapsed = time.monotonic() - started
            assert watch.read() is not None
    assert rc == 0, out
    assert "kubesim stopped" in out and "Traceback" not in out
    assert elapsed < 10  # typically well under a second; generous for loaded CI machines


def test_bad_arguments_are_usage_errors(tmp_path: Path):
    for args in (["--port", "70000"], ["--time-scale", "-1"]):
        proc = subprocess.run([sys.executable, "-m", "kubesim", "serve", "--kubeconfig", str(tmp_path / "kc"), *args],
                              cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and "usage:" in proc.stderr, proc
