"""Outcome checks against a real embedded kubesim through the official Python client."""

from __future__ import annotations

import itertools
from typing import Any, Iterator

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from ontrial.errors import InfraError
from ontrial.graders.checks import run_checks
from ontrial.tasks import OutcomeCheck

PROFILE = {"image": "demo/api", "tags": ["1.0"], "startup_seconds": 2, "ports": [8080],
           "readiness": {"path": "/healthz", "port": 8080},
           "memory": {"working_set_mi": 100, "growth_mi_per_min": 0}}
SMP = "application/strategic-merge-patch+json"
_names = itertools.count()


def deployment(limit: str = "256Mi") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "labels": {"app": "api"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "api"}}, "template": {
            "metadata": {"labels": {"app": "api"}},
            "spec": {"containers": [{
                "name": "api", "image": "demo/api:1.0", "ports": [{"containerPort": 8080}],
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 2},
                "resources": {"limits": {"memory": limit}}}]}}}}


@pytest.fixture(scope="module")
def sim() -> Iterator[Any]:
    embedded = pytest.importorskip("kubesim.embedded", reason="kubesim is not importable")
    with embedded.start(time_scale=0, profiles=[PROFILE]) as server:
        yield server


@pytest.fixture(scope="module")
def api(sim) -> Iterator[k8s.ApiClient]:
    client = k8s_config.new_client_from_config(config_file=sim.kubeconfig_path)
    yield client
    client.close()


@pytest.fixture
def ns(sim, api) -> str:
    """A namespace with a healthy 2-replica Deployment and a ConfigMap."""
    name = f"checks-{next(_names)}"
    core, apps = k8s.CoreV1Api(api), k8s.AppsV1Api(api)
    core.create_namespace({"metadata": {"name": name}})
    core.create_namespaced_config_map(name, {"metadata": {"name": "api-settings"}, "data": {"MODE": "fast"}})
    apps.create_namespaced_deployment(name, deployment())
    sim.advance(60)
    return name


def check(type_: str, **args: Any) -> OutcomeCheck:
    return OutcomeCheck.of(type_, **args)


def results(api, ns, *checks):
    return [(r.passed, r.detail) for r in run_checks(api, ns, checks)]


def patch_deployment(api, ns, body) -> None:
    k8s.AppsV1Api(api).patch_namespaced_deployment("api", ns, body, _content_type=SMP)


def test_healthy_app_passes_every_check(api, ns):
    checks = [
        check("rollout_complete", deployment="api"),
        check("pods_ready", selector="app=api", min=2),
        check("no_crashloop", selector="app=api"),
        check("replicas_at_least", deployment="api", n=2),
        check("exists", kind="ConfigMap", name="api-settings"),
        check("not_exists", kind="ConfigMap", name="other"),
        check("field_equals", kind="Deployment", name="api",
              path="spec.template.spec.containers[name=api].image", value="demo/api:1.0"),
        check("field_set", kind="ConfigMap", name="api-settings", path="data.MODE"),
        check("quantity_at_least", kind="Deployment", name="api",
              path="spec.template.spec.containers[0].resources.limits.memory", value="200Mi"),
    ]
    out = run_checks(api, ns, checks)
    assert [r.name for r in out] == [c.name for c in checks]
    assert all(r.passed for r in out), [(r.name, r.detail) for r in out if not r.passed]
    assert out[0].detail == "2/2 updated and available"
    assert out[1].detail == "2 of 2 pods ready (need 2)"


def test_failing_field_checks_say_why(api, ns):
    assert results(api, ns,
                   check("quantity_at_least", kind="Deployment", name="api",
                         path="spec.template.spec.containers[0].resources.limits.memory", value="512Mi"),
                   check("field_equals", kind="Deployment", name="api", path="spec.replicas", value=3),
                   check("field_set", kind="ConfigMap", name="api-settings", path="data.MISSING"),
                   check("exists", kind="ConfigMap", name="gone"),
                   check("not_exists", kind="ConfigMap", name="api-settings"),
                   check("field_equals", kind="Secret", name="nope", path="data.x", value="y"),
                   ) == [
        (False, "spec.template.spec.containers[0].resources.limits.memory = 256Mi, want at least 512Mi"),
        (False, "spec.replicas = 2, want 3"),
        (False, "data.MISSING is not set"),
        (False, "ConfigMap gone not found"),
        (False, "ConfigMap api-settings exists"),
        (False, "Secret nope not found"),
    ]


def test_bad_image_rollout_fails_rollout_and_crashloop_checks(sim, api, ns):
    patch_deployment(api, ns, {"spec": {"template": {"spec": {"containers": [
        {"name": "api", "image": "demo/api:9.9"}]}}}})
    sim.advance(90)
    (rollout, rollout_detail), (crash, crash_detail), (ready, _) = results(
        api, ns, check("rollout_complete", deployment="api"), check("no_crashloop", selector="app=api"),
        check("pods_ready", selector="app=api", min=2))
    assert not rollout and "updatedReplicas=1" in rollout_detail
    assert not crash and ("ImagePullBackOff" in crash_detail or "ErrImagePull" in crash_detail)
    assert ready  # the old ReplicaSet keeps serving: the rollout is stuck, not down


def test_memory_limit_below_working_set_crash_loops(sim, api, ns):
    patch_deployment(api, ns, {"spec": {"template": {"spec": {"containers": [
        {"name": "api", "resources": {"limits": {"memory": "48Mi"}}}]}}}})
    sim.advance(120)
    (rollout, _), (crash, crash_detail) = results(
        api, ns, check("rollout_complete", deployment="api"), check("no_crashloop", selector="app=api"))
    assert not rollout
    assert not crash and ("CrashLoopBackOff" in crash_detail or "OOMKilled" in crash_detail)


def test_scaled_to_zero_is_not_a_completed_rollout(sim, api, ns):
    k8s.AppsV1Api(api).patch_namespaced_deployment_scale("api", ns, {"spec": {"replicas": 0}}, _content_type=SMP)
    sim.advance(30)
    assert results(api, ns, check("rollout_complete", deployment="api"),
                   check("replicas_at_least", deployment="api", n=1)) == [
        (False, "scaled to zero replicas"), (False, "spec.replicas=0, available=0 (need 1)")]


def test_deleted_deployment_fails(sim, api, ns):
    k8s.AppsV1Api(api).delete_namespaced_deployment("api", ns)
    sim.advance(10)
    assert results(api, ns, check("rollout_complete", deployment="api"),
                   check("no_crashloop", selector="app=api")) == [
        (False, "deployment api not found"), (True, "no pods match the selector")]


def test_unreachable_api_is_an_infra_error():
    configuration = k8s.Configuration()
    configuration.host = "http://127.0.0.1:9"  # discard port: nothing listens
    configuration.retries = False
    with k8s.ApiClient(configuration) as unreachable:
        with pytest.raises(InfraError) as info:
            run_checks(unreachable, "default", [check("exists", kind="ConfigMap", name="x")])
    assert info.value.transient
    assert str(info.value).startswith("checks: GET /api/v1/namespaces/default/configmaps/x failed")


def test_field_in_and_field_not_in_accept_any_valid_fix(api, ns):
    image = "spec.template.spec.containers[name=api].image"
    assert results(api, ns,
                   check("field_in", kind="Deployment", name="api", path=image,
                         values=["demo/api:1.0", "demo/api:1.1"]),
                   check("field_in", kind="Deployment", name="api", path=image, values=["demo/api:2.0"]),
                   check("field_not_in", kind="Deployment", name="api", path=image, values=["demo/api:0.9"]),
                   check("field_not_in", kind="Deployment", name="api", path=image, values=["demo/api:1.0"]),
                   check("field_not_in", kind="Deployment", name="api", path="spec.paused", values=[True]),
                   check("field_not_in", kind="Deployment", name="gone", path=image, values=["x"]),
                   ) == [
        (True, "spec.template.spec.containers[name=api].image = 'demo/api:1.0'"),
        (False, "spec.template.spec.containers[name=api].image = 'demo/api:1.0', want one of ['demo/api:2.0']"),
        (True, "spec.template.spec.containers[name=api].image = 'demo/api:1.0'"),
        (False, "spec.template.spec.containers[name=api].image = 'demo/api:1.0' (one of the values it must not be)"),
        (True, "spec.paused is not set"),
        (False, "Deployment gone not found"),
    ]


def test_a_metric_check_without_a_metrics_source_fails_and_says_so(api, ns):
    nowhere = "/no-prometheus-here/{namespace}"
    (result,) = run_checks(api, ns, [check("metric", query="vector(1)", max=1)], prometheus=nowhere)
    assert not result.passed and result.detail == f"no metrics source answered (/no-prometheus-here/{ns})"
    (result,) = run_checks(api, ns, [check("metric", query="vector(1)", max=1, unavailable="skip")],
                           prometheus=nowhere)
    assert result.passed and result.detail.startswith("skipped: no metrics source answered")
