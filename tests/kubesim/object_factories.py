"""Minimal valid objects for the object-semantics tests, and a helper asserting a rejection."""

from __future__ import annotations

import pytest

from kubesim.errors import ApiError
from kubesim.objects import prepare


def pod(**spec) -> dict:
    base = {"containers": [{"name": "api", "image": "shop/api:1.0"}]}
    base.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": base}


def deploy(**spec) -> dict:
    base = {"selector": {"matchLabels": {"app": "api"}},
            "template": {"metadata": {"labels": {"app": "api"}},
                         "spec": {"containers": [{"name": "api", "image": "shop/api:1.0",
                                                  "ports": [{"containerPort": 8080}]}]}}}
    base.update(spec)
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "api", "namespace": "default", "labels": {"app": "api"}}, "spec": base}


def service(**spec) -> dict:
    base = {"selector": {"app": "api"}, "ports": [{"port": 80, "targetPort": 8080}]}
    base.update(spec)
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api", "namespace": "default"},
            "spec": base}


def job(**spec) -> dict:
    base = {"template": {"spec": {"restartPolicy": "Never",
                                  "containers": [{"name": "migrate", "image": "shop/migrate:1"}]}}}
    base.update(spec)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate", "namespace": "default"},
            "spec": base}


def rejected(rt, obj, old=None) -> ApiError:
    with pytest.raises(ApiError) as err:
        prepare(rt, obj, old)
    return err.value
