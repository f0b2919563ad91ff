"""A StatefulSet through kubectl (1.20 and 1.32): ordered start, rollout status, history and undo,
scaling from the top, and claims that outlive the set."""

from __future__ import annotations

import textwrap

try:
    from kubectl_helpers import kubectl, parse_table, sim, wait_until
except ImportError:  # collected as part of a package
    from tests.kubesim.kubectl_helpers import kubectl, parse_table, sim, wait_until

__all__ = ["kubectl", "sim"]  # fixtures used by name

MANIFEST = textwrap.dedent("""
    apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: ledger}
    spec:
      serviceName: ledger
      replicas: 3
      selector: {matchLabels: {app: ledger}}
      template:
        metadata: {labels: {app: ledger}}
        spec:
          containers: [{name: ledger, image: "nginx:1.25", ports: [{containerPort: 80}]}]
      volumeClaimTemplates:
      - metadata: {name: data}
        spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
""")


def pods(kubectl) -> dict[str, dict[str, str]]:
    return {r["NAME"]: r for r in parse_table(kubectl.ok("get", "pods", "-l", "app=ledger"))}


def all_running(kubectl, names: list[str]):
    rows = pods(kubectl)
    ok = sorted(rows) == names and all(r["READY"] == "1/1" and r["STATUS"] == "Running" for r in rows.values())
    return rows if ok else None


def images(kubectl) -> set[str]:
    return set(kubectl.jsonpath("get", "pods", "-l", "app=ledger",
                                path="{.items[*].spec.containers[0].image}").split())


def test_statefulset_rolls_out_in_order_updates_undoes_and_scales(kubectl, sim):
    assert kubectl.ok("apply", "-f", "-", stdin=MANIFEST).strip() == "statefulset.apps/ledger created"
    assert sorted(pods(kubectl)) == ["ledger-0"]  # ledger-1 waits for ledger-0 to be Running and Ready
    names = ["ledger-0", "ledger-1", "ledger-2"]
    wait_until(lambda: all_running(kubectl, names), sim.advance, step=2, what="three ledger pods")
    assert "partitioned roll out complete: 3 new pods have been updated" in kubectl.ok("rollout", "status",
                                                                                        "sts/ledger")
    claims = parse_table(kubectl.ok("get", "pvc"))
    assert [(c["NAME"], c["STATUS"]) for c in claims] == [(f"data-{n}", "Bound") for n in names]

    kubectl.ok("set", "image", "sts/ledger", "ledger=nginx:1.26")
    wait_until(lambda: images(kubectl) == {"nginx:1.26"} and all_running(kubectl, names), sim.advance, step=2,
               what="the update rolled out")
    history = kubectl.ok("rollout", "history", "sts/ledger")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"], history
    assert kubectl.ok("rollout", "undo", "sts/ledger").strip() == "statefulset.apps/ledger rolled back"
    wait_until(lambda: images(kubectl) == {"nginx:1.25"} and all_running(kubectl, names), sim.advance, step=2,
               what="the undo rolled out")

    kubectl.ok("scale", "sts/ledger", "--replicas=1")
    wait_until(lambda: all_running(kubectl, ["ledger-0"]), sim.advance, step=2, what="scaled to one")
    described = kubectl.ok("describe", "sts", "ledger")
    assert "delete Pod ledger-2 in StatefulSet ledger successful" in described, described
    kubectl.ok("delete", "sts", "ledger")
    wait_until(lambda: not pods(kubectl), sim.advance, step=2, what="pods gone with the set")
    assert len(parse_table(kubectl.ok("get", "pvc"))) == 3  # claims are retained by default
