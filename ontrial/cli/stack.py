"""Where a run happens: the given Temporal server and cluster, or throwaway local ones.

Without ``--temporal-address`` a Temporal dev server is started; without ``--kubeconfig`` an
embedded kubesim (``time_scale=0``: its clock moves only when the sandbox advances it, so trials
take seconds). Both are stopped when the run ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from ..errors import ConfigError, InfraError
from .devserver import DevServer

ClusterKind = Literal["kubesim", "kubernetes"]


@dataclass(frozen=True)
class Stack:
    client: Client
    kubeconfig: str
    cluster_kind: ClusterKind
    local_temporal: bool


async def connect(address: str, namespace: str) -> Client:
    try:
        return await Client.connect(address, namespace=namespace, data_converter=pydantic_data_converter)
    except RuntimeError as err:
        raise InfraError(f"cannot reach Temporal at {address}: {err}", transient=False) from err


@asynccontextmanager
async def open_stack(*, temporal_address: str | None, temporal_namespace: str, kubeconfig: str | None,
                     cluster_kind: ClusterKind, scratch: Path) -> AsyncIterator[Stack]:
    async with AsyncExitStack() as exits:
        if kubeconfig is None:
            import kubesim.embedded  # only local runs need the simulator

            cluster = kubesim.embedded.start(time_scale=0, kubeconfig_path=scratch / "kubesim.kubeconfig")
            exits.callback(cluster.stop)
            kubeconfig, cluster_kind = cluster.kubeconfig_path, "kubesim"
        elif not Path(kubeconfig).is_file():
            raise ConfigError(f"--kubeconfig {kubeconfig}: no such file")
        if temporal_address is None:
            server = DevServer(scratch / "temporal-dev-server.log", namespace=temporal_namespace)
            exits.callback(server.stop)
            client = await server.start()
        else:
            client = await connect(temporal_address, temporal_namespace)
        yield Stack(client, str(Path(kubeconfig).resolve()), cluster_kind, temporal_address is None)
