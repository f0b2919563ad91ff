"""The ``python`` adapter: an agent class importable in the worker, run in-process.

``AgentSpec(kind="python", config={"entrypoint": "package.module:Class", "options": {...}})`` (or
``kind="python:package.module:Class"``). ``Class(**options)`` (a factory function works too) must
implement the Agent protocol. It gets the in-process tool gateway in ``invoke``, and its
``TrialContext`` carries the trial's audited endpoints: ``kubeconfig_path`` is the audit proxy's
kubeconfig (for agents that bring kubectl or a Kubernetes client) and ``extra["endpoints"]`` has
the MCP URL. The wrapped agent's ``setup`` therefore runs at the start of ``invoke``, once the
endpoints exist; set ``"endpoints": false`` to skip them (``kubeconfig_path`` is then None).
"""

from __future__ import annotations

import dataclasses
import importlib
import shutil
import tempfile
from typing import Any

from ...errors import ConfigError
from ...gateway import ToolGateway
from ..endpoints import TrialEndpointHost
from ..protocol import Agent, AgentOutput, Budgets, TrialContext


def load_entrypoint(entrypoint: str) -> Any:
    """"package.module:Attr.Sub" → the object."""
    module_name, _, attr = (entrypoint or "").partition(":")
    if not module_name or not attr:
        raise ConfigError(f"python agent entrypoint must look like 'package.module:Class', got {entrypoint!r}")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as e:
        raise ConfigError(f"python agent entrypoint {entrypoint!r}: cannot import {module_name}: {e}") from e
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ConfigError(f"python agent entrypoint {entrypoint!r}: {module_name} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def build_python_agent(entrypoint: str, options: dict[str, Any] | None = None) -> Agent:
    factory = load_entrypoint(entrypoint)
    if not callable(factory):
        raise ConfigError(f"python agent entrypoint {entrypoint!r} is not a class or factory")
    try:
        agent = factory(**(options or {}))
    except TypeError as e:
        raise ConfigError(f"python agent {entrypoint!r} rejected its options: {e}") from e
    missing = [m for m in ("setup", "invoke", "teardown") if not callable(getattr(agent, m, None))]
    if missing:
        raise ConfigError(f"python agent {entrypoint!r} lacks {', '.join(missing)} (see ontrial.agents.Agent)")
    return agent


class PythonAgent:
    def __init__(self, inner: Agent, *, endpoints: bool = True):
        self.inner = inner
        self.with_endpoints = endpoints
        self.ctx: TrialContext | None = None
        self._host: TrialEndpointHost | None = None
        self._workdir: str | None = None
        self._inner_ready = False

    @classmethod
    def from_config(cls, config: dict[str, Any], entrypoint: str | None = None) -> "PythonAgent":
        entrypoint = entrypoint or config.get("entrypoint")
        if not entrypoint:
            raise ConfigError("python agent needs config.entrypoint ('package.module:Class')")
        return cls(build_python_agent(entrypoint, config.get("options")), endpoints=config.get("endpoints", True))

    async def setup(self, ctx: TrialContext) -> None:
        self.ctx = ctx

    async def invoke(self, alert: dict[str, Any], tools: ToolGateway, budgets: Budgets) -> AgentOutput:
        assert self.ctx is not None, "setup() first"
        ctx = dataclasses.replace(self.ctx, kubeconfig_path=None)
        if self.with_endpoints:
            self._host = TrialEndpointHost(tools)
            self._workdir = tempfile.mkdtemp(prefix="ontrial-agent-")
            endpoints = await self._host.start(self._workdir)
            ctx = dataclasses.replace(ctx, kubeconfig_path=endpoints.kubeconfig_path,
                                      extra={**ctx.extra, "endpoints": endpoints.as_dict()})
        self._inner_ready = True
        await self.inner.setup(ctx)
        return await self.inner.invoke(alert, tools, budgets)

    async def teardown(self) -> None:
        try:
            if self._inner_ready:
                await self.inner.teardown()
        finally:
            self._inner_ready = False
            if self._host is not None:
                await self._host.stop()
                self._host = None
            if self._workdir:
                shutil.rmtree(self._workdir, ignore_errors=True)
                self._workdir = None
