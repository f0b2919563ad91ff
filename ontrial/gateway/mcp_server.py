"""The tool gateway as a per-trial MCP server (streamable HTTP), plus a small JSON tool API.

One server per trial, on 127.0.0.1 and a free port, inside the agent step's event loop. Every
MCP ``tools/call`` is a ``ToolGateway.call``: counted, checked against the invariants, audited,
bounded. The URL carries an unguessable per-trial path segment (a capability URL), so any MCP
client can use it without extra headers while other local processes cannot guess it.

Routes under ``<base> = http://127.0.0.1:<port>/<secret>``:

- ``<base>/mcp``: MCP over streamable HTTP (``tools/list``, ``tools/call``).
- ``GET <base>/tools``: ``{"tools": [{name, description, input_schema}]}``.
- ``POST <base>/tools/<name>`` with the arguments object → ``{"ok", "output", "blocked", "violation"}``;
  a call past the step budget → 429 ``{"error", "budget_exhausted": "steps"}``.
- ``POST <base>/result``: an agent's final result (the HTTP agent contract's callback); 202.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from typing import Any

import mcp_types as types
from mcp.server import Server
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from .budget import BudgetExceeded
from .gateway import ToolGateway
from .serving import LocalServer

SERVER_NAME = "ontrial"
BUDGET_NOTE = "Stop calling tools now and give your final answer."


class McpToolServer:
    """``await start()`` → base URL; ``mcp_url``/``tools_url``/``result_url``; ``await stop()``."""

    def __init__(self, gateway: ToolGateway, *, host: str = "127.0.0.1"):
        self.gateway = gateway
        self.secret = secrets.token_urlsafe(18)
        self.results: asyncio.Queue[Any] = asyncio.Queue()
        self._mcp = Server(SERVER_NAME, version="1", instructions=(
            "Tools for investigating and mitigating an incident in one Kubernetes namespace. Every call counts "
            "against your step budget and is audited."),
            on_list_tools=self._list_tools, on_call_tool=self._call_tool)
        prefix = f"/{self.secret}"
        app = self._mcp.streamable_http_app(
            streamable_http_path=f"{prefix}/mcp", host=host,
            custom_starlette_routes=[Route(f"{prefix}/tools", self._http_list, methods=["GET"]),
                                     Route(f"{prefix}/tools/{{name}}", self._http_call, methods=["POST"]),
                                     Route(f"{prefix}/result", self._http_result, methods=["POST"])])
        self._server = LocalServer(app, host=host, lifespan="on")

    @property
    def base_url(self) -> str:
        return f"{self._server.url}/{self.secret}"

    @property
    def mcp_url(self) -> str:
        return f"{self.base_url}/mcp"

    @property
    def tools_url(self) -> str:
        return f"{self.base_url}/tools"

    @property
    def result_url(self) -> str:
        return f"{self.base_url}/result"

    async def start(self) -> str:
        await self._server.start()
        return self.base_url

    async def stop(self) -> None:
        await self._server.stop()

    def mcp_config(self, name: str = "ontrial") -> dict[str, Any]:
        """The de-facto ``mcpServers`` config file most MCP clients read."""
        return {"mcpServers": {name: {"type": "http", "url": self.mcp_url}}}

    # -- MCP -------------------------------------------------------------------------------
    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=d["name"], description=d["description"], input_schema=d["input_schema"])
            for d in self.gateway.definitions()])

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            result = await self.gateway.call(params.name, dict(params.arguments or {}))
        except BudgetExceeded as e:
            return types.CallToolResult(content=[types.TextContent(text=f"{e}. {BUDGET_NOTE}")], is_error=True)
        return types.CallToolResult(content=[types.TextContent(text=result.output or "(no output)")],
                                    is_error=not result.ok)

    # -- JSON tool API ---------------------------------------------------------------------
    async def _http_list(self, request: Request) -> JSONResponse:
        return JSONResponse({"tools": self.gateway.definitions()})

    async def _http_call(self, request: Request) -> JSONResponse:
        try:
            args = json.loads(await request.body() or b"{}")
        except ValueError:
            return JSONResponse({"error": "the body must be a JSON object of tool arguments"}, status_code=400)
        if not isinstance(args, dict):
            return JSONResponse({"error": "the body must be a JSON object of tool arguments"}, status_code=400)
        try:
            result = await self.gateway.call(request.path_params["name"], args)
        except BudgetExceeded as e:
            return JSONResponse({"error": f"{e}. {BUDGET_NOTE}", "budget_exhausted": e.kind.value}, status_code=429)
        return JSONResponse({"ok": result.ok, "output": result.output, "blocked": result.blocked,
                             "violation": result.violation})

    async def _http_result(self, request: Request) -> JSONResponse:
        try:
            doc = json.loads(await request.body() or b"null")
        except ValueError:
            return JSONResponse({"error": "the result must be JSON"}, status_code=400)
        await self.results.put(doc)
        return JSONResponse({"accepted": True}, status_code=202)
