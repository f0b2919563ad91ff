"""An in-process cluster running the six-service shop with telemetry attached, plus helpers to
inject and fix faults, query PromQL and read logs the way an agent would."""

from __future__ import annotations

import copy
import json
from typing import Any

from kubesim import objects
from kubesim.build import build_cluster
from kubesim.resources import DEPLOYMENTS, NAMESPACES, NETWORKPOLICIES, PODS, SERVICES, ResourceType
from kubesim.telemetry import admin, prom_api
from kubesim.telemetry.demo import shop_manifests
from kubesim.workloads.logs import read_log

ERROR_RATIO_RULES = """
groups:
  - name: slo
    rules:
      - alert: HighErrorRate
        expr: |
          sum by (namespace, service) (rate(http_requests_total{code=~"5.."}[1m]))
            / sum by (namespace, service) (rate(http_requests_total[1m])) > 0.05
        for: 2m
        labels: {severity: critical}
        annotations:
          summary: "{{ $labels.service }} answers {{ $value | humanizePercentage }} of requests with 5xx"
"""

class ShopSim:
    def __init__(self, namespaces: tuple[str, ...] = ("shop",), rules: str | None = ERROR_RATIO_RULES,
                 webhook: str | None = None, seed: int = 0):
        self.cluster = build_cluster(time_scale=0, seed=seed)  # telemetry attached by default
        self.tel = self.cluster.telemetry
        for ns in namespaces:
            self.install(ns)
            if rules:
                self.set_rules(ns, rules, webhook)
        self.cluster.reconcile()

    # -- objects ----------------------------------------------------------------------------------
    def create(self, rt: ResourceType, obj: dict[str, Any]) -> None:
        self.cluster.store.create(rt, objects.prepare(rt, obj, None))
        self.cluster.reconcile()

    def update(self, rt: ResourceType, ns: str, name: str, change: Any) -> None:
        old = self.cluster.store.get(rt, ns, name)
        new = copy.deepcopy(old)
        change(new)
        self.cluster.store.update(rt, objects.prepare(rt, new, old))
        self.cluster.reconcile()

    def delete(self, rt: ResourceType, ns: str, name: str) -> None:
        self.cluster.store.delete(rt, ns, name)
        self.cluster.reconcile()

    def install(self, ns: str) -> None:
        self.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for obj in shop_manifests(ns):
            self.create(DEPLOYMENTS if obj["kind"] == "Deployment" else SERVICES, obj)

    def set_env(self, ns: str, deploy: str, name: str, value: str) -> None:
        def change(d: dict[str, Any]) -> None:
            c = d["spec"]["template"]["spec"]["containers"][0]
            env = [e for e in c.get("env", []) if e["name"] != name]
            env.append({"name": name, "value": value})
            c["env"] = env
        self.update(DEPLOYMENTS, ns, deploy, change)

    def set_image(self, ns: str, deploy: str, image: str) -> None:
        def change(d: dict[str, Any]) -> None:
            d["spec"]["template"]["spec"]["containers"][0]["image"] = image
        self.update(DEPLOYMENTS, ns, deploy, change)

    def set_memory_limit(self, ns: str, deploy: str, limit: str | None) -> None:
        def change(d: dict[str, Any]) -> None:
            c = d["spec"]["template"]["spec"]["containers"][0]
            if limit is None:
                c.pop("resources", None)
            else:
                c["resources"] = {"limits": {"memory": limit}}
        self.update(DEPLOYMENTS, ns, deploy, change)

    def set_selector(self, ns: str, svc: str, selector: dict[str, str]) -> None:
        def change(s: dict[str, Any]) -> None:
            s["spec"]["selector"] = selector
        self.update(SERVICES, ns, svc, change)

    def network_policy(self, ns: str, name: str, target: str, allowed_from: str) -> None:
        self.create(NETWORKPOLICIES, {
            "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"podSelector": {"matchLabels": {"app": target}}, "policyTypes": ["Ingress"],
                     "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": allowed_from}}}]}]}})

    # -- time -------------------------------------------------------------------------------------
    def advance(self, seconds: float) -> None:
        self.cluster.advance(seconds)
        assert self.tel.errors == 0, self.tel.last_error

    def advance_until(self, predicate: Any, limit: float, step: float = 15.0) -> float:
        """Advance in steps until ``predicate()``; returns the simulated seconds it took (or raises)."""
        waited = 0.0
        while waited < limit:
            if predicate():
                return waited
            self.advance(step)
            waited += step
        if predicate():
            return waited
        raise AssertionError(f"condition not met within {limit} simulated seconds")

    # -- what an agent sees -----------------------------------------------------------------------
    def set_rules(self, ns: str, rules: str, webhook: str | None = None, **receiver: Any) -> dict[str, Any]:
        body = {"rules": rules, "receiver": {"url": webhook, "group_wait": "0s", "group_interval": "30s",
                                             **receiver}}
        if webhook is None:
            body["receiver"].pop("url")
        status, _, out = admin.handle(self.cluster, "PUT", f"/kubesim/v1/namespaces/{ns}/rules", None,
                                      json.dumps(body).encode())
        assert status == 200, out
        return json.loads(out)

    def api(self, endpoint: str, ns: str | None = None, **params: Any) -> dict[str, Any]:
        path = f"/prometheus/namespaces/{ns}/api/v1/{endpoint}" if ns else f"/prometheus/api/v1/{endpoint}"
        status, headers, body = prom_api.handle(self.cluster, "GET", path, params)
        payload = json.loads(body)
        assert status == 200, payload
        return payload["data"]

    def query(self, expr: str, ns: str | None = None) -> dict[tuple[tuple[str, str], ...], float]:
        data = self.api("query", ns, query=expr)
        assert data["resultType"] == "vector", data
        return {tuple(sorted(r["metric"].items())): float(r["value"][1]) for r in data["result"]}

    def value(self, expr: str, ns: str | None = None) -> float | None:
        result = self.query(expr, ns)
        assert len(result) <= 1, result
        return next(iter(result.values()), None)

    def firing(self, ns: str, alertname: str = "HighErrorRate") -> set[str]:
        """Services with a firing alert."""
        alerts = self.api("alerts", ns)["alerts"]
        return {a["labels"].get("service", "") for a in alerts
                if a["state"] == "firing" and a["labels"]["alertname"] == alertname}

    def pod(self, ns: str, app: str) -> dict[str, Any]:
        pods = [p for p in self.cluster.store.list(PODS, ns)
                if p["metadata"].get("labels", {}).get("app") == app and not p["metadata"].get("deletionTimestamp")]
        assert pods, f"no pod for {app}"
        return pods[-1]

    def logs(self, ns: str, app: str, tail: int = 20) -> str:
        return read_log(self.cluster, self.pod(ns, app), None, tail_lines=tail)
