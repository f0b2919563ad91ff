"""Semantic validation (422 ``Invalid``) after defaulting, plus the update rules for immutable fields.

``validate(rt, obj, old)`` raises one ApiError listing every problem with its field path, worded like
the real API server (``Deployment.apps "api" is invalid: spec.selector: Required value``).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from . import naming, quantity
from .service_defaults import SERVICE_CIDR
from .fielderrors import FieldErrors, go_label_selector, go_value
from .resources import ResourceType
from .validation_pods import (
    PROTOCOLS, immutable, validate_deployment_spec, validate_job_spec, validate_labels, validate_pod_spec,
    validate_pod_update, validate_selected_template, validate_template,
)

STANDARD_FINALIZERS = ("kubernetes", "orphan", "foregroundDeletion")
SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
RBAC_KINDS = ("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")
MAX_ANNOTATIONS = 256 * 1024
MAX_DATA = 1024 * 1024
_CRON_MACROS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_CRON_ITEM = r"(\*|\?|[0-9A-Za-z]+(-[0-9A-Za-z]+)?)(/[0-9]+)?"
_CRON_FIELD = re.compile(f"^{_CRON_ITEM}(,{_CRON_ITEM})*$")


def qualified_kind(rt: ResourceType) -> str:
    return f"{rt.kind}.{rt.group}" if rt.group else rt.kind


def _name_checks(kind: str):
    if kind == "Namespace":
        return naming.dns1123_label
    if kind == "Service":
        return naming.dns1035_label
    if kind in RBAC_KINDS:
        return naming.path_segment_name
    return naming.dns1123_subdomain


def validate_metadata(rt: ResourceType, meta: dict, errs: FieldErrors) -> None:
    check = _name_checks(rt.kind)
    name, prefix = meta.get("name"), meta.get("generateName")
    if name:
        errs.check("metadata.name", name, check(name))
        if rt.kind == "CronJob" and len(name) > 52:
            errs.invalid("metadata.name", name, "must be no more than 52 characters")
    elif prefix:
        masked = prefix[:-1] + "a" if len(prefix) > 1 and prefix.endswith("-") else prefix
        errs.check("metadata.generateName", prefix, check(masked))
    else:
        errs.required("metadata.name", "name or generateName is required")
    ns = meta.get("namespace")
    if rt.namespaced and ns:
        errs.check("metadata.namespace", ns, naming.dns1123_label(ns))
    validate_labels(meta.get("labels"), "metadata.labels", errs)
    size = 0
    for k, v in (meta.get("annotations") or {}).items():
        errs.check("metadata.annotations", k, naming.qualified_name(k.lower()))
        size += len(k) + len(v)
    if size > MAX_ANNOTATIONS:
        errs.too_long("metadata.annotations", MAX_ANNOTATIONS)
    for f in meta.get("finalizers") or ():
        msgs = naming.qualified_name(f)
        errs.check("metadata.finalizers", f, msgs)
        if not msgs and "/" not in f and f not in STANDARD_FINALIZERS:
            errs.invalid("metadata.finalizers", f, "name is neither a standard finalizer name nor is it fully "
                                                   "qualified")
    controllers = 0
    for ref in meta.get("ownerReferences") or ():
        for field in ("apiVersion", "kind", "name", "uid"):
            if not ref.get(field):
                detail = "version" if field == "apiVersion" else field
                errs.invalid(f"metadata.ownerReferences.{field}", "", f"{detail} must not be empty")
        controllers += bool(ref.get("controller"))
    if controllers > 1:
        errs.invalid("metadata.ownerReferences", meta["ownerReferences"],
                     "Only one reference can have Controller set to true")


def _service(spec: dict, old: dict | None, errs: FieldErrors) -> None:
    stype = spec.get("type", "ClusterIP")
    if stype not in SERVICE_TYPES:
        errs.unsupported("spec.type", stype, SERVICE_TYPES)
    cluster_ip = spec.get("clusterIP", "")
    ports = spec.get("ports") or []
    if stype == "ExternalName":
        external = spec.get("externalName")
        if not external:
            errs.required("spec.externalName")
        else:
            errs.check("spec.externalName", external, naming.dns1123_subdomain(external.rstrip(".")))
    elif not ports and cluster_ip != "None":
        errs.required("spec.ports")
    if cluster_ip == "None" and stype in ("NodePort", "LoadBalancer"):
        errs.invalid("spec.clusterIP", "None", f"may not be set to 'None' for {stype} services")
    elif cluster_ip and cluster_ip != "None" and stype != "ExternalName":
        try:
            ip = ipaddress.ip_address(cluster_ip)
        except ValueError:
            errs.invalid("spec.clusterIPs[0]", cluster_ip, "must be a valid IP address, (e.g. 10.9.8.7 or "
                                                           "2001:db8::ffff)")
        else:
            if ip not in SERVICE_CIDR and not (old and (old.get("spec") or {}).get("clusterIP") == cluster_ip):
                errs.invalid("spec.clusterIPs", [cluster_ip], f"failed to allocate IP {cluster_ip}: provided IP is "
                             f"not in the valid range. The range of valid IPs is {SERVICE_CIDR}")
    names: set[str] = set()
    seen: set[tuple[Any, Any]] = set()
    for i, p in enumerate(ports):
        pp = f"spec.ports[{i}]"
        name = p.get("name")
        if len(ports) > 1 and not name:
            errs.required(f"{pp}.name")
        if name:
            errs.check(f"{pp}.name", name, naming.dns1123_label(name))
            if name in names:
                errs.duplicate(f"{pp}.name", name)
            names.add(name)
        port = p.get("port")
        if port is None:
            errs.required(f"{pp}.port")
        elif not 1 <= port <= 65535:
            errs.invalid(f"{pp}.port", port, "must be between 1 and 65535, inclusive")
        protocol = p.get("protocol", "TCP")
        if protocol not in PROTOCOLS:
            errs.unsupported(f"{pp}.protocol", protocol, PROTOCOLS)
        target = p.get("targetPort")
        if isinstance(target, int) and not 1 <= target <= 65535:
            errs.invalid(f"{pp}.targetPort", target, "must be between 1 and 65535, inclusive")
        elif isinstance(target, str):
            errs.check(f"{pp}.targetPort", target, naming.port_name(target))
        node_port = p.get("nodePort")
        if node_port:
            if stype not in ("NodePort", "LoadBalancer"):
                errs.forbidden(f"{pp}.nodePort", f"may not be used when `type` is '{stype}'")
            elif not 30000 <= node_port <= 32767:
                errs.invalid(f"{pp}.nodePort", node_port, "provided port is not in the valid range. The range of "
                                                          "valid ports is 30000-32767")
        if (port, protocol) in seen:
            errs.duplicate(pp, f"{port}/{protocol}")
        seen.add((port, protocol))
    if spec.get("sessionAffinity", "None") not in ("ClientIP", "None"):
        errs.unsupported("spec.sessionAffinity", spec.get("sessionAffinity"), ("ClientIP", "None"))
    if spec.get("externalTrafficPolicy") and stype not in ("NodePort", "LoadBalancer"):
        errs.invalid("spec.externalTrafficPolicy", spec["externalTrafficPolicy"],
                     "may only be set when `type` is 'NodePort' or 'LoadBalancer'")
    validate_labels(spec.get("selector"), "spec.selector", errs)
    if old is not None and stype != "ExternalName":
        old_ip = (old.get("spec") or {}).get("clusterIP")
        if old_ip and (old.get("spec") or {}).get("type") != "ExternalName":
            immutable(errs, "spec.clusterIP", cluster_ip, old_ip)


def _data(obj: dict, old: dict | None, errs: FieldErrors, is_secret: bool) -> None:
    size = 0
    data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
    for field, values in (("data", data), ("binaryData", binary)):
        for k, v in values.items():
            errs.check(f"{field}[{k}]", k, naming.config_key(k))
            size += len(k) + len(v)
            if field == "binaryData" and k in data:
                errs.invalid(f"data[{k}]", k, "duplicate of key present in binaryData")
    if size > MAX_DATA:
        errs.too_long("data", MAX_DATA)
    if is_secret:
        stype = obj.get("type", "Opaque")
        required = {"kubernetes.io/tls": ("tls.crt", "tls.key"),
                    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
                    "kubernetes.io/dockercfg": (".dockercfg",)}.get(stype, ())
        for key in required:
            if key not in data:
                errs.required(f"data[{key}]")
        if stype == "kubernetes.io/service-account-token" and not (
                (obj.get("metadata") or {}).get("annotations") or {}).get("kubernetes.io/service-account.name"):
            errs.required("metadata.annotations[kubernetes.io/service-account.name]")
        if old is not None:
            immutable(errs, "type", stype, old.get("type", "Opaque"))
    if old is not None and old.get("immutable") is True:
        if obj.get("immutable") is not True:
            errs.forbidden("immutable", "field is immutable when `immutable` is set")
        for field in ("data", "binaryData"):
            if obj.get(field) != old.get(field):
                errs.forbidden(field, "field is immutable when `immutable` is set")


def _cron_schedule(schedule: Any, errs: FieldErrors) -> None:
    if not schedule:
        errs.required("spec.schedule")
        return
    text = schedule.strip()
    if text.startswith("@"):
        if text in _CRON_MACROS or text.startswith("@every "):
            return
        errs.invalid("spec.schedule", schedule, f"unrecognized descriptor: {text}")
        return
    fields = text.split()
    if len(fields) != 5:
        errs.invalid("spec.schedule", schedule, f"expected exactly 5 fields, found {len(fields)}: {text}")
        return
    for f in fields:
        if not _CRON_FIELD.match(f):
            errs.invalid("spec.schedule", schedule, f"failed to parse int from {f}: strconv.Atoi: parsing "
                                                    f"{go_value(f)}: invalid syntax")
            return


def _cronjob(spec: dict, errs: FieldErrors) -> None:
    _cron_schedule(spec.get("schedule"), errs)
    policy = spec.get("concurrencyPolicy", "Allow")
    if policy not in ("Allow", "Forbid", "Replace"):
        errs.unsupported("spec.concurrencyPolicy", policy, ("Allow", "Forbid", "Replace"))
    for field in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        errs.non_negative(f"spec.{field}", spec.get(field))
    job_template = spec.get("jobTemplate")
    if not isinstance(job_template, dict):
        errs.required("spec.jobTemplate")
        return
    validate_labels((job_template.get("metadata") or {}).get("labels"), "spec.jobTemplate.metadata.labels", errs)
    validate_job_spec(job_template.get("spec"), "spec.jobTemplate.spec", errs, check_selector=True)


def _hpa(spec: dict, errs: FieldErrors) -> None:
    ref = spec.get("scaleTargetRef") or {}
    for field in ("kind", "name"):
        if not ref.get(field):
            errs.required(f"spec.scaleTargetRef.{field}")
    high, low = spec.get("maxReplicas"), spec.get("minReplicas", 1)
    if high is None:
        errs.required("spec.maxReplicas")
    elif high < 1:
        errs.invalid("spec.maxReplicas", high, "must be greater than or equal to 1")
    if isinstance(low, int) and low < 1:
        errs.invalid("spec.minReplicas", low, "must be greater than or equal to 1")
    elif isinstance(low, int) and isinstance(high, int) and low > high:
        errs.invalid("spec.minReplicas", low, "must be less than or equal to maxReplicas")


def _quantities(values: Any, path: str, errs: FieldErrors) -> None:
    for k, v in (values or {}).items():
        if quantity.to_float(v) < 0:
            errs.invalid(f"{path}[{k}]", v, "must be greater than or equal to 0")


def _workload_update(kind: str, spec: dict, old_spec: dict, errs: FieldErrors) -> None:
    if kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet") and old_spec.get("selector") is not None:
        immutable(errs, "spec.selector", spec.get("selector"), old_spec.get("selector"),
                  go_label_selector(spec.get("selector")))
    if kind == "StatefulSet":
        allowed = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                   "minReadySeconds", "revisionHistoryLimit")
        if {k: v for k, v in spec.items() if k not in allowed} != {k: v for k, v in old_spec.items()
                                                                   if k not in allowed}:
            errs.forbidden("spec", "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                                   "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
                                   "'minReadySeconds' are forbidden")
    if kind == "Job":
        immutable(errs, "spec.selector", spec.get("selector"), old_spec.get("selector"),
                  go_label_selector(spec.get("selector")))
        immutable(errs, "spec.template", spec.get("template"), old_spec.get("template"), "core.PodTemplateSpec{...}")
        immutable(errs, "spec.completionMode", spec.get("completionMode"), old_spec.get("completionMode"))
        if spec.get("completionMode") != "Indexed":
            immutable(errs, "spec.completions", spec.get("completions"), old_spec.get("completions"))


def validate_statefulset_spec(spec: dict[str, Any], errs: FieldErrors) -> None:
    """The StatefulSet fields its controller reads (after defaulting)."""
    policy = spec.get("podManagementPolicy")
    if policy not in ("OrderedReady", "Parallel"):
        errs.unsupported("spec.podManagementPolicy", policy, ("OrderedReady", "Parallel"))
    strategy = spec.get("updateStrategy") or {}
    if strategy.get("type") not in ("OnDelete", "RollingUpdate"):
        errs.unsupported("spec.updateStrategy.type", strategy.get("type"), ("OnDelete", "RollingUpdate"))
    errs.non_negative("spec.updateStrategy.rollingUpdate.partition",
                      (strategy.get("rollingUpdate") or {}).get("partition"))
    for i, claim in enumerate(spec.get("volumeClaimTemplates") or []):
        path = f"spec.volumeClaimTemplates[{i}]"
        name = (claim.get("metadata") or {}).get("name")
        if not name:
            errs.required(f"{path}.metadata.name")
        else:
            errs.check(f"{path}.metadata.name", name, naming.dns1123_subdomain(name))
        if not (claim.get("spec") or {}).get("accessModes"):
            errs.required(f"{path}.spec.accessModes", "at least 1 access mode is required")
    for key in ("whenDeleted", "whenScaled"):
        value = (spec.get("persistentVolumeClaimRetentionPolicy") or {}).get(key)
        if value not in ("Retain", "Delete"):
            errs.unsupported(f"spec.persistentVolumeClaimRetentionPolicy.{key}", value, ("Retain", "Delete"))


def validate(rt: ResourceType, obj: dict, old: dict | None) -> None:
    """Raise 422 Invalid listing every problem; ``old`` is the stored object on update."""
    if not rt.stored:
        return
    errs = FieldErrors()
    meta = obj.get("metadata") or {}
    validate_metadata(rt, meta, errs)
    kind = rt.kind
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    old_spec = (old or {}).get("spec") or {}
    if kind == "Pod":
        validate_pod_spec(obj.get("spec"), "spec", errs)
        if old is not None and not errs:
            validate_pod_update(spec, old_spec, errs)
    elif kind == "Deployment":
        validate_deployment_spec(spec, errs)
    elif kind in ("ReplicaSet", "StatefulSet", "DaemonSet"):
        errs.non_negative("spec.replicas", spec.get("replicas"))
        errs.non_negative("spec.minReadySeconds", spec.get("minReadySeconds"))
        label = "deployment" if kind == "ReplicaSet" else kind.lower()
        validate_selected_template(spec, errs, label)
        if kind == "StatefulSet":
            validate_statefulset_spec(spec, errs)
        if kind == "DaemonSet":
            strategy = spec.get("updateStrategy") or {}
            if strategy.get("type") not in ("OnDelete", "RollingUpdate"):
                errs.unsupported("spec.updateStrategy.type", strategy.get("type"), ("OnDelete", "RollingUpdate"))
    elif kind == "ReplicationController":
        errs.non_negative("spec.replicas", spec.get("replicas"))
        selector = spec.get("selector") or {}
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if not selector:
            errs.required("spec.selector")
        elif any(labels.get(k) != v for k, v in selector.items()):
            errs.invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`")
        validate_template(spec.get("template"), "spec.template", errs)
    elif kind == "Job":
        validate_job_spec(spec, "spec", errs, check_selector=True)
    elif kind == "CronJob":
        _cronjob(spec, errs)
    elif kind == "Service":
        _service(spec, old, errs)
    elif kind in ("ConfigMap", "Secret"):
        _data(obj, old, errs, kind == "Secret")
    elif kind == "Namespace":
        for f in spec.get("finalizers") or ():
            errs.check("spec.finalizers", f, naming.qualified_name(f))
    elif kind == "HorizontalPodAutoscaler":
        _hpa(spec, errs)
    elif kind == "ResourceQuota":
        _quantities(spec.get("hard"), "spec.hard", errs)
    elif kind == "LimitRange":
        for i, item in enumerate(spec.get("limits") or ()):
            for bucket in ("max", "min", "default", "defaultRequest"):
                _quantities((item or {}).get(bucket), f"spec.limits[{i}].{bucket}", errs)
    if old is not None:
        _workload_update(kind, spec, old_spec, errs)
    errs.raise_if_any(qualified_kind(rt), meta.get("name") or meta.get("generateName") or "")
