"""The ``http`` adapter: an agent running as a service, invoked over a small JSON contract.

Config: ``url`` (required), ``headers`` (``${ENV_VAR}`` expanded, e.g. an API key),
``request_timeout`` (seconds per HTTP request, default 30), ``poll_seconds`` (default 1).

**Invocation.** ``POST <url>`` with::

    {"contract": "ontrial.agent-invocation/1", "trial": "<opaque id>", "namespace": "ot-…",
     "alert": {...}, "budgets": {"steps", "tokens", "wall_seconds"}, "prompt": "<task statement>",
     "tools": {"mcp_url": "http://127.0.0.1:…/…/mcp", "http_url": "http://127.0.0.1:…/…/tools",
               "definitions": [{name, description, input_schema}]},
     "kubeconfig": "<kubeconfig YAML of the audit proxy>", "callback_url": "http://127.0.0.1:…/…/result"}

The agent answers one of:

- ``200`` with the **result** (synchronous);
- ``202`` with ``{"status_url": "..."}`` (or a ``Location`` header): the harness polls
  ``GET status_url`` → ``{"status": "running"}`` until ``{"status": "completed", "result": {...}}``
  or ``{"status": "failed", "error": "..."}``;
- ``202`` without a status URL: the agent later ``POST``s the result to ``callback_url``.

A **result** is ``{"diagnosis": {root_cause, causal_service, mitigation, mitigation_applied,
evidence, summary}, "text": "free-text answer", "usage": {"input_tokens", "output_tokens",
"cost_usd"}}``, every field optional (see ``ontrial.agents.answer``). Tools: MCP at ``mcp_url``, or
``POST http_url/<tool>`` with the arguments object → ``{"ok", "output", "blocked", "violation"}``
(429 once the step budget is spent), or kubectl with the kubeconfig. When the harness stops the
agent (budget, wall clock) it sends ``DELETE status_url`` (best effort). Errors reaching the agent
service, or a non-2xx answer, are the agent's failures.
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any
from urllib.parse import urljoin

import httpx
import structlog

from ...errors import ConfigError
from ...gateway import ToolGateway
from ..answer import output_from_result
from ..endpoints import TrialEndpointHost, race_budget
from ..prompt import system_prompt, task_prompt
from ..protocol import AgentOutput, Budgets, TrialContext

log = structlog.get_logger(__name__)

CONTRACT = "ontrial.agent-invocation/1"
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class AgentServiceError(Exception):
    """The agent service failed (unreachable, non-2xx, reported failure): the agent's own failure."""


def expand_env(value: str) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in os.environ:
            raise ConfigError(f"http agent header references ${{{m.group(1)}}}, which is not set")
        return os.environ[m.group(1)]
    return _ENV.sub(sub, value)


class HttpAgent:
    def __init__(self, url: str, *, headers: dict[str, str] | None = None, request_timeout: float = 30.0,
                 poll_seconds: float = 1.0):
        if not url or not url.startswith(("http://", "https://")):
            raise ConfigError(f"http agent needs config.url (http:// or https://), got {url!r}")
        self.url = url
        self.headers = {k: expand_env(str(v)) for k, v in (headers or {}).items()}
        self.request_timeout = request_timeout
        self.poll_seconds = poll_seconds
        self.ctx: TrialContext | None = None
        self._host: TrialEndpointHost | None = None
        self._status_url: str | None = None
        self._done = False

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> "HttpAgent":
        return cls(str(config.get("url") or ""), headers=config.get("headers"),
                   request_timeout=float(config.get("request_timeout", 30.0)),
                   poll_seconds=float(config.get("poll_seconds", 1.0)))

    async def setup(self, ctx: TrialContext) -> None:
        self.ctx = ctx

    async def invoke(self, alert: dict[str, Any], tools: ToolGateway, budgets: Budgets) -> AgentOutput:
        assert self.ctx is not None, "setup() first"
        self._host = TrialEndpointHost(tools)
        endpoints = await self._host.start()
        prompt = system_prompt(self.ctx.namespace) + "\n\n" + task_prompt(alert, self.ctx.namespace, budgets)
        body = {"contract": CONTRACT, "trial": self.ctx.trial, "namespace": self.ctx.namespace, "alert": alert,
                "budgets": budgets.as_dict(), "prompt": prompt,
                "tools": {"mcp_url": endpoints.mcp_url, "http_url": endpoints.tools_url,
                          "definitions": tools.definitions()},
                "kubeconfig": endpoints.kubeconfig, "callback_url": endpoints.result_url}
        self.ctx.transcript.message("user", prompt)
        async with httpx.AsyncClient(timeout=self.request_timeout, headers=self.headers) as client:
            try:
                result = await race_budget(self._converse(client, body), tools.budget)
                self._done = True
            finally:
                if not self._done:
                    await self._cancel(client)
        output = output_from_result(result)
        if output.text:
            self.ctx.transcript.message("assistant", output.text)
        return output

    async def _converse(self, client: httpx.AsyncClient, body: dict[str, Any]) -> Any:
        # a synchronous agent works for the whole request: no read timeout (the wall budget bounds it)
        resp = await self._send(client, "POST", self.url, json=body,
                                timeout=httpx.Timeout(self.request_timeout, read=None))
        if resp.status_code == 200:
            return _json(resp)
        if resp.status_code != 202:
            raise AgentServiceError(f"agent service answered {resp.status_code}: {resp.text[:300]}")
        doc = _json(resp) if resp.content else {}
        status_url = (doc or {}).get("status_url") if isinstance(doc, dict) else None
        status_url = status_url or resp.headers.get("location")
        if not status_url:
            assert self._host is not None and self._host.mcp is not None
            return await self._host.mcp.results.get()
        self._status_url = urljoin(self.url, status_url)
        while True:
            await asyncio.sleep(self.poll_seconds)
            poll = await self._send(client, "GET", self._status_url)
            if poll.status_code != 200:
                raise AgentServiceError(f"agent status {self._status_url} answered {poll.status_code}: "
                                        f"{poll.text[:300]}")
            state = _json(poll)
            status = str((state or {}).get("status", "")).lower() if isinstance(state, dict) else ""
            if status in ("completed", "succeeded", "done"):
                return state.get("result", {k: v for k, v in state.items() if k != "status"})
            if status in ("failed", "error"):
                raise AgentServiceError(f"agent reported failure: {state.get('error') or state}")

    async def _send(self, client: httpx.AsyncClient, method: str, url: str, **kw: Any) -> httpx.Response:
        try:
            return await client.request(method, url, **kw)
        except httpx.HTTPError as e:
            raise AgentServiceError(f"agent service {method} {url} failed: {type(e).__name__}: {e}") from e

    async def _cancel(self, client: httpx.AsyncClient) -> None:
        if self._status_url:
            try:
                await asyncio.wait_for(client.delete(self._status_url), timeout=5.0)
            except Exception as e:  # noqa: BLE001 - best effort: the agent is being stopped anyway
                log.info("http_agent.cancel_failed", error=str(e))

    async def teardown(self) -> None:
        if self._host is not None:
            await self._host.stop()
            self._host = None


def _json(resp: httpx.Response) -> Any:
    try:
        return resp.json()
    except ValueError as e:
        raise AgentServiceError(f"agent service answered non-JSON ({resp.status_code}): {resp.text[:200]}") from e
