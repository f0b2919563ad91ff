"""default-scheduler: binds pending pods to a node that fits, or says why none does.

Filters run in the real plugin order (NodeUnschedulable, TaintToleration, NodeAffinity,
NodeResourcesFit) and the FailedScheduling message aggregates per-node reasons exactly like
the scheduler ("0/1 nodes are available: 1 Insufficient memory. preemption: ..."). Unschedulable
pods are retried whenever anything changes in the cluster's capacity, and every five minutes.
"""

from __future__ import annotations

from typing import Any

from ..clock import rfc3339
from ..resources import NODES, PODS
from ..tree import clone
from .podstatus import qos_class
from .units import parse_cpu_millis, parse_memory_bytes

RETRY_SECONDS = 300.0  # podMaxInUnschedulablePodsDuration
EVENT_REPEAT_SECONDS = 60.0
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"


def pod_requests(pod: dict[str, Any]) -> tuple[int, int]:
    """Effective (cpu millicores, memory bytes): sum of containers, at least the largest init container."""
    spec = pod.get("spec") or {}

    def one(c: dict[str, Any]) -> tuple[int, int]:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        cpu = req.get("cpu", lim.get("cpu"))
        mem = req.get("memory", lim.get("memory"))
        return (parse_cpu_millis(cpu) if cpu is not None else 0, parse_memory_bytes(mem) if mem is not None else 0)

    apps = [one(c) for c in spec.get("containers") or [] if isinstance(c, dict)]
    inits = [one(c) for c in spec.get("initContainers") or [] if isinstance(c, dict)]
    cpu, mem = sum(a[0] for a in apps), sum(a[1] for a in apps)
    return max([cpu] + [i[0] for i in inits]), max([mem] + [i[1] for i in inits])


def _terminal(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _tolerates(pod: dict[str, Any], taint: dict[str, Any]) -> bool:
    for tol in (pod.get("spec") or {}).get("tolerations") or []:
        if not isinstance(tol, dict):
            continue
        if tol.get("effect") and tol.get("effect") != taint.get("effect"):
            continue
        op = tol.get("operator", "Equal")
        if not tol.get("key") and op == "Exists":
            return True
        if tol.get("key") != taint.get("key"):
            continue
        if op == "Exists" or str(tol.get("value", "")) == str(taint.get("value", "")):
            return True
    return False


def _expr_matches(expr: dict[str, Any], labels: dict[str, str]) -> bool:
    key, op, values = expr.get("key"), expr.get("operator"), [str(v) for v in expr.get("values") or []]
    has = key in labels
    value = labels.get(key, "")
    if op == "In":
        return has and value in values
    if op == "NotIn":
        return not has or value not in values
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    if op in ("Gt", "Lt") and has and values:
        try:
            a, b = int(value), int(values[0])
        except ValueError:
            return False
        return a > b if op == "Gt" else a < b
    return False


def _affinity_matches(pod: dict[str, Any], node: dict[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    labels = (node.get("metadata") or {}).get("labels") or {}
    selector = spec.get("nodeSelector") or {}
    if any(labels.get(k) != str(v) for k, v in selector.items()):
        return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = [t for t in required.get("nodeSelectorTerms") or [] if isinstance(t, dict)]
    if not terms:
        return True
    node_fields = {"metadata.name": node["metadata"]["name"]}
    for term in terms:
        exprs = [e for e in term.get("matchExpressions") or [] if isinstance(e, dict)]
        fields = [e for e in term.get("matchFields") or [] if isinstance(e, dict)]
        if all(_expr_matches(e, labels) for e in exprs) and all(_expr_matches(e, node_fields) for e in fields):
            return True
    return False


def placement_reasons(pod: dict[str, Any], node: dict[str, Any]) -> list[str]:
    """Why ``pod`` may not run on ``node`` regardless of capacity (cordon, taints, node selector and
    affinity); empty when it may. The DaemonSet controller asks the same question."""
    spec = node.get("spec") or {}
    if spec.get("unschedulable") and not _tolerates(
            pod, {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}):
        return ["node(s) were unschedulable"]
    for taint in spec.get("taints") or []:
        blocking = isinstance(taint, dict) and taint.get("effect") in ("NoSchedule", "NoExecute")
        if blocking and not _tolerates(pod, taint):
            return [f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"]
    if not _affinity_matches(pod, node):
        return ["node(s) didn't match Pod's node affinity/selector"]
    return []


class Scheduler:
    """Binds pending pods. Unschedulable pods are retried when capacity may have changed (a node
    changed, a bound pod went away or finished, a claim appeared) and every five minutes."""

    name = "default-scheduler"

    def __init__(self) -> None:
        self.epoch = 0  # bumped by every write that may free or add capacity

    def on_write(self, cluster: Any, ev: Any) -> None:
        """Store write hook: notice capacity changes and requeue the namespaces of waiting pods."""
        relevant = ev.key in (NODES.key, ("", "persistentvolumeclaims"))
        if ev.key == PODS.key and (ev.obj.get("spec") or {}).get("nodeName"):
            relevant = ev.type == "DELETED" or _terminal(ev.obj)
        if relevant:
            self.epoch += 1
            for entry in cluster.runtime.scheduling.values():
                cluster.store.dirty.add(entry[2])

    def reconcile(self, cluster: Any, namespace: str) -> None:
        if namespace == "":
            return
        now = cluster.now_s()
        waiting = [p for p in cluster.store.list(PODS, namespace) if self._wants_scheduling(p)]
        self._forget_gone(cluster, namespace, {p["metadata"].get("uid") for p in waiting})
        pending = [p for p in waiting if self._due(cluster, p, now)]
        if not pending:
            return
        nodes = cluster.store.list(NODES)
        usage = self._usage(cluster)
        pending.sort(key=lambda p: (-int((p.get("spec") or {}).get("priority") or 0),
                                    p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]))
        for pod in pending:
            self._schedule(cluster, pod, nodes, usage)

    @staticmethod
    def _forget_gone(cluster: Any, namespace: str, waiting: set[Any]) -> None:
        """Drop the bookkeeping of pods that were deleted (or bound elsewhere) while unschedulable."""
        scheduling = cluster.runtime.scheduling
        for uid in [u for u, e in scheduling.items() if e[2] == namespace and u not in waiting]:
            del scheduling[uid]

    def _due(self, cluster: Any, pod: dict[str, Any], now: float) -> bool:
        entry = cluster.runtime.scheduling.get(pod["metadata"].get("uid", ""))
        return entry is None or entry[3] != self.epoch or now >= entry[1] + RETRY_SECONDS - 1e-3

    @staticmethod
    def _wants_scheduling(pod: dict[str, Any]) -> bool:
        spec = pod.get("spec") or {}
        return (not spec.get("nodeName") and not pod["metadata"].get("deletionTimestamp") and not _terminal(pod)
                and spec.get("schedulerName", "default-scheduler") == "default-scheduler")

    @staticmethod
    def _usage(cluster: Any) -> dict[str, list[int]]:
        usage: dict[str, list[int]] = {}
        for pod in cluster.store.list(PODS):
            node = (pod.get("spec") or {}).get("nodeName")
            if node and not _terminal(pod):
                cpu, mem = pod_requests(pod)
                u = usage.setdefault(node, [0, 0, 0])
                u[0] += cpu
                u[1] += mem
                u[2] += 1
        return usage

    # -- one pod ------------------------------------------------------------------------------
    def _schedule(self, cluster: Any, pod: dict[str, Any], nodes: list[dict[str, Any]],
                  usage: dict[str, list[int]]) -> None:
        chosen, message = self.pick(cluster, pod, nodes, usage)
        uid = pod["metadata"]["uid"]
        if chosen is None:
            self._unschedulable(cluster, pod, message)
            return
        cluster.runtime.scheduling.pop(uid, None)
        cpu, mem = pod_requests(pod)
        u = usage.setdefault(chosen, [0, 0, 0])
        u[0], u[1], u[2] = u[0] + cpu, u[1] + mem, u[2] + 1
        now = rfc3339(cluster.clock.now())
        new = clone(pod)
        new["spec"]["nodeName"] = chosen
        status = new.setdefault("status", {})
        status["phase"] = status.get("phase") or "Pending"
        conds = [c for c in status.get("conditions") or [] if isinstance(c, dict) and c.get("type") != "PodScheduled"]
        status["conditions"] = conds + [{"type": "PodScheduled", "status": "True", "lastTransitionTime": now}]
        bound = cluster.store.update(PODS, new, check_rv=False)
        ns, name = pod["metadata"].get("namespace"), pod["metadata"]["name"]
        cluster.events.record(bound, "Normal", "Scheduled", f"Successfully assigned {ns}/{name} to {chosen}",
                              "default-scheduler")

    def pick(self, cluster: Any, pod: dict[str, Any], nodes: list[dict[str, Any]],
             usage: dict[str, list[int]]) -> tuple[str | None, str]:
        """The best node, or (None, FailedScheduling message)."""
        from ..resources import by_key

        pvcs = by_key("", "persistentvolumeclaims")
        ns = pod["metadata"].get("namespace", "default")
        n = len(nodes)
        for vol in (pod.get("spec") or {}).get("volumes") or []:
            claim = (vol or {}).get("persistentVolumeClaim") if isinstance(vol, dict) else None
            if isinstance(claim, dict) and cluster.store.find(pvcs, ns, str(claim.get("claimName", ""))) is None:
                return None, (f'0/{n} nodes are available: persistentvolumeclaim "{claim.get("claimName", "")}" '
                              f"not found. preemption: 0/{n} nodes are available: {n} {NOT_HELPFUL}.")
        if not nodes:
            return None, "no nodes available to schedule pods"
        cpu, mem = pod_requests(pod)
        reasons: dict[str, int] = {}
        preemption: dict[str, int] = {}
        best: tuple[float, str] | None = None
        for node in nodes:
            why = self._filter(pod, node, usage, cpu, mem)
            name = node["metadata"]["name"]
            if why:
                for r in why:
                    reasons[r] = reasons.get(r, 0) + 1
                kind = NO_VICTIMS if why[0].startswith(("Insufficient", "Too many")) else NOT_HELPFUL
                preemption[kind] = preemption.get(kind, 0) + 1
                continue
            alloc = (node.get("status") or {}).get("allocatable") or {}
            u = usage.get(name, [0, 0, 0])
            cap_cpu = parse_cpu_millis(alloc.get("cpu", "0")) or 1
            cap_mem = parse_memory_bytes(alloc.get("memory", "0")) or 1
            score = ((cap_cpu - u[0] - cpu) / cap_cpu + (cap_mem - u[1] - mem) / cap_mem) / 2
            if best is None or score > best[0]:
                best = (score, name)
        if best is not None:
            return best[1], ""
        detail = ", ".join(f"{count} {reason}" for reason, count in sorted(reasons.items()))
        pre = ", ".join(f"{count} {reason}" for reason, count in sorted(preemption.items()))
        return None, f"0/{n} nodes are available: {detail}. preemption: 0/{n} nodes are available: {pre}."

    @staticmethod
    def _filter(pod: dict[str, Any], node: dict[str, Any], usage: dict[str, list[int]], cpu: int, mem: int) -> list[str]:
        rejected = placement_reasons(pod, node)
        if rejected:
            return rejected
        alloc = (node.get("status") or {}).get("allocatable") or {}
        u = usage.get(node["metadata"]["name"], [0, 0, 0])
        out = []
        if u[2] + 1 > int(str(alloc.get("pods", "110")) or 110):
            out.append("Too many pods")
        if cpu and u[0] + cpu > parse_cpu_millis(alloc.get("cpu", "0")):
            out.append("Insufficient cpu")
        if mem and u[1] + mem > parse_memory_bytes(alloc.get("memory", "0")):
            out.append("Insufficient memory")
        return out

    def _unschedulable(self, cluster: Any, pod: dict[str, Any], message: str) -> None:
        m = pod["metadata"]
        now = cluster.now_s()
        last = cluster.runtime.scheduling.get(m["uid"])
        ns = m.get("namespace", "default")
        if last is None or last[0] != message or now - last[1] >= EVENT_REPEAT_SECONDS - 1e-3:
            cluster.events.record(pod, "Warning", "FailedScheduling", message, "default-scheduler")
            cluster.runtime.scheduling[m["uid"]] = (message, now, ns, self.epoch)
            cluster.wake_at(ns, now + RETRY_SECONDS)
        else:
            cluster.runtime.scheduling[m["uid"]] = (message, last[1], ns, self.epoch)
        status = clone(pod.get("status") or {})
        status["phase"] = "Pending"
        status.setdefault("qosClass", qos_class(pod))
        old = next((c for c in status.get("conditions") or [] if isinstance(c, dict) and c.get("type") == "PodScheduled"),
                   None)
        since = old.get("lastTransitionTime") if old and old.get("status") == "False" else rfc3339(cluster.clock.now())
        cond = {"type": "PodScheduled", "status": "False", "lastTransitionTime": since, "reason": "Unschedulable",
                "message": message}
        status["conditions"] = [c for c in status.get("conditions") or []
                                if isinstance(c, dict) and c.get("type") != "PodScheduled"] + [cond]
        if status != pod.get("status"):
            new = clone(pod)
            new["status"] = status
            cluster.store.update(PODS, new, check_rv=False)
