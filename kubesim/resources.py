"""The resource types kubesim serves: one table drives discovery, routing and storage."""

from __future__ import annotations

from dataclasses import dataclass, field

READ = ("get", "list", "watch")
ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ResourceType:
    group: str  # "" for the core group
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[str, ...] = ()
    stored: bool = True  # False for virtual resources (reviews, metrics)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_version(self) -> str:
        return self.api_version

    @property
    def key(self) -> tuple[str, str]:
        return (self.group, self.plural)


def _rt(group, version, plural, kind, namespaced, short=(), cats=(), verbs=ALL_VERBS, subs=(), stored=True):
    return ResourceType(group, version, plural, kind.lower(), kind, namespaced, tuple(short), tuple(cats),
                        tuple(verbs), tuple(subs), stored)


ALL = ("all",)
CREATE_ONLY = ("create",)

RESOURCES: tuple[ResourceType, ...] = (
    _rt("", "v1", "namespaces", "Namespace", False, ["ns"], subs=["status", "finalize"],
        verbs=("create", "delete", "get", "list", "patch", "update", "watch")),
    _rt("", "v1", "nodes", "Node", False, ["no"], subs=["status"]),
    _rt("", "v1", "pods", "Pod", True, ["po"], ALL, subs=["status", "log", "exec", "attach", "portforward", "eviction"]),
    _rt("", "v1", "services", "Service", True, ["svc"], ALL, subs=["status"]),
    _rt("", "v1", "endpoints", "Endpoints", True, ["ep"]),
    _rt("", "v1", "configmaps", "ConfigMap", True, ["cm"]),
    _rt("", "v1", "secrets", "Secret", True),
    _rt("", "v1", "events", "Event", True, ["ev"]),
    _rt("", "v1", "serviceaccounts", "ServiceAccount", True, ["sa"], subs=["token"]),
    _rt("", "v1", "resourcequotas", "ResourceQuota", True, ["quota"], subs=["status"]),
    _rt("", "v1", "limitranges", "LimitRange", True, ["limits"]),
    _rt("", "v1", "replicationcontrollers", "ReplicationController", True, ["rc"], ALL, subs=["status", "scale"]),
    _rt("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ["pvc"], subs=["status"]),
    _rt("apps", "v1", "deployments", "Deployment", True, ["deploy"], ALL, subs=["status", "scale"]),
    _rt("apps", "v1", "replicasets", "ReplicaSet", True, ["rs"], ALL, subs=["status", "scale"]),
    _rt("apps", "v1", "statefulsets", "StatefulSet", True, ["sts"], ALL, subs=["status", "scale"]),
    _rt("apps", "v1", "daemonsets", "DaemonSet", True, ["ds"], ALL, subs=["status"]),
    _rt("apps", "v1", "controllerrevisions", "ControllerRevision", True),
    _rt("batch", "v1", "jobs", "Job", True, [], ALL, subs=["status"]),
    _rt("batch", "v1", "cronjobs", "CronJob", True, ["cj"], ALL, subs=["status"]),
    _rt("autoscaling", "v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ["hpa"], ALL,
        subs=["status"]),
    _rt("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ["netpol"]),
    _rt("networking.k8s.io", "v1", "ingresses", "Ingress", True, ["ing"], subs=["status"]),
    _rt("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
    _rt("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
    _rt("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    _rt("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
    _rt("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False, verbs=CREATE_ONLY, stored=False),
    _rt("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False,
        verbs=CREATE_ONLY, stored=False),
    _rt("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", False,
        verbs=CREATE_ONLY, stored=False),
    _rt("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", False,
        verbs=CREATE_ONLY, stored=False),
    _rt("metrics.k8s.io", "v1beta1", "pods", "PodMetrics", True, verbs=READ, stored=False),
    _rt("metrics.k8s.io", "v1beta1", "nodes", "NodeMetrics", False, verbs=READ, stored=False),
)

# Subresource kinds for discovery: (parent plural, subresource) -> (group, version, kind, verbs)
SUBRESOURCE_KINDS: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "status": ("", "", "", ("get", "patch", "update")),  # same kind as the parent
    "scale": ("autoscaling", "v1", "Scale", ("get", "patch", "update")),
    "log": ("", "v1", "Pod", ("get",)),
    "exec": ("", "v1", "PodExecOptions", ("create", "get")),
    "attach": ("", "v1", "PodAttachOptions", ("create", "get")),
    "portforward": ("", "v1", "PodPortForwardOptions", ("create", "get")),
    "eviction": ("policy", "v1", "Eviction", ("create",)),
    "token": ("authentication.k8s.io", "v1", "TokenRequest", ("create",)),
    "finalize": ("", "v1", "Namespace", ("update",)),
}

_BY_KEY = {rt.key: rt for rt in RESOURCES}


@dataclass(frozen=True)
class GroupVersion:
    group: str
    version: str
    resources: tuple[ResourceType, ...] = field(default=())


def group_versions() -> list[GroupVersion]:
    """Group-versions in discovery order (core first)."""
    order: dict[tuple[str, str], list[ResourceType]] = {}
    for rt in RESOURCES:
        order.setdefault((rt.group, rt.version), []).append(rt)
    return [GroupVersion(g, v, tuple(rts)) for (g, v), rts in order.items()]


def lookup(group: str, version: str, plural: str) -> ResourceType | None:
    rt = _BY_KEY.get((group, plural))
    if rt is None or rt.version != version:
        return None
    return rt


def by_key(group: str, plural: str) -> ResourceType:
    return _BY_KEY[(group, plural)]


def by_kind(api_version: str, kind: str) -> ResourceType | None:
    for rt in RESOURCES:
        if rt.kind == kind and rt.api_version == api_version:
            return rt
    return None


# Convenience handles used by controllers.
NAMESPACES = by_key("", "namespaces")
NODES = by_key("", "nodes")
PODS = by_key("", "pods")
SERVICES = by_key("", "services")
ENDPOINTS = by_key("", "endpoints")
CONFIGMAPS = by_key("", "configmaps")
SECRETS = by_key("", "secrets")
EVENTS = by_key("", "events")
SERVICEACCOUNTS = by_key("", "serviceaccounts")
RESOURCEQUOTAS = by_key("", "resourcequotas")
LIMITRANGES = by_key("", "limitranges")
DEPLOYMENTS = by_key("apps", "deployments")
REPLICASETS = by_key("apps", "replicasets")
STATEFULSETS = by_key("apps", "statefulsets")
DAEMONSETS = by_key("apps", "daemonsets")
HORIZONTALPODAUTOSCALERS = by_key("autoscaling", "horizontalpodautoscalers")
CONTROLLERREVISIONS = by_key("apps", "controllerrevisions")
PERSISTENTVOLUMECLAIMS = by_key("", "persistentvolumeclaims")
JOBS = by_key("batch", "jobs")
CRONJOBS = by_key("batch", "cronjobs")
NETWORKPOLICIES = by_key("networking.k8s.io", "networkpolicies")
ROLES = by_key("rbac.authorization.k8s.io", "roles")
ROLEBINDINGS = by_key("rbac.authorization.k8s.io", "rolebindings")
CLUSTERROLES = by_key("rbac.authorization.k8s.io", "clusterroles")
CLUSTERROLEBINDINGS = by_key("rbac.authorization.k8s.io", "clusterrolebindings")
