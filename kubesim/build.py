"""Assemble a ready-to-serve Cluster: clock, store, controllers, workload machinery and the objects
every fresh cluster has (system namespaces, a node, the default RBAC roles, the kubernetes Service)."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from . import objects, telemetry, workloads
from .clock import SimClock
from .cluster import Cluster
from .controllers import all_controllers
from .rbac import bootstrap_cluster_role_bindings, bootstrap_cluster_roles
from .resources import CLUSTERROLEBINDINGS, CLUSTERROLES, NAMESPACES, SERVICES, ResourceType
from .store import Obj
from .workloads import NodeSpec

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def _create(cluster: Cluster, rt: ResourceType, obj: Obj) -> Obj:
    return cluster.store.create(rt, objects.prepare(rt, obj, None))


def _namespace(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}}


def _kubernetes_service() -> Obj:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "kubernetes", "namespace": "default",
                         "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"],
                     "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
                     "sessionAffinity": "None"}}


def build_cluster(time_scale: float = 1.0, seed: int = 0, profiles: Iterable[Mapping[str, Any]] = (),
                  nodes: Iterable[NodeSpec] | None = None, with_telemetry: bool = True) -> Cluster:
    """A cluster with the built-in workload profiles plus ``profiles``, its controllers wired in order
    (kube-controller-manager loops first, then node lifecycle, scheduler, kubelet, quota, and the
    telemetry that turns profiles' service graphs into metrics, logs and alerts)."""
    cluster = Cluster(SimClock(time_scale), seed=seed)
    for name in SYSTEM_NAMESPACES:
        _create(cluster, NAMESPACES, _namespace(name))
    machinery = workloads.attach(cluster, nodes=nodes, seed=seed, extra_profiles=profiles)
    cluster.controllers = [*all_controllers(), *machinery]
    if with_telemetry:
        cluster.controllers += telemetry.attach(cluster)
    for role in bootstrap_cluster_roles():
        _create(cluster, CLUSTERROLES, role)
    for binding in bootstrap_cluster_role_bindings():
        _create(cluster, CLUSTERROLEBINDINGS, binding)
    _create(cluster, SERVICES, _kubernetes_service())
    cluster.reconcile()
    return cluster
