"""The heuristic baseline agent: reads the alert, pods, events, logs (and metrics when the trial
has them) through the gateway, walks the service graph from the alerting service towards a likely
cause, and proposes — or with ``config.apply: true`` applies — the obvious mitigation.

The walk: breadth-first from the alerting service along "calls" edges (service names found in a
deployment's settings: env values and the ConfigMaps it reads). The first service whose own pods
fail (image pull, config error, OOM, crash loop, unschedulable, quota, own readiness probe,
scaled to zero) is the cause; a service that is merely unready is a symptom and the walk goes on
to what it calls. What a failing service's last rollout changed picks the label and the fix (a
rollback when the rollout caused it). With no cause on the path: any failing service; then
miswiring (a setting with a wrong port, a Service without endpoints or with the wrong
targetPort); then the alerting service's last rollout, when its logs show errors or the alert is
about its behaviour rather than Kubernetes state; then ConfigMaps that
drifted from the last known-good state; and otherwise "no-fault" (the alert is a false alarm).

Config: ``apply`` (bool, default false), ``max_services`` (walk bound, default 8).
The last known-good app objects (``TrialContext.extra["baseline"]``, when the harness provides
them) let it restore a deleted or drifted ConfigMap, as an SRE would from a GitOps repository.
"""

from __future__ import annotations

from typing import Any

from ...gateway import ToolGateway
from ...models.trial import Diagnosis
from ..protocol import AgentOutput, Budgets, TrialContext
from .changes import config_drift
from .finding import Finding, restart
from ...alerts import alert_labels
from .observe import Observations, owner_of
from .rules import examine, suspect_release
from .wiring import dependencies, endpoint_problem, referenced_configmaps, wrong_port

ALERT_SERVICE_LABELS = ("service", "deployment", "app", "app_kubernetes_io_name", "job", "container", "workload")
ERROR_RATIO = ('sum by (service) (rate(http_requests_total{code=~"5.."}[5m])) / '
               "sum by (service) (rate(http_requests_total[5m]))")


def alerting_service(alert: dict[str, Any], deployments: list[str]) -> str | None:
    labels = alert_labels(alert)
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
        seen: list[str] = []
        finding = await self._walk(obs, start, baseline, seen) or await self._elsewhere(
            obs, start, str((alert or {}).get("name") or ""), baseline, seen)
        if finding is None:
            summary = ("No failing workload, miswiring or configuration drift found"
                       + (f" around {start}" if start else "") + ": the alert looks like a false alarm (no-fault).")
            return AgentOutput(diagnosis=Diagnosis(root_cause=["no-fault"], mitigation="none needed",
                                                   evidence=[metrics] if metrics else [], summary=summary),
                               text=summary)
        applied, outcome = await self._mitigate(tools, finding)
        summary = (f"{finding.summary}. Root cause: {finding.label} in {finding.service}"
                   + (f" (alert fired on {start})" if start and start != finding.service else "")
                   + f". Mitigation: {finding.proposal}." + outcome)
        diagnosis = Diagnosis(root_cause=[finding.label], causal_service=finding.service,
                              mitigation=finding.proposal, mitigation_applied=applied,
                              evidence=finding.evidence + ([metrics] if metrics else []), summary=summary)
        return AgentOutput(diagnosis=diagnosis, text=summary)

    async def _mitigate(self, tools: ToolGateway, finding: Finding) -> tuple[bool, str]:
        if not self.apply or not finding.plan:
            return False, ""
        done = []
        for tool, args in finding.plan:
            result = await tools.call(tool, args)
            if not result.ok:
                return bool(done), f" Tried {tool}, which failed: {result.output[:200]}"
            done.append(f"{tool}: {result.output.splitlines()[0] if result.output else 'ok'}")
        return True, " Applied " + "; ".join(done)

    async def _walk(self, obs: Observations, start: str | None, baseline: dict[str, Any] | None,
                    seen: list[str]) -> Finding | None:
        level = [start] if start in obs.deployments else []
        soft: Finding | None = None
        while level and len(seen) < self.max_services:
            level = [s for s in dict.fromkeys(level) if s not in seen and s in obs.deployments]
            seen.extend(level)
            for service in level:  # cheap first: a healthy service's examination reads nothing new
                finding = await examine(obs, service, baseline)
                if finding is not None and finding.hard:
                    return finding
                soft = soft or finding
            level = [d for service in level for d in await dependencies(obs, service) if d not in seen]
        return soft

    async def _elsewhere(self, obs: Observations, start: str | None, alert_name: str,
                         baseline: dict[str, Any] | None, seen: list[str]) -> Finding | None:
        failing = sorted({p.owner for p in obs.pods
                          if p.owner and (p.hard_failure or p.restarts) and p.owner not in seen})
        failing += sorted(d for d, row in obs.deployments.items()
                          if row.get("READY", "").endswith("/0") and d not in seen and d not in failing)
        for service in failing:
            finding = await examine(obs, service, baseline)
            if finding is not None and finding.hard:
                return finding
        for service in seen:
            finding = await wrong_port(obs, service)
            if finding is not None:
                return finding
        finding = await endpoint_problem(obs, seen or list(obs.deployments))
        if finding is None and start in obs.deployments:
            finding = await suspect_release(obs, start, alert_name)
        return finding or await self._drift(obs, seen, baseline)

    async def _drift(self, obs: Observations, services: list[str], baseline: dict[str, Any] | None) -> Finding | None:
        users: dict[str, list[str]] = {}
        for service in services:
            for cm in referenced_configmaps(await obs.object("deployment", service)):
                users.setdefault(cm, []).append(service)
        for drift in await config_drift(obs, sorted(users), baseline):
            service = users[drift.configmap][0]
            label = "missing-configmap-key" if drift.missing and not drift.changed else "wrong-config-value"
            keys = sorted({*drift.missing, *drift.changed})
            return Finding(service, label, f"ConfigMap {drift.configmap} of {service} drifted from its known-good "
                           f"state ({', '.join(keys)})", [f"configmap/{drift.configmap}: {k} = "
                                                          f"{drift.changed[k][1] if k in drift.changed else '<absent>'}"
                                                          for k in keys],
                           [("patch", {"kind": "configmap", "name": drift.configmap, "patch_type": "merge",
                                       "patch": drift.restore_patch()}), *[restart(s) for s in users[drift.configmap]]],
                           f"restore ConfigMap {drift.configmap} and restart {', '.join(users[drift.configmap])}")
        return None

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
