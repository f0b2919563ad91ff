"""The per-trial endpoints agents outside the harness's process use: MCP tools and an audited kubeconfig.

``TrialEndpointHost`` starts, around one ``ToolGateway``, the MCP server (and JSON tool API) and
the Kubernetes audit proxy; both share the gateway's budget, invariants, audit log, transcript and
clock. ``race_budget`` runs an external agent until it finishes or a budget the MCP server or the
proxy enforces runs out — then the agent is stopped and ``BudgetExceeded`` is raised, as for
in-process agents.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, TypeVar

from ..gateway import BudgetExceeded, ToolGateway
from ..gateway.budget import Budget
from ..gateway.mcp_server import McpToolServer
from ..gateway.proxy import AuditProxy

T = TypeVar("T")
BUDGET_POLL_SECONDS = 0.05


@dataclass(frozen=True)
class Upstream:
    """The agent's scoped access to the API server (what the proxy forwards with)."""

    server: str
    token: str | None
    ca_data: str | None
    verify_tls: bool


def upstream_of(gateway: ToolGateway) -> Upstream:
    """The credentials the gateway itself uses: the agent's ServiceAccount token, its CA."""
    cfg = gateway.rest.api_client.configuration
    auth = (cfg.api_key or {}).get("authorization") or (cfg.api_key or {}).get("BearerToken")
    token = auth.split(" ", 1)[1] if auth and auth.lower().startswith("bearer ") else auth
    ca_data = None
    if cfg.ssl_ca_cert and Path(cfg.ssl_ca_cert).is_file():
        ca_data = base64.b64encode(Path(cfg.ssl_ca_cert).read_bytes()).decode()
    return Upstream(cfg.host.rstrip("/"), token, ca_data, bool(cfg.verify_ssl))


@dataclass(frozen=True)
class TrialEndpoints:
    namespace: str
    mcp_url: str | None = None
    tools_url: str | None = None
    result_url: str | None = None
    kubeconfig: str | None = None  # the audited kubeconfig's content
    kubeconfig_path: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "mcp_url": self.mcp_url, "tools_url": self.tools_url,
                "result_url": self.result_url, "kubeconfig_path": self.kubeconfig_path}


class TrialEndpointHost:
    def __init__(self, gateway: ToolGateway, *, mcp: bool = True, proxy: bool = True):
        self.gateway = gateway
        self.mcp = McpToolServer(gateway) if mcp else None
        # a gateway without a cluster behind it (a cassette replay) has tools but nothing to proxy to
        self.proxy = AuditProxy(gateway, upstream_of(gateway)) if proxy and hasattr(gateway, "rest") else None
        self.endpoints: TrialEndpoints | None = None

    async def start(self, workdir: str | Path | None = None) -> TrialEndpoints:
        """Start both servers; the kubeconfig is written to ``workdir/kubeconfig`` when a workdir is given."""
        try:
            if self.mcp is not None:
                await self.mcp.start()
            kubeconfig, path = None, None
            if self.proxy is not None:
                await self.proxy.start()
                kubeconfig = self.proxy.kubeconfig()
                if workdir is not None:
                    file = Path(workdir) / "kubeconfig"
                    file.write_text(kubeconfig)
                    file.chmod(0o600)
                    path = str(file)
        except BaseException:
            await self.stop()
            raise
        self.endpoints = TrialEndpoints(
            namespace=self.gateway.namespace,
            mcp_url=self.mcp.mcp_url if self.mcp else None, tools_url=self.mcp.tools_url if self.mcp else None,
            result_url=self.mcp.result_url if self.mcp else None, kubeconfig=kubeconfig, kubeconfig_path=path)
        return self.endpoints

    async def stop(self) -> None:
        """Stop both servers (idempotent)."""
        for server in (self.proxy, self.mcp):
            if server is not None:
                with contextlib.suppress(Exception):
                    await server.stop()


async def wait_exhausted(budget: Budget) -> BudgetExceeded:
    """Returns once a budget is exhausted (steps spent through MCP or the proxy, tokens, wall)."""
    while (exceeded := budget.exceeded()) is None:
        await asyncio.sleep(BUDGET_POLL_SECONDS)
    return exceeded


async def race_budget(work: Awaitable[T], budget: Budget) -> T:
    """``await work`` unless a budget runs out first: then ``work`` is cancelled and BudgetExceeded raised."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(wait_exhausted(budget))
    try:
        done, _ = await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            return task.result()
        raise watcher.result()
    finally:
        for t in (task, watcher):
            if not t.done():
                t.cancel()
        await asyncio.gather(task, watcher, return_exceptions=True)
