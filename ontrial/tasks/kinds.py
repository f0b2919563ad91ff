"""The object kinds a task may name, and where each lives in the Kubernetes REST API.

Task files say ``kind: Deployment``; fault injection and the outcome checks need the URL. One table
serves both (and catches a misspelt kind at load time instead of mid-trial).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KindInfo:
    kind: str
    api_version: str
    plural: str
    namespaced: bool = True

    def path(self, namespace: str, name: str | None = None) -> str:
        """REST path of the collection (``name`` None) or of one object."""
        base = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        if self.namespaced:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        return f"{base}/{name}" if name else base


KINDS: dict[str, KindInfo] = {
    info.kind: info
    for info in (
        KindInfo("Pod", "v1", "pods"),
        KindInfo("Service", "v1", "services"),
        KindInfo("Endpoints", "v1", "endpoints"),
        KindInfo("ConfigMap", "v1", "configmaps"),
        KindInfo("Secret", "v1", "secrets"),
        KindInfo("ServiceAccount", "v1", "serviceaccounts"),
        KindInfo("PersistentVolumeClaim", "v1", "persistentvolumeclaims"),
        KindInfo("ResourceQuota", "v1", "resourcequotas"),
        KindInfo("LimitRange", "v1", "limitranges"),
        KindInfo("Deployment", "apps/v1", "deployments"),
        KindInfo("ReplicaSet", "apps/v1", "replicasets"),
        KindInfo("StatefulSet", "apps/v1", "statefulsets"),
        KindInfo("DaemonSet", "apps/v1", "daemonsets"),
        KindInfo("Job", "batch/v1", "jobs"),
        KindInfo("CronJob", "batch/v1", "cronjobs"),
        KindInfo("HorizontalPodAutoscaler", "autoscaling/v1", "horizontalpodautoscalers"),
        KindInfo("NetworkPolicy", "networking.k8s.io/v1", "networkpolicies"),
        KindInfo("Ingress", "networking.k8s.io/v1", "ingresses"),
        KindInfo("Role", "rbac.authorization.k8s.io/v1", "roles"),
        KindInfo("RoleBinding", "rbac.authorization.k8s.io/v1", "rolebindings"),
    )
}

SCALABLE_KINDS = ("Deployment", "ReplicaSet", "StatefulSet")


def kind_info(kind: str) -> KindInfo:
    """The table entry for ``kind``; KeyError names the known kinds."""
    try:
        return KINDS[kind]
    except KeyError:
        raise KeyError(f"unknown kind {kind!r}") from None
