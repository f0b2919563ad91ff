"""Where a run happens: the given Temporal server and cluster, or throwaway local ones.

Without ``--temporal-address`` a Temporal dev server is started; without ``--kubeconfig`` an
embedded kubesim (``time_scale=0``: its clock moves only when the sandbox advances it, so trials
take seconds). Both are stopped when the run ends. A given kubeconfig is taken for a real cluster
unless ``--sandbox-kind kubesim`` says otherwise.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from temporalio.client import Client

from worker.app import connect as connect_client

from ..errors import ConfigError, InfraError
from .devserver import DevServer

SandboxKind = Literal["kubesim", "kubernetes"]


@dataclass(frozen=True)
class Stack:
    client: Client
    kubeconfig: str
    sandbox_kind: SandboxKind
    local_temporal: bool


async def connect(address: str, namespace: str) -> Client:
    try:
        return await connect_client(address, namespace)
    except RuntimeError as err:
        raise InfraError(f"cannot reach Temporal at {address}: {err}", transient=False) from err


@asynccontextmanager
async def open_temporal(*, temporal_address: str | None, temporal_namespace: str,
                        scratch: Path) -> AsyncIterator[Client]:
    """The given Temporal server, or a throwaway dev server for the duration of the block."""
    if temporal_address is not None:
        yield await connect(temporal_address, temporal_namespace)
        return
    server = DevServer(scratch / "temporal-dev-server.log", namespace=temporal_namespace)
    try:
        yield await server.start()
    finally:
        server.stop()


@asynccontextmanager
async def open_stack(*, temporal_address: str | None, temporal_namespace: str, kubeconfig: str | None,
                     sandbox_kind: SandboxKind | None, scratch: Path) -> AsyncIterator[Stack]:
    """``sandbox_kind`` None means: kubesim when it is started here, else a real cluster."""
    async with AsyncExitStack() as exits:
        if kubeconfig is None:
            import kubesim.embedded  # only local runs need the simulator

            cluster = kubesim.embedded.start(time_scale=0, kubeconfig_path=scratch / "kubesim.kubeconfig")
            exits.callback(cluster.stop)
            kubeconfig, sandbox_kind = cluster.kubeconfig_path, "kubesim"
        elif not Path(kubeconfig).is_file():
            raise ConfigError(f"--kubeconfig {kubeconfig}: no such file")
        else:
            sandbox_kind = sandbox_kind or "kubernetes"
        client = await exits.enter_async_context(open_temporal(
            temporal_address=temporal_address, temporal_namespace=temporal_namespace, scratch=scratch))
        assert sandbox_kind is not None
        yield Stack(client, str(Path(kubeconfig).resolve()), sandbox_kind, temporal_address is None)
