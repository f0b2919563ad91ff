"""`kubectl autoscale` (1.20 and 1.32) and the HorizontalPodAutoscaler controller: scale up on CPU
above target (bounded by max), back down to min after the stabilization window, and a clear event
when pods have no CPU request."""

from __future__ import annotations

import textwrap

try:
    from kubectl_helpers import kubectl, parse_table, sim, wait_until
except ImportError:  # collected as part of a package
    from tests.kubesim.kubectl_helpers import kubectl, parse_table, sim, wait_until

__all__ = ["kubectl", "sim"]  # fixtures used by name


def manifest(request: str | None) -> str:
    resources = f"resources: {{requests: {{cpu: {request}}}}}" if request else "resources: {}"
    return textwrap.dedent(f"""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: web}}
        spec:
          replicas: 2
          selector: {{matchLabels: {{app: web}}}}
          template:
            metadata: {{labels: {{app: web}}}}
            spec:
              containers: [{{name: web, image: "nginx:1.25", {resources}}}]
    """)


def hpa_row(kubectl) -> dict[str, str]:
    return parse_table(kubectl.ok("get", "hpa", "web"))[0]


def test_autoscaler_follows_cpu_between_min_and_max(kubectl, sim):
    kubectl.ok("apply", "-f", "-", stdin=manifest("1m"))  # nginx uses ~1m: about 100 % of its request
    sim.advance(30)
    assert kubectl.ok("autoscale", "deploy", "web", "--min=2", "--max=5", "--cpu-percent=50").strip() == \
        "horizontalpodautoscaler.autoscaling/web autoscaled"
    wait_until(lambda: hpa_row(kubectl)["REPLICAS"] == "5", sim.advance, step=15, what="scaled to max")
    row = hpa_row(kubectl)
    assert row["REFERENCE"] == "Deployment/web" and row["TARGETS"].endswith("/50%"), row
    assert int(row["TARGETS"].split()[-1].split("%")[0]) > 55, row
    assert kubectl.jsonpath("get", "deploy", "web", path="{.spec.replicas}") == "5"
    described = kubectl.ok("describe", "hpa", "web")
    assert "reason: cpu resource utilization (percentage of request) above target" in described, described

    patch = '{"spec":{"template":{"spec":{"containers":[{"name":"web","resources":{"requests":{"cpu":"500m"}}}]}}}}'
    kubectl.ok("patch", "deploy", "web", "-p", patch)  # now far below target
    sim.advance(120)
    assert kubectl.jsonpath("get", "deploy", "web", path="{.spec.replicas}") == "5"  # stabilization window
    wait_until(lambda: hpa_row(kubectl)["REPLICAS"] == "2", sim.advance, step=15, limit=600, what="back to min")
    assert "New size: 2; reason: All metrics below target" in kubectl.ok("describe", "hpa", "web")


def test_below_min_is_raised_to_min_and_pods_without_cpu_requests_are_reported(kubectl, sim):
    kubectl.ok("apply", "-f", "-", stdin=manifest(None))
    sim.advance(30)
    kubectl.ok("autoscale", "deploy", "web", "--min=3", "--max=4", "--cpu-percent=50")
    sim.advance(60)
    assert hpa_row(kubectl)["TARGETS"] == "cpu: <unknown>/50%"
    assert kubectl.jsonpath("get", "deploy", "web", path="{.spec.replicas}") == "3"  # min, metrics or not
    described = kubectl.ok("describe", "hpa", "web")
    assert "New size: 3; reason: Current number of replicas below Spec.MinReplicas" in described, described
    assert "FailedGetResourceMetric" in described and "missing request for cpu" in described, described


def test_a_missing_target_is_reported(kubectl, sim):
    hpa = textwrap.dedent("""
        apiVersion: autoscaling/v1
        kind: HorizontalPodAutoscaler
        metadata: {name: ghost}
        spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: ghost}, maxReplicas: 3}
    """)
    kubectl.ok("apply", "-f", "-", stdin=hpa)
    sim.advance(30)
    described = kubectl.ok("describe", "hpa", "ghost")
    assert 'FailedGetScale' in described and 'deployments/scale.apps "ghost" not found' in described, described
