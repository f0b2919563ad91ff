"""Does a task's trigger alert really fire? Watches kubesim's namespace-scoped alerting for it.

Used by the trial (the agent starts on the Alertmanager payload of the first firing trigger alert)
and by task validation. On kubesim with telemetry, the task's service profiles (the
``telemetry`` sections) and alerting rules are registered for the trial namespace (the rules only
when the harness has not already), then simulated time passes in scrape-sized steps until the
trigger alert is firing or ``trigger.fire_within_seconds`` ran out. Without telemetry, or without
rules, the watch says why it cannot check (``unavailable``).
"""

from __future__ import annotations

from typing import Any

from ..models.trial import TrialSpec
from ..sandbox.clock import KubesimWaiter, wait_until
from ..sandbox.kubeconfig import load_admin
from ..sandbox.rest import KubeError, KubeRest
from .model import Task

RULES_PATH = "/kubesim/v1/namespaces/{namespace}/rules"
PROFILES_PATH = "/kubesim/v1/telemetry/profiles"
ALERTS_PATH = "/kubesim/v1/namespaces/{namespace}/prometheus/api/v1/alerts"
NOTIFICATIONS_PATH = "/kubesim/v1/namespaces/{namespace}/notifications"
POLL_SECONDS = 15.0


class AlertWatch:
    def __init__(self, task: Task, spec: TrialSpec, namespace: str, unavailable: str | None = None):
        self.task = task
        self.spec = spec
        self.namespace = namespace
        self.unavailable = unavailable  # "not checked (<why>)" when the alert cannot be watched
        self.seen: set[str] = set()

    @classmethod
    async def start(cls, task: Task, spec: TrialSpec, namespace: str) -> AlertWatch:
        """A watch for ``namespace``; registers the task's rules there when nobody has yet."""
        rules = task.alert_rules()
        if rules is None:
            return cls(task, spec, namespace, "not checked (the task has no alerting rules)")
        if spec.sandbox.kind != "kubesim":
            return cls(task, spec, namespace, "not checked (only on kubesim)")
        access = load_admin(spec.sandbox.kubeconfig, spec.sandbox.context)
        try:
            rest = KubeRest(access.api_client)
            path = RULES_PATH.format(namespace=namespace)
            try:
                await rest.request("GET", path)
            except KubeError as e:
                if e.status == 503 or (e.status == 404 and "no rules registered" not in e.message):
                    return cls(task, spec, namespace, "not checked (no telemetry on this cluster)")
                if e.status != 404:
                    raise e.infra(f"read alerting rules of {namespace}") from e
                try:
                    await rest.request("PUT", path, body=rules)
                except KubeError as put_error:
                    raise put_error.infra(f"register alerting rules for {namespace}") from put_error
            services = task.service_profiles()
            if services:
                try:
                    await rest.request("POST", PROFILES_PATH, body=services)
                except KubeError as e:
                    raise e.infra("register the task's service profiles with kubesim telemetry") from e
        finally:
            access.close()
        return cls(task, spec, namespace)

    def _matches(self, alert: dict[str, Any]) -> bool:
        labels = alert.get("labels") or {}
        want = self.task.trigger.alert
        if labels.get("alertname") != want.name or alert.get("state") != "firing":
            return False
        service = want.labels.get("service")
        return service is None or labels.get("service") in (None, service)

    async def wait_firing(self) -> bool:
        """Let simulated time pass until the trigger alert fires; False when the bound runs out."""
        access = load_admin(self.spec.sandbox.kubeconfig, self.spec.sandbox.context)
        try:
            rest = KubeRest(access.api_client)
            path = ALERTS_PATH.format(namespace=self.namespace)

            async def probe() -> tuple[bool, None]:
                try:
                    doc = (await rest.request("GET", path)).json() or {}
                except KubeError as e:
                    raise e.infra(f"read alerts of {self.namespace}") from e
                alerts = ((doc.get("data") or {}).get("alerts") or []) if isinstance(doc, dict) else []
                for alert in alerts:
                    labels = alert.get("labels") or {}
                    if alert.get("state") == "firing":
                        self.seen.add(f"{labels.get('alertname')}{{service={labels.get('service', '')}}}")
                return any(self._matches(a) for a in alerts), None

            bound = max(POLL_SECONDS, self.task.trigger.fire_within_seconds - self.task.fault.settle_seconds)
            fired, _ = await wait_until(KubesimWaiter(rest), probe, timeout=bound, step=POLL_SECONDS)
            return fired
        finally:
            access.close()

    async def payload(self) -> dict[str, Any] | None:
        """The newest Alertmanager (v4 webhook) payload carrying the trigger alert as firing."""
        access = load_admin(self.spec.sandbox.kubeconfig, self.spec.sandbox.context)
        try:
            rest = KubeRest(access.api_client)
            try:
                doc = (await rest.request("GET", NOTIFICATIONS_PATH.format(namespace=self.namespace))).json() or {}
            except KubeError as e:
                raise e.infra(f"read alert notifications of {self.namespace}") from e
        finally:
            access.close()
        for item in reversed(doc.get("notifications") or []):
            payload = item.get("payload") or {}
            alerts = payload.get("alerts") or []
            if any(self._matches({"labels": a.get("labels"), "state": a.get("status")}) for a in alerts):
                return payload
        return None

    def seen_note(self) -> str:
        return f" (firing instead: {', '.join(sorted(self.seen))})" if self.seen else ""
