"""Run real kubectl binaries (1.20 and 1.32) against an embedded kubesim, each with its own
discovery cache and kubeconfig, and wait on cluster state through kubectl itself."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest
import yaml

FIXTURES = Path(__file__).parent / "fixtures"
KUBECTL_132 = "/usr/bin/kubectl"
DEFAULT_KUBECTL_120 = "/tmp/k120/root/usr/bin/kubectl"
VERSIONS = ("1.20", "1.32")


def kubectl_binary(version: str) -> str | None:
    """The kubectl binary for a version, or None when it is not installed here."""
    path = os.environ.get("KUBECTL_120", DEFAULT_KUBECTL_120) if version == "1.20" else KUBECTL_132
    return path if path and os.access(path, os.X_OK) else None


def missing_reason(version: str) -> str:
    if version == "1.20":
        where = os.environ.get("KUBECTL_120", DEFAULT_KUBECTL_120)
        return (f"kubectl 1.20 not found at {where} (set KUBECTL_120, or extract the Debian kubernetes-client "
                "1.20 package there)")
    return f"kubectl 1.32 not found at {KUBECTL_132}"


@dataclass(frozen=True)
class Result:
    args: tuple[str, ...]
    rc: int
    out: str
    err: str

    def describe(self) -> str:
        return f"kubectl {' '.join(self.args)}\nrc={self.rc}\n--- stdout\n{self.out}\n--- stderr\n{self.err}"


class Kubectl:
    """One kubectl version bound to one server, with a private cache dir and kubeconfig."""

    def __init__(self, binary: str, version: str, kubeconfig: Path, cache_dir: Path, workdir: Path):
        self.binary = binary
        self.version = version
        self.kubeconfig = kubeconfig
        self.cache_dir = cache_dir
        self.workdir = workdir

    def _argv(self, args: tuple[str, ...]) -> list[str]:
        return [self.binary, f"--kubeconfig={self.kubeconfig}", f"--cache-dir={self.cache_dir}", *args]

    def _env(self, extra: dict[str, str] | None) -> dict[str, str]:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.workdir), "LANG": "C.UTF-8"}
        env.update(extra or {})
        return env

    def run(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None,
            timeout: float = 60) -> Result:
        proc = subprocess.run(self._argv(args), input=stdin, capture_output=True, text=True, timeout=timeout,
                              env=self._env(env), cwd=self.workdir)
        return Result(tuple(args), proc.returncode, proc.stdout, proc.stderr)

    def ok(self, *args: str, **kw: Any) -> str:
        """Run and require exit 0; returns stdout."""
        r = self.run(*args, **kw)
        assert r.rc == 0, r.describe()
        return r.out

    def fails(self, *args: str, **kw: Any) -> Result:
        """Run and require a non-zero exit."""
        r = self.run(*args, **kw)
        assert r.rc != 0, r.describe()
        return r

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(self._argv(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=self._env(None), cwd=self.workdir)

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args, "-o", "json"))

    def jsonpath(self, *args: str, path: str) -> str:
        return self.ok(*args, "-o", f"jsonpath={path}")


def make_kubectl(version: str, kubeconfig_source: str, tmp: Path) -> Kubectl:
    """A kubectl with a fresh --cache-dir and a private copy of the server's kubeconfig."""
    binary = kubectl_binary(version)
    assert binary is not None
    root = tmp / f"kubectl-{version}"
    (root / "cache").mkdir(parents=True)
    kubeconfig = root / "kubeconfig"
    shutil.copyfile(kubeconfig_source, kubeconfig)
    kubeconfig.chmod(0o600)
    return Kubectl(binary, version, kubeconfig, root / "cache", root)


# -- tables as kubectl prints them ----------------------------------------------------------------
def parse_table(text: str) -> list[dict[str, str]]:
    """Rows of kubectl's column output as dicts keyed by header (columns split on 2+ spaces)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return []
    header = lines[0]
    # titles are separated by >= 3 spaces; multi-word titles ("NOMINATED NODE") by one
    cols = [(m.group(0), m.start()) for m in re.finditer(r"\S+(?: \S+)*", header)]
    rows = []
    for ln in lines[1:]:
        row = {}
        for n, (name, start) in enumerate(cols):
            stop = cols[n + 1][1] if n + 1 < len(cols) else len(ln)
            row[name] = ln[start:stop].strip()
        rows.append(row)
    return rows


# -- the server ------------------------------------------------------------------------------------
def register_fixture_profiles(url: str, token: str) -> None:
    """Register the fixture workload profiles through the admin endpoint."""
    profiles = list(yaml.safe_load_all((FIXTURES / "profile-web.yaml").read_text()))
    r = httpx.post(f"{url}/kubesim/v1/profiles", json=profiles, headers={"Authorization": f"Bearer {token}"},
                   timeout=10)
    assert r.status_code == 200, r.text
    assert r.json() == {"registered": len(profiles)}


def wait_until(check: Callable[[], Any], advance: Callable[[float], None], step: float = 5.0,
               limit: float = 900.0, what: str = "condition") -> Any:
    """Advance simulated time in ``step`` increments until ``check()`` is truthy (returns its value)."""
    waited = 0.0
    last: Any = None
    while True:
        try:
            last = check()
        except AssertionError as e:  # a kubectl call that failed: keep its text for the message
            last = e
        if last and not isinstance(last, AssertionError):
            return last
        if waited >= limit:
            raise AssertionError(f"{what} not reached after {limit:g} simulated seconds; last: {last}")
        advance(step)
        waited += step


class LineReader:
    """Lines a streaming kubectl (``get -w``) prints, collected by a background thread."""

    def __init__(self, proc: subprocess.Popen[str]):
        self.proc = proc
        self.lines: queue.Queue[str | None] = queue.Queue()
        assert proc.stdout is not None
        self._thread = threading.Thread(target=self._pump, args=(proc.stdout,), daemon=True)
        self._thread.start()

    def _pump(self, stream: Any) -> None:
        for line in stream:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def until(self, predicate: Callable[[list[str]], bool], timeout: float = 20.0) -> list[str]:
        """New lines until ``predicate(lines)`` holds, the stream ends, or ``timeout`` real seconds pass."""
        got: list[str] = []
        deadline = time.monotonic() + timeout
        while not predicate(got):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                break
            if line is None:
                break
            got.append(line)
        return got


# -- fixtures shared by the kubectl test modules (import them into the module namespace) ---------
@pytest.fixture
def sim() -> Iterator[Any]:
    """A fresh embedded kubesim with a frozen clock and the fixture profiles registered."""
    from kubesim import embedded

    server = embedded.start(time_scale=0)
    try:
        register_fixture_profiles(server.url, server.admin_token)
        yield server
    finally:
        server.stop()


@pytest.fixture(params=VERSIONS, ids=lambda v: f"kubectl-{v}")
def kubectl(request: pytest.FixtureRequest, sim: Any, tmp_path: Path) -> Kubectl:
    if kubectl_binary(request.param) is None:
        pytest.skip(missing_reason(request.param))
    return make_kubectl(request.param, sim.kubeconfig_path, tmp_path)


def web_pods(k: Kubectl, selector: str = "app=web") -> list[dict[str, str]]:
    return parse_table(k.ok("get", "pods", "-l", selector))


def healthy_web(k: Kubectl, replicas: int = 2) -> list[dict[str, str]] | None:
    """The web pods when exactly ``replicas`` are Running and ready, else None."""
    rows = web_pods(k)
    good = len(rows) == replicas and all(r["READY"] == "1/1" and r["STATUS"] == "Running" for r in rows)
    return rows if good else None


def wait_healthy(k: Kubectl, sim: Any, replicas: int = 2, limit: float = 900.0) -> list[dict[str, str]]:
    return wait_until(lambda: healthy_web(k, replicas), sim.advance, limit=limit,
                      what=f"{replicas} web pods Running 1/1")


@pytest.fixture
def app(kubectl: Kubectl, sim: Any) -> list[dict[str, str]]:
    """The fixture app applied and rolled out: returns the two ready web pod rows."""
    out = kubectl.ok("apply", "-f", str(FIXTURES / "app.yaml"))
    assert "deployment.apps/web created" in out, out
    return wait_healthy(kubectl, sim)
