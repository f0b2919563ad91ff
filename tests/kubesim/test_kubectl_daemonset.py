"""A DaemonSet through kubectl (1.20 and 1.32) on a two-node kubesim: one pod per eligible node,
rolling updates with history and undo, and nodes that stop fitting (selector, taints)."""

from __future__ import annotations

import json
import textwrap

try:
    from kubectl_helpers import kubectl, parse_table, sim, wait_until
except ImportError:  # collected as part of a package
    from tests.kubesim.kubectl_helpers import kubectl, parse_table, sim, wait_until

__all__ = ["kubectl", "sim"]  # fixtures used by name

MANIFEST = textwrap.dedent("""
    apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: shipper}
    spec:
      selector: {matchLabels: {app: shipper}}
      template:
        metadata: {labels: {app: shipper}}
        spec:
          containers: [{name: shipper, image: "nginx:1.25"}]
""")
SECOND_NODE = {"apiVersion": "v1", "kind": "Node",
               "metadata": {"name": "kubesim-node-2", "labels": {"kubernetes.io/hostname": "kubesim-node-2"}}}


def placement(kubectl) -> dict[str, str]:
    """node -> image of the daemon pod running there (Running and ready only)."""
    rows = parse_table(kubectl.ok("get", "pods", "-l", "app=shipper", "-o", "wide"))
    running = {r["NAME"]: r["NODE"] for r in rows if r["STATUS"] == "Running" and r["READY"] == "1/1"}
    pods = json.loads(kubectl.ok("get", "pods", "-l", "app=shipper", "-o", "json"))["items"]
    return {running[p["metadata"]["name"]]: p["spec"]["containers"][0]["image"]
            for p in pods if p["metadata"]["name"] in running and not p["metadata"].get("deletionTimestamp")}


def daemonset_row(kubectl) -> dict[str, str]:
    return parse_table(kubectl.ok("get", "ds", "shipper"))[0]


def test_daemonset_runs_on_every_fitting_node_and_rolls_updates(kubectl, sim):
    kubectl.ok("create", "-f", "-", stdin=json.dumps(SECOND_NODE))
    assert kubectl.ok("apply", "-f", "-", stdin=MANIFEST).strip() == "daemonset.apps/shipper created"
    both = {"kubesim-node-1": "nginx:1.25", "kubesim-node-2": "nginx:1.25"}
    wait_until(lambda: placement(kubectl) == both, sim.advance, step=2, what="a shipper on each node")
    row = daemonset_row(kubectl)
    assert (row["DESIRED"], row["CURRENT"], row["READY"], row["UP-TO-DATE"], row["AVAILABLE"]) == ("2",) * 5
    assert 'daemon set "shipper" successfully rolled out' in kubectl.ok("rollout", "status", "ds/shipper")

    kubectl.ok("set", "image", "ds/shipper", "shipper=nginx:1.26")
    assert sorted(placement(kubectl).values()) == ["nginx:1.25"]  # maxUnavailable 1: one node at a time
    updated = {"kubesim-node-1": "nginx:1.26", "kubesim-node-2": "nginx:1.26"}
    wait_until(lambda: placement(kubectl) == updated, sim.advance, step=2, what="both shippers updated")
    history = kubectl.ok("rollout", "history", "ds/shipper")
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"], history
    assert kubectl.ok("rollout", "undo", "ds/shipper").strip() == "daemonset.apps/shipper rolled back"
    wait_until(lambda: placement(kubectl) == both, sim.advance, step=2, what="the undo rolled out")

    kubectl.ok("taint", "node", "kubesim-node-2", "dedicated=db:NoSchedule")
    sim.advance(1)
    row = daemonset_row(kubectl)
    assert (row["DESIRED"], row["CURRENT"]) == ("1", "1") and placement(kubectl) == both  # running pods stay
    kubectl.ok("taint", "node", "kubesim-node-2", "drain=now:NoExecute")
    wait_until(lambda: placement(kubectl) == {"kubesim-node-1": "nginx:1.25"}, sim.advance, step=2,
               what="the NoExecute taint evicting the daemon pod")

    kubectl.ok("patch", "ds", "shipper", "-p", '{"spec":{"template":{"spec":{"nodeSelector":{"disk":"ssd"}}}}}')
    wait_until(lambda: not placement(kubectl), sim.advance, step=2, what="no node has disk=ssd")
    kubectl.ok("label", "node", "kubesim-node-1", "disk=ssd")
    wait_until(lambda: placement(kubectl) == {"kubesim-node-1": "nginx:1.25"}, sim.advance, step=2,
               what="the labelled node getting its shipper")
    described = kubectl.ok("describe", "ds", "shipper")
    assert "Desired Number of Nodes Scheduled: 1" in described and "Created pod: shipper-" in described, described
