"""Manifests for the built-in six-service shop (profiles in ``telemetry/profiles/shop.yaml``):
Deployments and Services for frontend, catalog, checkout, payments, ledger and orders, plus the
redis and postgres they depend on. Used by tests, benchmarks and tasks that need "an app"."""

from __future__ import annotations

from typing import Any

# name, image, port, env
SHOP: tuple[tuple[str, str, int, dict[str, str]], ...] = (
    ("frontend", "shop/frontend:1.0", 8080, {}),
    ("catalog", "shop/catalog:1.0", 8080, {}),
    ("checkout", "shop/checkout:1.0", 8080, {"PAYMENTS_ADDR": "payments:8081"}),
    ("payments", "shop/payments:1.0", 8081, {"LEDGER_TOKEN": "s3cret"}),
    ("ledger", "shop/ledger:1.0", 9000, {"API_TOKEN": "s3cret"}),
    ("orders", "shop/orders:1.0", 8080, {}),
)
BACKENDS: tuple[tuple[str, str, int, dict[str, str]], ...] = (
    ("redis", "redis:7.2", 6379, {}),
    ("postgres", "postgres:16", 5432, {"POSTGRES_PASSWORD": "shop"}),
)


def deployment(ns: str, name: str, image: str, port: int, env: dict[str, str], probe: bool = True,
               replicas: int = 1, memory_limit: str | None = "256Mi") -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "image": image, "ports": [{"containerPort": port}],
                                 "env": [{"name": k, "value": v} for k, v in env.items()]}
    if memory_limit:
        container["resources"] = {"limits": {"memory": memory_limit}}
    if probe:
        container["readinessProbe"] = {"httpGet": {"path": "/healthz", "port": port}, "periodSeconds": 5}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container]}}}}


def service(ns: str, name: str, port: int, target: int | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"app": name}, "ports": [{"port": port, "targetPort": target or port}]}}


def shop_manifests(ns: str) -> list[dict[str, Any]]:
    """Deployments and Services of the whole shop in namespace ``ns`` (the Namespace itself not included)."""
    out: list[dict[str, Any]] = []
    for name, image, port, env in SHOP:
        out += [deployment(ns, name, image, port, env), service(ns, name, port)]
    for name, image, port, env in BACKENDS:
        out += [deployment(ns, name, image, port, env, probe=False), service(ns, name, port)]
    return out
