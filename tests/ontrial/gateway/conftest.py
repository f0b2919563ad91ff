"""A sandbox with the small web app on the session's kubesim, for the MCP server and proxy tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator

import pytest_asyncio

from ontrial.artifacts import LocalArtifactStore
from ontrial.gateway import AuditLog, Budget, Invariants, ToolGateway
from ontrial.models.trial import SandboxSettings
from ontrial.sandbox import KubeBackend, client_from_kubeconfig_text
from ontrial.sandbox.clock import kubesim_clock
from ontrial.tasks import load_task
from ontrial.transcript import Transcript

WEB_TASK = Path(__file__).parents[1] / "fixtures" / "shop" / "web-bad-image" / "task.yaml"


@dataclass
class WebBox:
    backend: KubeBackend
    store: LocalArtifactStore
    namespace: str
    agent: Any  # ClusterAccess with the agent's scoped token
    task: Any

    def gateway(self, invariants: Any = None, steps: int | None = None, **kw: Any) -> ToolGateway:
        inv = invariants if invariants is not None else Invariants.from_task(self.task.checks)
        return ToolGateway(self.agent.api_client, self.namespace, inv, Budget(steps=steps), AuditLog("t"),
                           recorder=Transcript("t", None), waiter=self.backend.waiter, seconds_per_step=5.0,
                           sim_clock=kubesim_clock(self.backend.admin), **kw)


@pytest_asyncio.fixture
async def web_box(trial_cluster, tmp_path: Path) -> AsyncIterator[WebBox]:
    store = LocalArtifactStore(tmp_path)
    backend = KubeBackend.from_settings(SandboxSettings(kubeconfig=trial_cluster.kubeconfig_path), store)
    task = load_task(WEB_TASK)
    ref = await backend.create(f"gateway/{tmp_path.name}")
    try:
        await backend.deploy(ref.namespace, task.app_objects(), task.profiles())
        await backend.wait_healthy(ref.namespace, 120)
        agent = client_from_kubeconfig_text(store.get(ref.agent_kubeconfig_ref))
        yield WebBox(backend, store, ref.namespace, agent, task)
        agent.close()
    finally:
        await backend.teardown(ref.namespace)
        await backend.close()
