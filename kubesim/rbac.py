"""RBAC authorization evaluated from the Roles and bindings in the store, like the real authorizer.

``system:masters`` bypasses everything. Every authenticated user may read discovery, version,
OpenAPI and health paths and create self-subject access/rules reviews (the bootstrap
``system:discovery`` and ``system:basic-user`` roles, which kubesim builds in rather than stores).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from .auth import AUTHENTICATED, UserInfo, sa_user
from .errors import ApiError
from .resources import CLUSTERROLEBINDINGS, CLUSTERROLES, ROLEBINDINGS, ROLES
from .store import Obj, Store

RBAC_GROUP = "rbac.authorization.k8s.io"

# The built-in grants every authenticated user has.
_BASIC_RULES: tuple[dict[str, Any], ...] = (
    {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
     "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
    {"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez",
                                           "/openapi", "/openapi/*", "/readyz", "/version", "/version/"]},
)


@dataclass(frozen=True, slots=True)
class Attributes:
    """What a request wants to do, in the authorizer's terms (mirrors k8s authorizer.Attributes)."""

    user: UserInfo
    verb: str
    resource_request: bool
    namespace: str = ""
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""


def _has(values: Any, wanted: str) -> bool:
    return isinstance(values, list) and (wanted in values or "*" in values)


def _resource_matches(rule: dict[str, Any], resource: str, subresource: str) -> bool:
    resources = rule.get("resources")
    if not isinstance(resources, list):
        return False
    combined = f"{resource}/{subresource}" if subresource else resource
    for r in resources:
        if r == "*" or r == combined:
            return True
        if subresource and (r == f"{resource}/*" or r == f"*/{subresource}"):
            return True
    return False


def _path_matches(rule: dict[str, Any], path: str) -> bool:
    urls = rule.get("nonResourceURLs")
    if not isinstance(urls, list):
        return False
    for u in urls:
        if not isinstance(u, str):
            continue
        if u == "*" or u == path or (u.endswith("*") and path.startswith(u[:-1])):
            return True
    return False


def rule_allows(rule: Any, attrs: Attributes) -> bool:
    if not isinstance(rule, dict) or not _has(rule.get("verbs"), attrs.verb):
        return False
    if not attrs.resource_request:
        return _path_matches(rule, attrs.path)
    if not _has(rule.get("apiGroups"), attrs.api_group):
        return False
    if not _resource_matches(rule, attrs.resource, attrs.subresource):
        return False
    names = rule.get("resourceNames")
    return not names or (isinstance(names, list) and attrs.name in names)


def _subject_matches(subject: Any, user: UserInfo, binding_ns: str) -> bool:
    if not isinstance(subject, dict):
        return False
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return name == user.name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or binding_ns
        return user.name == f"system:serviceaccount:{ns}:{name}"
    return False


def forbidden(attrs: Attributes, reason: str = "") -> ApiError:
    """403 worded exactly like the real server's RBAC denial."""
    user = attrs.user.name
    if not attrs.resource_request:
        msg = f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
        return ApiError(403, f"forbidden: {msg}" + (f": {reason}" if reason else ""), "Forbidden", {})
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    if attrs.namespace:
        msg = (f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" '
               f'in the namespace "{attrs.namespace}"')
    else:
        msg = (f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" '
               "at the cluster scope")
    if reason:
        msg = f"{msg}: {reason}"
    qualified = f"{attrs.resource}.{attrs.api_group}" if attrs.api_group else attrs.resource
    subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    details: dict[str, Any] = {"kind": attrs.resource}
    if attrs.name:
        details["name"] = attrs.name
    if attrs.api_group:
        details["group"] = attrs.api_group
    return ApiError(403, f"{subject} is forbidden: {msg}", "Forbidden", details)


class Authorizer:
    def __init__(self, store: Store):
        self.store = store

    def _role_rules(self, ref: Any, binding_ns: str) -> list[Any]:
        if not isinstance(ref, dict):
            return []
        kind, name = ref.get("kind"), ref.get("name")
        if not isinstance(name, str):
            return []
        if kind == "ClusterRole":
            role = self.store.find(CLUSTERROLES, "", name)
        elif kind == "Role" and binding_ns:
            role = self.store.find(ROLES, binding_ns, name)
        else:
            return []
        rules = role.get("rules") if role else None
        return rules if isinstance(rules, list) else []

    def _bindings(self, namespace: str) -> Iterator[tuple[Obj, str]]:
        for b in self.store.list(CLUSTERROLEBINDINGS):
            yield b, ""
        if namespace:
            for b in self.store.list(ROLEBINDINGS, namespace):
                yield b, namespace

    def rules_for(self, user: UserInfo, namespace: str) -> list[Any]:
        """Every rule that applies to ``user`` in ``namespace`` (cluster-wide rules included)."""
        rules: list[Any] = list(_BASIC_RULES) if AUTHENTICATED in user.groups else []
        for binding, ns in self._bindings(namespace):
            subjects = binding.get("subjects")
            if isinstance(subjects, list) and any(_subject_matches(s, user, ns) for s in subjects):
                rules.extend(self._role_rules(binding.get("roleRef"), ns))
        return rules

    def allowed(self, attrs: Attributes) -> bool:
        if attrs.user.is_master:
            return True
        return any(rule_allows(r, attrs) for r in self.rules_for(attrs.user, attrs.namespace))

    def check(self, attrs: Attributes) -> None:
        if not self.allowed(attrs):
            raise forbidden(attrs)

    def impersonate(self, user: UserInfo, name: str, groups: list[str], uid: str = "") -> UserInfo:
        """The user an ``Impersonate-User``/``-Group``/``-Uid`` request acts as, if ``user`` may impersonate it."""
        checks: list[Attributes] = []
        sa = name.split(":") if name.startswith("system:serviceaccount:") else []
        if len(sa) == 4 and sa[2] and sa[3]:
            checks.append(Attributes(user, "impersonate", True, sa[2], "", "serviceaccounts", "", sa[3]))
        else:
            checks.append(Attributes(user, "impersonate", True, "", "", "users", "", name))
        checks.extend(Attributes(user, "impersonate", True, "", "", "groups", "", g) for g in groups)
        if uid:
            checks.append(Attributes(user, "impersonate", True, "", "authentication.k8s.io", "uids", "", uid))
        for attrs in checks:
            self.check(attrs)
        if len(sa) == 4 and not groups:
            return sa_user(sa[2], sa[3], uid)
        all_groups = tuple(dict.fromkeys([*groups, AUTHENTICATED])) if name != "system:anonymous" else tuple(groups)
        return UserInfo(name, all_groups, uid)

    # -- reviews ----------------------------------------------------------------------------
    def access_review(self, user: UserInfo, spec: Any) -> dict[str, Any]:
        """``status`` for a (Self)SubjectAccessReview spec."""
        if not isinstance(spec, dict):
            raise ApiError(400, "spec must be an object", "BadRequest")
        ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        if isinstance(ra, dict):
            attrs = Attributes(user, str(ra.get("verb") or ""), True, str(ra.get("namespace") or ""),
                               str(ra.get("group") or ""), str(ra.get("resource") or ""),
                               str(ra.get("subresource") or ""), str(ra.get("name") or ""))
        elif isinstance(nra, dict):
            attrs = Attributes(user, str(nra.get("verb") or ""), False, path=str(nra.get("path") or ""))
        else:
            raise ApiError(422, "spec.resourceAttributes: Invalid value: null: exactly one of "
                                "nonResourceAttributes or resourceAttributes must be specified", "Invalid")
        if self.allowed(attrs):
            reason = "" if not user.is_master else "allowed by the system:masters group"
            out: dict[str, Any] = {"allowed": True}
            if reason:
                out["reason"] = reason
            return out
        return {"allowed": False}

    def rules_review(self, user: UserInfo, namespace: str) -> dict[str, Any]:
        """``status`` for a SelfSubjectRulesReview in ``namespace``."""
        if user.is_master:
            return {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False}
        resource_rules, non_resource_rules = [], []
        for rule in self.rules_for(user, namespace):
            if not isinstance(rule, dict):
                continue
            if rule.get("nonResourceURLs"):
                non_resource_rules.append({"verbs": rule.get("verbs", []), "nonResourceURLs": rule["nonResourceURLs"]})
            if rule.get("resources"):
                entry = {k: rule[k] for k in ("verbs", "apiGroups", "resources", "resourceNames") if rule.get(k)}
                resource_rules.append(entry)
        return {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": False}


def _rule(groups: list[str], resources: list[str], verbs: list[str]) -> dict[str, Any]:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


_READ = ["get", "list", "watch"]
_WRITE = ["create", "delete", "deletecollection", "patch", "update"]
_VIEW_RULES = [
    _rule([""], ["configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods",
                 "pods/status", "pods/log", "replicationcontrollers", "replicationcontrollers/scale",
                 "replicationcontrollers/status", "serviceaccounts", "services", "services/status", "events",
                 "limitranges", "resourcequotas", "resourcequotas/status", "namespaces/status"], _READ),
    _rule([""], ["namespaces"], _READ),
    _rule(["apps"], ["daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status",
                     "replicasets", "replicasets/scale", "replicasets/status", "statefulsets", "statefulsets/scale",
                     "statefulsets/status", "controllerrevisions"], _READ),
    _rule(["autoscaling"], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"], _READ),
    _rule(["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"], _READ),
    _rule(["networking.k8s.io"], ["ingresses", "ingresses/status", "networkpolicies"], _READ),
    _rule(["metrics.k8s.io"], ["pods", "nodes"], _READ),
]
_EDIT_RULES = [
    _rule([""], ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "pods/eviction"],
          _WRITE + _READ),
    _rule([""], ["configmaps", "endpoints", "persistentvolumeclaims", "replicationcontrollers",
                 "replicationcontrollers/scale", "secrets", "serviceaccounts", "services"], _WRITE + _READ),
    _rule([""], ["serviceaccounts/token"], ["create"]),
    _rule(["apps"], ["daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets",
                     "replicasets/scale", "statefulsets", "statefulsets/scale"], _WRITE + _READ),
    _rule(["autoscaling"], ["horizontalpodautoscalers"], _WRITE + _READ),
    _rule(["batch"], ["cronjobs", "jobs"], _WRITE + _READ),
    _rule(["networking.k8s.io"], ["ingresses", "networkpolicies"], _WRITE + _READ),
    *_VIEW_RULES,
]
_ADMIN_RULES = [
    _rule([RBAC_GROUP], ["rolebindings", "roles"], _WRITE + _READ),
    _rule(["authorization.k8s.io"], ["localsubjectaccessreviews"], ["create"]),
    *_EDIT_RULES,
]


def bootstrap_cluster_roles() -> list[Obj]:
    """The user-facing default ClusterRoles every cluster has (cluster-admin, admin, edit, view)."""
    def role(name: str, rules: list[dict[str, Any]]) -> Obj:
        return {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole",
                "metadata": {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
                             "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
                "rules": rules}
    return [
        role("cluster-admin", [_rule(["*"], ["*"], ["*"]), {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
        role("admin", _ADMIN_RULES),
        role("edit", _EDIT_RULES),
        role("view", _VIEW_RULES),
    ]


def bootstrap_cluster_role_bindings() -> list[Obj]:
    return [{"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRoleBinding",
             "metadata": {"name": "cluster-admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
             "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "cluster-admin"},
             "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": "system:masters"}]}]
