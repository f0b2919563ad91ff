"""Kind names as agents and task authors write them ("deploy", "Deployment", "pods") → REST paths.

A static table covers the kinds trials use; anything else is resolved by API discovery
(``ontrial.sandbox.rest.KubeRest.resolve``), so CRDs on real clusters work too.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KindInfo:
    kind: str
    group: str  # "" = core
    version: str
    plural: str
    namespaced: bool = True
    short_names: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def collection_path(self, namespace: str | None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        return f"{base}/{self.plural}"

    def object_path(self, namespace: str | None, name: str, subresource: str | None = None) -> str:
        path = f"{self.collection_path(namespace)}/{name}"
        return f"{path}/{subresource}" if subresource else path


def _k(kind: str, group: str, version: str, plural: str, namespaced: bool = True, *short: str) -> KindInfo:
    return KindInfo(kind, group, version, plural, namespaced, tuple(short))


KINDS: tuple[KindInfo, ...] = (
    _k("Pod", "", "v1", "pods", True, "po"),
    _k("Service", "", "v1", "services", True, "svc"),
    _k("Endpoints", "", "v1", "endpoints", True, "ep"),
    _k("ConfigMap", "", "v1", "configmaps", True, "cm"),
    _k("Secret", "", "v1", "secrets", True),
    _k("Event", "", "v1", "events", True, "ev"),
    _k("ServiceAccount", "", "v1", "serviceaccounts", True, "sa"),
    _k("PersistentVolumeClaim", "", "v1", "persistentvolumeclaims", True, "pvc"),
    _k("ResourceQuota", "", "v1", "resourcequotas", True, "quota"),
    _k("LimitRange", "", "v1", "limitranges", True, "limits"),
    _k("ReplicationController", "", "v1", "replicationcontrollers", True, "rc"),
    _k("Namespace", "", "v1", "namespaces", False, "ns"),
    _k("Node", "", "v1", "nodes", False, "no"),
    _k("Deployment", "apps", "v1", "deployments", True, "deploy"),
    _k("ReplicaSet", "apps", "v1", "replicasets", True, "rs"),
    _k("StatefulSet", "apps", "v1", "statefulsets", True, "sts"),
    _k("DaemonSet", "apps", "v1", "daemonsets", True, "ds"),
    _k("Job", "batch", "v1", "jobs", True),
    _k("CronJob", "batch", "v1", "cronjobs", True, "cj"),
    _k("HorizontalPodAutoscaler", "autoscaling", "v1", "horizontalpodautoscalers", True, "hpa"),
    _k("NetworkPolicy", "networking.k8s.io", "v1", "networkpolicies", True, "netpol"),
    _k("Ingress", "networking.k8s.io", "v1", "ingresses", True, "ing"),
    _k("PodDisruptionBudget", "policy", "v1", "poddisruptionbudgets", True, "pdb"),
    _k("Role", "rbac.authorization.k8s.io", "v1", "roles", True),
    _k("RoleBinding", "rbac.authorization.k8s.io", "v1", "rolebindings", True),
    _k("ClusterRole", "rbac.authorization.k8s.io", "v1", "clusterroles", False),
    _k("ClusterRoleBinding", "rbac.authorization.k8s.io", "v1", "clusterrolebindings", False),
)

_BY_NAME: dict[str, KindInfo] = {}
for _info in KINDS:
    for _alias in (_info.kind, _info.plural, _info.kind.lower(), *_info.short_names,
                   f"{_info.plural}.{_info.group}" if _info.group else _info.plural):
        _BY_NAME.setdefault(_alias.lower(), _info)


def lookup_kind(name: str) -> KindInfo | None:
    """Find a kind by Kind, plural, singular, short name or ``plural.group`` (case-insensitive)."""
    return _BY_NAME.get(name.strip().lower()) if name else None


def kind_for(api_version: str, kind: str) -> KindInfo | None:
    """The table entry for a manifest's apiVersion + kind, when it is one we know."""
    info = lookup_kind(kind)
    if info is None or info.kind != kind:
        return None
    if info.api_version == api_version:
        return info
    group, _, version = api_version.rpartition("/")
    return KindInfo(info.kind, group, version, info.plural, info.namespaced, info.short_names)


def resource_name(kind: str) -> str:
    """A best-effort RBAC resource name for a kind string (used by invariants): "deploy" → "deployments"."""
    base, _, sub = kind.strip().lower().partition("/")
    info = lookup_kind(base)
    plural = info.plural if info else base
    return f"{plural}/{sub}" if sub else plural
