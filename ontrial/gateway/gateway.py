"""The tool boundary between an agent and its sandbox.

Every call is one step against the budget, is checked against the task's invariants (blocked or
flagged), runs with the agent's own scoped credentials (so RBAC applies too), is audited, and
returns bounded text. Cluster errors (a 403, a 404, a bad patch) come back as tool errors the
agent can read; only budget exhaustion escapes, as ``BudgetExceeded``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Protocol

import structlog
from kubernetes.client import ApiClient

from ..sandbox.clock import Waiter
from ..sandbox.rest import KubeError, KubeRest
from .audit import AuditLog
from .budget import Budget
from .context import ToolContext, ToolError, TrialExtras, kube_error_text
from .invariants import Action, Invariants
from .output import MAX_OUTPUT_BYTES, bound
from .tools import ALL_TOOLS, TOOLS, ToolSpec, tool_definitions

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    output: str
    blocked: bool = False
    violation: str | None = None


class ToolCallRecorder(Protocol):
    """Where the gateway mirrors calls for the transcript (``ontrial.transcript.Transcript``)."""

    def tool_call(self, call_id: str, tool: str, args: dict[str, Any]) -> None: ...

    def tool_result(self, call_id: str, tool: str, result: ToolResult) -> None: ...

    def usage(self, input_tokens: int, output_tokens: int, *, model: str | None = None,
              cost_usd: float = 0.0) -> None: ...


class ToolGateway:
    def __init__(self, api_client_for_agent: ApiClient | KubeRest, namespace: str, task_invariants: Any,
                 budget: Budget, audit: AuditLog, *, actor: str = "agent", recorder: ToolCallRecorder | None = None,
                 waiter: Waiter | None = None, seconds_per_step: float = 0.0,
                 sim_clock: Callable[[], Awaitable[float | None]] | None = None,
                 max_output: int = MAX_OUTPUT_BYTES, request_timeout: float = 30.0,
                 extras: TrialExtras | None = None):
        """``waiter`` + ``seconds_per_step``: on kubesim, let cluster time pass after each call, so a
        frozen simulated clock still moves as the agent works (deterministically, per step).
        ``sim_clock``: reads the cluster's simulated time for audit entries (kubesim).
        ``extras``: alerts, runbooks and the metrics source behind the non-Kubernetes read tools."""
        self.rest = api_client_for_agent if isinstance(api_client_for_agent, KubeRest) else \
            KubeRest(api_client_for_agent, timeout=request_timeout)
        self.namespace = namespace
        self.invariants = task_invariants if isinstance(task_invariants, Invariants) else \
            Invariants.from_task(task_invariants)
        self.budget = budget
        self.audit = audit
        self.actor = actor
        self.recorder = recorder
        self.waiter = waiter
        self.seconds_per_step = seconds_per_step
        self.sim_clock = sim_clock
        self.max_output = max_output
        self.extras = extras or TrialExtras()
        self._cache: dict[str, Any] = {}

    def tool_names(self) -> list[str]:
        """The tools this trial offers: the Kubernetes tools, alerts, and metrics/runbooks when available."""
        names = [*TOOLS, "get_alerts"]
        if self.extras.prometheus:
            names.append("query_metrics")
        if self.extras.runbooks:
            names.append("get_runbook")
        return [n for n in ALL_TOOLS if n in names]

    def definitions(self) -> list[dict[str, Any]]:
        """Name, description, JSON Schema of each tool on offer (model tool-calling, MCP listings)."""
        return tool_definitions(self.tool_names())

    def report_usage(self, input_tokens: int = 0, output_tokens: int = 0, cost_usd: float = 0.0,
                     model: str | None = None) -> None:
        """Agents report each model call's usage here (it is also written to the transcript);
        exceeding the token budget raises BudgetExceeded."""
        if self.recorder:
            self.recorder.usage(input_tokens, output_tokens, model=model, cost_usd=cost_usd)
        self.budget.add_tokens(input_tokens, output_tokens, cost_usd)

    async def call(self, tool: str, args: dict[str, Any] | None = None) -> ToolResult:
        args = dict(args or {})
        step = self.budget.charge_step()  # raises BudgetExceeded: the call is not made
        call_id = f"call-{step}"
        if self.recorder:
            self.recorder.tool_call(call_id, tool, args)
        t0 = time.monotonic()
        result, action = await self._run(tool, args)
        elapsed_ms = (time.monotonic() - t0) * 1000
        sim_seconds = await self.sim_seconds()
        outcome = "blocked" if result.blocked else ("ok" if result.ok else "error")
        self.audit.record(actor=self.actor, tool=tool, args=args, action=action, result=outcome,
                          violation=result.violation, error=None if result.ok else result.output[:500],
                          duration_ms=elapsed_ms, sim_seconds=sim_seconds)
        if self.recorder:
            self.recorder.tool_result(call_id, tool, result)
        await self.pass_step_time()
        return result

    async def pass_step_time(self) -> None:
        """After a step (a tool call, a kubectl command through the proxy): let cluster time pass (kubesim)."""
        if self.waiter is not None and self.seconds_per_step > 0:
            await self.waiter.pass_time(self.seconds_per_step)

    async def sim_seconds(self) -> float | None:
        """The cluster's simulated time for audit entries, or None (real clusters, or unreadable)."""
        if self.sim_clock is None:
            return None
        try:
            return await self.sim_clock()
        except Exception:  # noqa: BLE001 - the audit entry matters more than its sim timestamp
            return None

    async def _run(self, tool: str, args: dict[str, Any]) -> tuple[ToolResult, Action | None]:
        spec: ToolSpec | None = ALL_TOOLS.get(tool)
        if spec is None or tool not in self.tool_names():
            return ToolResult(False, f"error: unknown tool {tool!r}; tools: {', '.join(self.tool_names())}"), None
        try:
            clean = spec.validate(args)
        except ToolError as e:
            return ToolResult(False, str(e)), None
        target = clean.get("namespace") or self.namespace
        action = spec.plan(clean, target)
        violation = self.invariants.violation(action, self.namespace)
        if violation and self.invariants.blocks:
            log.info("gateway.blocked", tool=tool, violation=violation)
            return ToolResult(False, f"blocked by policy: {violation}", blocked=True, violation=violation), action
        try:
            output = await spec.handler(ToolContext(self.rest, target, self.extras, self._cache), clean)
            result = ToolResult(True, bound(output, self.max_output, spec.keep), violation=violation)
        except ToolError as e:
            result = ToolResult(False, bound(str(e), self.max_output), violation=violation)
        except KubeError as e:
            result = ToolResult(False, bound(kube_error_text(e), self.max_output), violation=violation)
        except Exception as e:  # noqa: BLE001 - a tool's own failure is reported, never blamed on the agent
            log.warning("gateway.tool_failed", tool=tool, error=f"{type(e).__name__}: {e}")
            result = ToolResult(False, f"error: {tool} failed: {type(e).__name__}: {e}", violation=violation)
        return result, action
