"""API-server defaulting: the values a real cluster fills in on every write.

``kubectl describe``, ``rollout history`` and template comparison all see these, so they must match
the real ones (``SetDefaults_*`` in k8s.io/kubernetes/pkg/apis/*/v1 plus the admission plugins that
always run). Every function fills only what is missing, so applying defaults twice changes nothing.
Functions mutate the dict they are given; ``objects.prepare`` hands them a private copy.
"""

from __future__ import annotations

import base64
from typing import Any

from . import quantity
from .service_defaults import default_service, preserve_service

DEFAULT_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
     "tolerationSeconds": 300},
)
WORKLOAD_TEMPLATE_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController")


def image_pull_policy(image: str) -> str:
    """Always for ``:latest`` or no tag, IfNotPresent otherwise (digests count as pinned)."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    if ":" in last:
        return "Always" if last.rsplit(":", 1)[1] == "latest" else "IfNotPresent"
    return "Always"


# -- pods and templates ----------------------------------------------------------------------------

def _canonical_resources(res: dict) -> None:
    for bucket in ("limits", "requests"):
        values = res.get(bucket)
        if isinstance(values, dict):
            res[bucket] = {k: quantity.canonical(v) for k, v in values.items()}


def _default_probe(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    for k, v in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3)):
        probe.setdefault(k, v)
    http = probe.get("httpGet")
    if isinstance(http, dict):
        http.setdefault("path", "/")
        http.setdefault("scheme", "HTTP")


def default_container(c: dict) -> None:
    image = c.get("image")
    if isinstance(image, str) and image:
        c.setdefault("imagePullPolicy", image_pull_policy(image))
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    resources = c.setdefault("resources", {})
    if isinstance(resources, dict):
        _canonical_resources(resources)
    for p in c.get("ports") or ():
        if isinstance(p, dict):
            p.setdefault("protocol", "TCP")
    for env in c.get("env") or ():
        ref = (env.get("valueFrom") or {}).get("fieldRef") if isinstance(env, dict) else None
        if isinstance(ref, dict):
            ref.setdefault("apiVersion", "v1")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        _default_probe(c.get(probe))


def _default_volume(v: dict) -> None:
    for source in ("configMap", "secret", "projected", "downwardAPI"):
        if isinstance(v.get(source), dict):
            v[source].setdefault("defaultMode", 420)
    if isinstance(v.get("hostPath"), dict):
        v["hostPath"].setdefault("type", "")
    if isinstance(v.get("emptyDir"), dict) and "sizeLimit" in v["emptyDir"]:
        v["emptyDir"]["sizeLimit"] = quantity.canonical(v["emptyDir"]["sizeLimit"])


def default_pod_spec(spec: dict) -> None:
    """SetDefaults_PodSpec plus per-container and per-volume defaults (pods and templates alike)."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    if spec.get("serviceAccountName"):
        spec["serviceAccount"] = spec["serviceAccountName"]
    elif spec.get("serviceAccount"):
        spec["serviceAccountName"] = spec["serviceAccount"]
    for group in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(group) or ():
            if isinstance(c, dict):
                default_container(c)
    for v in spec.get("volumes") or ():
        if isinstance(v, dict):
            _default_volume(v)


def default_pod_template(template: dict) -> None:
    spec = template.get("spec")
    if isinstance(spec, dict):
        default_pod_spec(spec)


def qos_class(spec: dict) -> str:
    """Guaranteed, Burstable or BestEffort, as the API server computes it on pod creation."""
    containers = [c for g in ("initContainers", "containers") for c in spec.get(g) or () if isinstance(c, dict)]
    requests_any = limits_any = False
    guaranteed = True
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        if any(quantity.to_float(v) != 0 for v in req.values()):
            requests_any = True
        if any(quantity.to_float(v) != 0 for v in lim.values()):
            limits_any = True
        for r in ("cpu", "memory"):
            if r not in lim or r not in req or quantity.parse(lim[r])[0] != quantity.parse(req[r])[0]:
                guaranteed = False
    if not requests_any and not limits_any:
        return "BestEffort"
    return "Guaranteed" if guaranteed and containers else "Burstable"


def default_pod(pod: dict, creating: bool) -> None:
    """Pod-only defaults (SetDefaults_Pod and the always-on admission plugins)."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    for group in ("initContainers", "containers"):
        for c in spec.get(group) or ():
            res = c.get("resources") if isinstance(c, dict) else None
            if isinstance(res, dict) and isinstance(res.get("limits"), dict) and res["limits"]:
                requests = res.setdefault("requests", {})
                for k, v in res["limits"].items():
                    requests.setdefault(k, v)
    default_pod_spec(spec)
    spec.setdefault("enableServiceLinks", True)
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = spec["serviceAccount"] = "default"
    spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    tolerations = spec.setdefault("tolerations", [])
    if isinstance(tolerations, list):
        present = {(t.get("key"), t.get("effect")) for t in tolerations if isinstance(t, dict)}
        for t in DEFAULT_TOLERATIONS:
            if (t["key"], t["effect"]) not in present:
                tolerations.append(dict(t))
    if creating:
        pod["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}


# -- workloads -------------------------------------------------------------------------------------

def _spec(obj: dict) -> dict:
    spec = obj.setdefault("spec", {})
    return spec if isinstance(spec, dict) else {}


def default_deployment(obj: dict) -> None:
    spec = _spec(obj)
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            ru = strategy.setdefault("rollingUpdate", {})
            if isinstance(ru, dict):
                ru.setdefault("maxUnavailable", "25%")
                ru.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)


def default_replicaset(obj: dict) -> None:
    _spec(obj).setdefault("replicas", 1)


def default_replication_controller(obj: dict) -> None:
    spec = _spec(obj)
    spec.setdefault("replicas", 1)
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if labels and not spec.get("selector"):
        spec["selector"] = dict(labels)


def default_statefulset(obj: dict) -> None:
    spec = _spec(obj)
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate" and isinstance(strategy.setdefault("rollingUpdate", {}), dict):
            strategy["rollingUpdate"].setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    if isinstance(retention, dict):
        retention.setdefault("whenDeleted", "Retain")
        retention.setdefault("whenScaled", "Retain")


def default_daemonset(obj: dict) -> None:
    spec = _spec(obj)
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate" and isinstance(strategy.setdefault("rollingUpdate", {}), dict):
            strategy["rollingUpdate"].setdefault("maxUnavailable", 1)
            strategy["rollingUpdate"].setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)


def default_job(obj: dict, old: dict | None) -> None:
    """SetDefaults_Job. The generated selector needs the uid, so the Job controller adds it after
    create; on update a client that omits it keeps the stored one."""
    spec = _spec(obj)
    if "completions" not in spec and "parallelism" not in spec:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    old_selector = ((old or {}).get("spec") or {}).get("selector")
    if old_selector is not None and spec.get("selector") is None:
        spec["selector"] = old_selector


def default_cronjob(obj: dict) -> None:
    spec = _spec(obj)
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)


# -- everything else -------------------------------------------------------------------------------

def default_namespace(obj: dict, creating: bool) -> None:
    if creating:
        spec = _spec(obj)
        finalizers = spec.get("finalizers")
        if not isinstance(finalizers, list):
            finalizers = spec["finalizers"] = []
        if "kubernetes" not in finalizers:
            finalizers.append("kubernetes")
        obj["status"] = {"phase": "Active"}
    else:
        status = obj.setdefault("status", {})
        if isinstance(status, dict):
            status.setdefault("phase", "Active")


def default_secret(obj: dict) -> None:
    obj.setdefault("type", "Opaque")
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = obj.setdefault("data", {})
        for k, v in string_data.items():
            data[k] = base64.b64encode(str(v).encode()).decode()


def default_limit_range(obj: dict) -> None:
    for item in (_spec(obj).get("limits") or ()):
        if not isinstance(item, dict):
            continue
        for bucket in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            if isinstance(item.get(bucket), dict):
                item[bucket] = {k: quantity.canonical(v) for k, v in item[bucket].items()}
        if item.get("type") == "Container":
            default = item.setdefault("default", {})
            request = item.setdefault("defaultRequest", {})
            for k, v in (item.get("max") or {}).items():
                default.setdefault(k, v)
            for k, v in default.items():
                request.setdefault(k, v)
            for k, v in (item.get("min") or {}).items():
                request.setdefault(k, v)
            for bucket in ("default", "defaultRequest"):
                if not item[bucket]:
                    del item[bucket]


def default_resource_quota(obj: dict) -> None:
    hard = _spec(obj).get("hard")
    if isinstance(hard, dict):
        obj["spec"]["hard"] = {k: quantity.canonical(v) for k, v in hard.items()}


def default_pvc(obj: dict) -> None:
    spec = _spec(obj)
    spec.setdefault("volumeMode", "Filesystem")
    res = spec.get("resources")
    if isinstance(res, dict):
        _canonical_resources(res)


def default_hpa(obj: dict) -> None:
    spec = _spec(obj)
    spec.setdefault("minReplicas", 1)
    spec.setdefault("targetCPUUtilizationPercentage", 80)  # what a v1 read of the stored v2 default shows


def default_network_policy(obj: dict) -> None:
    spec = _spec(obj)
    spec.setdefault("podSelector", {})
    if "policyTypes" not in spec:
        spec["policyTypes"] = ["Ingress"] + (["Egress"] if spec.get("egress") else [])
    for direction in ("ingress", "egress"):
        for rule in spec.get(direction) or ():
            for p in (rule.get("ports") or ()) if isinstance(rule, dict) else ():
                if isinstance(p, dict):
                    p.setdefault("protocol", "TCP")


def default_role_binding(obj: dict) -> None:
    for s in obj.get("subjects") or ():
        if isinstance(s, dict) and "apiGroup" not in s:
            s["apiGroup"] = "" if s.get("kind") == "ServiceAccount" else "rbac.authorization.k8s.io"


STATUS_RESET_ON_CREATE = WORKLOAD_TEMPLATE_KINDS + ("CronJob", "HorizontalPodAutoscaler")


def apply_defaults(kind: str, obj: dict, old: dict | None) -> None:
    """Fill in every default for ``kind``; ``old`` is the stored object on update, None on create."""
    creating = old is None
    if creating and kind in STATUS_RESET_ON_CREATE:
        obj["status"] = {}  # PrepareForCreate: clients cannot create an object with a status
    if kind == "Pod":
        default_pod(obj, creating)
        return
    if kind in WORKLOAD_TEMPLATE_KINDS:
        template = _spec(obj).get("template")
        if isinstance(template, dict):
            default_pod_template(template)
    simple = {
        "Deployment": default_deployment, "ReplicaSet": default_replicaset,
        "ReplicationController": default_replication_controller, "StatefulSet": default_statefulset,
        "DaemonSet": default_daemonset, "CronJob": default_cronjob, "Secret": default_secret,
        "LimitRange": default_limit_range, "ResourceQuota": default_resource_quota,
        "PersistentVolumeClaim": default_pvc, "HorizontalPodAutoscaler": default_hpa,
        "NetworkPolicy": default_network_policy, "RoleBinding": default_role_binding,
        "ClusterRoleBinding": default_role_binding,
    }
    if kind in simple:
        simple[kind](obj)
    elif kind == "Job":
        default_job(obj, old)
    elif kind == "Service":
        if old is not None:
            preserve_service(obj, old)
        default_service(obj, creating)
    elif kind == "Namespace":
        default_namespace(obj, creating)
    if kind == "CronJob":
        job_spec = ((obj.get("spec") or {}).get("jobTemplate") or {}).get("spec")
        template = job_spec.get("template") if isinstance(job_spec, dict) else None
        if isinstance(template, dict):
            default_pod_template(template)
