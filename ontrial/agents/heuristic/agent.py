"""The heuristic baseline agent: reads the alert, pods, events, logs (and metrics when the trial
has them) through the gateway, walks the service graph from the alerting service towards a likely
cause, and proposes — or with ``config.apply: true`` applies — the obvious mitigation.

The walk: breadth-first from the alerting service along "calls" edges (service names found in a
deployment's environment and in the ConfigMaps it references). The first service whose own pods
fail (image pull, config error, OOM, crash loop, unschedulable, scaled to zero) is the cause; a
service that is merely unready is a symptom and the walk goes on to what it calls. With no cause
on the path, any failing service in the namespace is taken; failing that, the alerting service's
logs are searched for the dependency they name.

Config: ``apply`` (bool, default false), ``max_services`` (walk bound, default 8).
The last known-good ConfigMaps (``TrialContext.extra["baseline"]``, when the harness provides
them) let it recreate a deleted ConfigMap, as an SRE would from the platform's GitOps repository.
"""

from __future__ import annotations

from typing import Any

from ...gateway import ToolGateway
from ...models.trial import Diagnosis
from ..protocol import AgentOutput, Budgets, TrialContext
from .observe import Observations, owner_of
from .rules import Finding, dependencies, examine, symptom_hint

ALERT_SERVICE_LABELS = ("service", "deployment", "app", "app_kubernetes_io_name", "job", "container", "workload")
ERROR_RATIO = ('sum by (service) (rate(http_requests_total{code=~"5.."}[5m])) / '
               "sum by (service) (rate(http_requests_total[5m]))")


def alerting_service(alert: dict[str, Any], deployments: list[str]) -> str | None:
    labels = {k: str(v) for k, v in ((alert or {}).get("labels") or {}).items()}
    for key in ALERT_SERVICE_LABELS:
        if labels.get(key) in deployments:
            return labels[key]
    if labels.get("pod"):
        return owner_of(labels["pod"], deployments)
    return None


class HeuristicAgent:
    def __init__(self, apply: bool = False, max_services: int = 8):
        self.apply = apply
        self.max_services = max_services
        self.ctx: TrialContext | None = None

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> "HeuristicAgent":
        return cls(apply=bool(config.get("apply", False)), max_services=int(config.get("max_services", 8)))

    async def setup(self, ctx: TrialContext) -> None:
        self.ctx = ctx

    async def invoke(self, alert: dict[str, Any], tools: ToolGateway, budgets: Budgets) -> AgentOutput:
        baseline = (self.ctx.extra.get("baseline") if self.ctx else None) or None
        obs = Observations(tools)
        await obs.overview()
        start = alerting_service(alert, list(obs.deployments))
        metrics = await self._metrics(tools)
        finding = await self._walk(obs, start, baseline)
        if finding is None:
            return AgentOutput(text="No failing workload found"
                               + (f" (alerting service {start} looks healthy)" if start else "") + ".")
        applied, outcome = False, ""
        if self.apply and finding.plan is not None:
            tool, args = finding.plan
            result = await tools.call(tool, args)
            applied = result.ok
            outcome = f" Applied {tool}: {result.output.splitlines()[0] if result.output else ''}" if result.ok \
                else f" Tried {tool}, which failed: {result.output[:200]}"
        evidence = finding.evidence + ([metrics] if metrics else [])
        summary = (f"{finding.summary}. Root cause: {finding.label} in {finding.service}"
                   + (f" (alert fired on {start})" if start and start != finding.service else "")
                   + f". Mitigation: {finding.proposal}." + outcome)
        diagnosis = Diagnosis(root_cause=[finding.label], causal_service=finding.service,
                              mitigation=finding.proposal, mitigation_applied=applied, evidence=evidence,
                              summary=summary)
        return AgentOutput(diagnosis=diagnosis, text=summary)

    async def _walk(self, obs: Observations, start: str | None, baseline: dict[str, Any] | None) -> Finding | None:
        seen: set[str] = set()
        level = [start] if start in obs.deployments else []
        soft: Finding | None = None
        while level and len(seen) < self.max_services:
            level = [s for s in dict.fromkeys(level) if s not in seen and s in obs.deployments]
            seen.update(level)
            for service in level:  # cheap first: a healthy service's examination reads nothing new
                finding = await examine(obs, service, baseline)
                if finding is not None and finding.hard:
                    return finding
                soft = soft or finding
            level = [d for service in level for d in await dependencies(obs, service) if d not in seen]
        failing = sorted({p.owner for p in obs.pods if p.owner and p.hard_failure and p.owner not in seen})
        failing += sorted(d for d, row in obs.deployments.items() if row.get("READY", "").endswith("/0") and
                          d not in seen and d not in failing)
        for service in failing:
            finding = await examine(obs, service, baseline)
            if finding is not None and finding.hard:
                return finding
        if start in obs.deployments:
            hint = await symptom_hint(obs, start)
            if hint is not None:
                return hint
        return soft

    async def _metrics(self, tools: ToolGateway) -> str:
        """Per-service 5xx ratios as evidence, when the trial has a metrics source."""
        if "query_metrics" not in tools.tool_names():
            return ""
        result = await tools.call("query_metrics", {"query": ERROR_RATIO})
        if not result.ok or result.output.startswith("(empty"):
            return ""
        return "5xx ratio by service: " + "; ".join(result.output.splitlines()[:6])

    async def teardown(self) -> None:
        self.ctx = None
