"""The sandbox lifecycle every backend implements: create → deploy → wait healthy → snapshot →
inject → teardown. One implementation (``ontrial.sandbox.kube.KubeBackend``) serves kubesim and
real clusters; the ABC keeps the trial steps independent of it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from ..models.trial import SandboxRef
from .clock import Waiter
from .rest import KubeRest


class SandboxBackend(ABC):
    """Creates and destroys per-trial sandboxes. Methods raise ``InfraError`` on cluster failures."""

    waiter: Waiter
    admin: KubeRest

    @abstractmethod
    async def create(self, trial_id: str) -> SandboxRef:
        """Namespace + agent ServiceAccount/Role/RoleBinding + token + kubeconfig + quota/limits."""

    @abstractmethod
    async def deploy(self, namespace: str, objects: list[dict[str, Any]],
                     profiles: list[dict[str, Any]] | None = None) -> list[str]:
        """Register workload profiles (kubesim only), then create or patch the app objects."""

    @abstractmethod
    async def wait_healthy(self, namespace: str, timeout: float) -> None:
        """Wait until every Deployment, StatefulSet and DaemonSet rolled out; InfraError after ``timeout``
        cluster seconds."""

    @abstractmethod
    async def snapshot(self, trial_id: str, namespace: str, name: str) -> str:
        """Store the namespace's objects as a JSON artifact; returns its ref."""

    @abstractmethod
    async def inject(self, namespace: str, steps: list[Any]) -> list[str]:
        """Apply the fault steps in order; one description line per step."""

    @abstractmethod
    async def teardown(self, namespace: str) -> None:
        """Delete the namespace and wait until it is gone. Idempotent."""

    @abstractmethod
    async def discard(self, namespace: str) -> None:
        """Best-effort delete of a half-created sandbox, without waiting (never raises)."""

    async def close(self) -> None:
        """Release connections."""

    async def __aenter__(self) -> "SandboxBackend":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
