"""Server-side table printers, one per resource type, ported from the apiserver's printers."""

from __future__ import annotations

from . import access, core, workloads
from .common import Column, Printer, human_duration
from .pods import POD_PRINTER, pod_summary

PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "pods"): POD_PRINTER,
    ("", "services"): core.SERVICE,
    ("", "endpoints"): core.ENDPOINTS,
    ("", "configmaps"): core.CONFIGMAP,
    ("", "secrets"): core.SECRET,
    ("", "serviceaccounts"): core.SERVICEACCOUNT,
    ("", "namespaces"): core.NAMESPACE,
    ("", "nodes"): core.NODE,
    ("", "events"): core.EVENT,
    ("", "resourcequotas"): core.RESOURCEQUOTA,
    ("", "persistentvolumeclaims"): core.PVC,
    ("", "limitranges"): access.CREATED_AT,
    ("", "replicationcontrollers"): workloads.REPLICATION_CONTROLLER,
    ("apps", "deployments"): workloads.DEPLOYMENT,
    ("apps", "replicasets"): workloads.REPLICASET,
    ("apps", "statefulsets"): workloads.STATEFULSET,
    ("apps", "daemonsets"): workloads.DAEMONSET,
    ("apps", "controllerrevisions"): access.CONTROLLERREVISION,
    ("batch", "jobs"): workloads.JOB,
    ("batch", "cronjobs"): workloads.CRONJOB,
    ("autoscaling", "horizontalpodautoscalers"): workloads.HPA,
    ("networking.k8s.io", "networkpolicies"): access.NETWORKPOLICY,
    ("networking.k8s.io", "ingresses"): access.INGRESS,
    ("rbac.authorization.k8s.io", "roles"): access.CREATED_AT,
    ("rbac.authorization.k8s.io", "clusterroles"): access.CREATED_AT,
    ("rbac.authorization.k8s.io", "rolebindings"): access.ROLEBINDING,
    ("rbac.authorization.k8s.io", "clusterrolebindings"): access.CLUSTERROLEBINDING,
}


def printer_for(group: str, plural: str) -> Printer:
    """The printer of a resource type; NAME/AGE for types without one."""
    return PRINTERS.get((group, plural), access.GENERIC)


__all__ = ["Column", "Printer", "PRINTERS", "printer_for", "human_duration", "pod_summary"]
