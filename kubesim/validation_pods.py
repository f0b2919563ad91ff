"""Validation of pod specs, pod templates, label selectors and the workload kinds that embed them.

Messages and field paths follow k8s.io/kubernetes ``pkg/apis/core/validation`` and
``pkg/apis/apps/validation`` so agents see what a real cluster would tell them.
"""

from __future__ import annotations

import re
from typing import Any

from . import naming, quantity
from .fielderrors import FieldErrors, go_label_selector, go_value
from .selectors import selector_from_spec

PROTOCOLS = ("SCTP", "TCP", "UDP")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None")
FIELD_REFS = ("metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid",
              "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP",
              "status.podIPs")
STANDARD_RESOURCES = ("cpu", "memory", "ephemeral-storage", "storage")
_PERCENT = re.compile(r"^[0-9]+%$")


def validate_labels(labels: Any, path: str, errs: FieldErrors) -> None:
    for k, v in (labels or {}).items():
        errs.check(path, k, naming.qualified_name(k))
        if isinstance(v, str):
            errs.check(path, v, naming.label_value(v))


def validate_selector(sel: Any, path: str, errs: FieldErrors) -> None:
    if not isinstance(sel, dict):
        return
    validate_labels(sel.get("matchLabels"), f"{path}.matchLabels", errs)
    for i, expr in enumerate(sel.get("matchExpressions") or ()):
        p = f"{path}.matchExpressions[{i}]"
        if not isinstance(expr, dict):
            continue
        op, values = expr.get("operator"), expr.get("values") or []
        if op in ("In", "NotIn"):
            if not values:
                errs.required(f"{p}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.forbidden(f"{p}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        else:
            errs.invalid(f"{p}.operator", op, "not a valid selector operator")
        errs.check(f"{p}.key", expr.get("key", ""), naming.qualified_name(expr.get("key") or ""))


def _resources(res: Any, path: str, errs: FieldErrors) -> None:
    if not isinstance(res, dict):
        return
    for bucket in ("limits", "requests"):
        for name, value in (res.get(bucket) or {}).items():
            p = f"{path}.{bucket}[{name}]"
            if name not in STANDARD_RESOURCES and not name.startswith("hugepages-") and "/" not in name:
                errs.invalid(p, name, "must be a standard resource type or fully qualified")
            if quantity.to_float(value) < 0:
                errs.invalid(p, value, "must be greater than or equal to 0")
    limits, requests = res.get("limits") or {}, res.get("requests") or {}
    for name, req in requests.items():
        if name in limits and quantity.parse(req)[0] > quantity.parse(limits[name])[0]:
            errs.invalid(f"{path}.requests", req, f"must be less than or equal to {name} limit of {limits[name]}")


def _port_or_name(value: Any, path: str, errs: FieldErrors) -> None:
    if isinstance(value, str):
        errs.check(path, value, naming.port_name(value))
    elif isinstance(value, int) and not 1 <= value <= 65535:
        errs.invalid(path, value, "must be between 1 and 65535, inclusive")


def _probe(probe: Any, path: str, errs: FieldErrors, liveness_like: bool) -> None:
    if not isinstance(probe, dict):
        return
    handlers = [h for h in ("exec", "httpGet", "tcpSocket", "grpc") if h in probe]
    if not handlers:
        errs.required(path, "must specify a handler type")
    elif len(handlers) > 1:
        errs.forbidden(f"{path}.{handlers[1]}", "may not specify more than 1 handler type")
    for field in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        errs.non_negative(f"{path}.{field}", probe.get(field))
    if liveness_like and probe.get("successThreshold", 1) != 1:
        errs.invalid(f"{path}.successThreshold", probe.get("successThreshold"), "must be 1")
    for h in ("httpGet", "tcpSocket"):
        if isinstance(probe.get(h), dict):
            _port_or_name(probe[h].get("port"), f"{path}.{h}.port", errs)
    if isinstance(probe.get("httpGet"), dict) and probe["httpGet"].get("scheme", "HTTP") not in ("HTTP", "HTTPS"):
        errs.unsupported(f"{path}.httpGet.scheme", probe["httpGet"]["scheme"], ("HTTP", "HTTPS"))


def _env(env: list, path: str, errs: FieldErrors) -> None:
    for i, e in enumerate(env):
        p = f"{path}[{i}]"
        if not isinstance(e, dict):
            continue
        name = e.get("name")
        if not name:
            errs.required(f"{p}.name")
        else:
            errs.check(f"{p}.name", name, naming.env_var_name(name))
        source = e.get("valueFrom")
        if not isinstance(source, dict):
            continue
        if e.get("value"):
            errs.invalid(f"{p}.valueFrom", "", "may not be specified when `value` is not empty")
        kinds = [k for k in ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef") if k in source]
        if not kinds:
            errs.invalid(f"{p}.valueFrom", "", "must specify one of: `fieldRef`, `resourceFieldRef`, "
                                              "`configMapKeyRef` or `secretKeyRef`")
        elif len(kinds) > 1:
            errs.invalid(f"{p}.valueFrom", "", "may not have more than one field specified at a time")
        for ref in ("configMapKeyRef", "secretKeyRef"):
            sel = source.get(ref)
            if isinstance(sel, dict):
                if not sel.get("key"):
                    errs.required(f"{p}.valueFrom.{ref}.key")
                else:
                    errs.check(f"{p}.valueFrom.{ref}.key", sel["key"], naming.config_key(sel["key"]))
                if not sel.get("name"):
                    errs.required(f"{p}.valueFrom.{ref}.name")
        ref = source.get("fieldRef")
        if isinstance(ref, dict):
            fp = ref.get("fieldPath") or ""
            base = fp.split("[", 1)[0] if fp.startswith(("metadata.labels[", "metadata.annotations[")) else fp
            if not fp:
                errs.required(f"{p}.valueFrom.fieldRef.fieldPath")
            elif base not in FIELD_REFS:
                errs.unsupported(f"{p}.valueFrom.fieldRef.fieldPath", fp, FIELD_REFS)


def _container(c: dict, path: str, volumes: set[str], errs: FieldErrors) -> None:
    name = c.get("name")
    if not name:
        errs.required(f"{path}.name")
    else:
        errs.check(f"{path}.name", name, naming.dns1123_label(name))
    image = c.get("image")
    if not image:
        errs.required(f"{path}.image")
    elif image != image.strip():
        errs.invalid(f"{path}.image", image, "must not have leading or trailing whitespace")
    if "imagePullPolicy" in c and c["imagePullPolicy"] not in PULL_POLICIES:
        errs.unsupported(f"{path}.imagePullPolicy", c["imagePullPolicy"], PULL_POLICIES)
    port_names: set[str] = set()
    for i, port in enumerate(c.get("ports") or ()):
        p = f"{path}.ports[{i}]"
        if not isinstance(port, dict):
            continue
        cp = port.get("containerPort")
        if cp is None:
            errs.required(f"{p}.containerPort")
        elif not 1 <= cp <= 65535:
            errs.invalid(f"{p}.containerPort", cp, "must be between 1 and 65535, inclusive")
        if port.get("hostPort") and not 1 <= port["hostPort"] <= 65535:
            errs.invalid(f"{p}.hostPort", port["hostPort"], "must be between 1 and 65535, inclusive")
        if port.get("protocol", "TCP") not in PROTOCOLS:
            errs.unsupported(f"{p}.protocol", port.get("protocol"), PROTOCOLS)
        if port.get("name"):
            errs.check(f"{p}.name", port["name"], naming.port_name(port["name"]))
            if port["name"] in port_names:
                errs.duplicate(f"{p}.name", port["name"])
            port_names.add(port["name"])
    _env(c.get("env") or [], f"{path}.env", errs)
    for i, src in enumerate(c.get("envFrom") or ()):
        for ref in ("configMapRef", "secretRef"):
            if isinstance(src, dict) and isinstance(src.get(ref), dict) and not src[ref].get("name"):
                errs.required(f"{path}.envFrom[{i}].{ref}.name")
    _resources(c.get("resources"), f"{path}.resources", errs)
    mounts: set[str] = set()
    for i, m in enumerate(c.get("volumeMounts") or ()):
        p = f"{path}.volumeMounts[{i}]"
        if not isinstance(m, dict):
            continue
        if not m.get("name"):
            errs.required(f"{p}.name")
        elif m["name"] not in volumes:
            errs.not_found(f"{p}.name", m["name"])
        mp = m.get("mountPath")
        if not mp:
            errs.required(f"{p}.mountPath")
        elif mp in mounts:
            errs.invalid(f"{p}.mountPath", mp, "must be unique")
        mounts.add(mp or "")
    _probe(c.get("livenessProbe"), f"{path}.livenessProbe", errs, True)
    _probe(c.get("startupProbe"), f"{path}.startupProbe", errs, True)
    _probe(c.get("readinessProbe"), f"{path}.readinessProbe", errs, False)


def _volumes(volumes: list, path: str, errs: FieldErrors) -> set[str]:
    names: set[str] = set()
    for i, v in enumerate(volumes):
        p = f"{path}[{i}]"
        if not isinstance(v, dict):
            continue
        name = v.get("name")
        if not name:
            errs.required(f"{p}.name")
        else:
            errs.check(f"{p}.name", name, naming.dns1123_label(name))
            if name in names:
                errs.duplicate(f"{p}.name", name)
            names.add(name)
        sources = [k for k in v if k != "name"]
        if not sources:
            errs.required(p, "must specify a volume type")
        elif len(sources) > 1:
            errs.forbidden(f"{p}.{sources[1]}", "may not specify more than 1 volume type")
        for ref, key in (("configMap", "name"), ("persistentVolumeClaim", "claimName")):
            if isinstance(v.get(ref), dict) and not v[ref].get(key):
                errs.required(f"{p}.{ref}.{key}")
    return names


def validate_pod_spec(spec: Any, path: str, errs: FieldErrors,
                      restart_policies: tuple[str, ...] = RESTART_POLICIES) -> None:
    if not isinstance(spec, dict):
        errs.required(f"{path}.containers")
        return
    volumes = _volumes(spec.get("volumes") or [], f"{path}.volumes", errs)
    containers = spec.get("containers") or []
    if not containers:
        errs.required(f"{path}.containers")
    seen: set[str] = set()
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or ()):
            if not isinstance(c, dict):
                continue
            _container(c, f"{path}.{group}[{i}]", volumes, errs)
            if c.get("name") in seen:
                errs.duplicate(f"{path}.{group}[{i}].name", c["name"])
            seen.add(c.get("name"))
    policy = spec.get("restartPolicy")
    if policy not in restart_policies:
        if policy in RESTART_POLICIES:
            errs.unsupported(f"{path}.restartPolicy", policy, restart_policies)
        else:
            errs.unsupported(f"{path}.restartPolicy", policy, RESTART_POLICIES)
    if spec.get("dnsPolicy", "ClusterFirst") not in DNS_POLICIES:
        errs.unsupported(f"{path}.dnsPolicy", spec.get("dnsPolicy"), DNS_POLICIES)
    ads = spec.get("activeDeadlineSeconds")
    if ads is not None and ads < 1:
        errs.invalid(f"{path}.activeDeadlineSeconds", ads, "must be between 1 and 2147483647, inclusive")
    errs.non_negative(f"{path}.terminationGracePeriodSeconds", spec.get("terminationGracePeriodSeconds"))
    validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector", errs)
    sa = spec.get("serviceAccountName")
    if sa:
        errs.check(f"{path}.serviceAccountName", sa, naming.dns1123_subdomain(sa))
    for i, t in enumerate(spec.get("tolerations") or ()):
        if not isinstance(t, dict):
            continue
        p = f"{path}.tolerations[{i}]"
        op = t.get("operator", "Equal")
        if op not in ("Equal", "Exists"):
            errs.unsupported(f"{p}.operator", op, ("Equal", "Exists"))
        elif op == "Exists" and t.get("value"):
            errs.invalid(f"{p}.operator", op, "value must be empty when `operator` is 'Exists'")
        if t.get("effect") and t["effect"] not in ("NoExecute", "NoSchedule", "PreferNoSchedule"):
            errs.unsupported(f"{p}.effect", t["effect"], ("NoExecute", "NoSchedule", "PreferNoSchedule"))


def validate_template(template: Any, path: str, errs: FieldErrors,
                      restart_policies: tuple[str, ...] = ("Always",)) -> None:
    if not isinstance(template, dict):
        errs.required(path)
        return
    meta = template.get("metadata") or {}
    validate_labels(meta.get("labels"), f"{path}.metadata.labels", errs)
    validate_pod_spec(template.get("spec"), f"{path}.spec", errs, restart_policies)


def validate_selected_template(spec: dict, errs: FieldErrors, kind: str,
                               restart_policies: tuple[str, ...] = ("Always",)) -> None:
    """Selector required, non-empty, and matching the template labels (Deployments, ReplicaSets, ...)."""
    sel = spec.get("selector")
    if sel is None:
        errs.required("spec.selector")
    else:
        before = len(errs.items)
        validate_selector(sel, "spec.selector", errs)
        if not (sel.get("matchLabels") or sel.get("matchExpressions")):
            errs.invalid("spec.selector", sel, f"empty selector is invalid for {kind}", go_label_selector(sel))
        elif len(errs.items) == before:
            labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
            if not selector_from_spec(sel).matches(labels):
                errs.invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`")
    validate_template(spec.get("template"), "spec.template", errs, restart_policies)


def _int_or_percent(value: Any, path: str, errs: FieldErrors) -> int | None:
    """The value as an int (percent as its number); None when invalid."""
    if isinstance(value, int):
        if value < 0:
            errs.invalid(path, value, "must be greater than or equal to 0")
        return value
    if isinstance(value, str):
        if not _PERCENT.match(value):
            errs.invalid(path, value, "a valid percent string must be a numeric string followed by an ending '%' "
                                      "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")
            return None
        return int(value[:-1])
    return None


def validate_deployment_spec(spec: dict, errs: FieldErrors) -> None:
    errs.non_negative("spec.replicas", spec.get("replicas"))
    errs.non_negative("spec.revisionHistoryLimit", spec.get("revisionHistoryLimit"))
    errs.non_negative("spec.minReadySeconds", spec.get("minReadySeconds"))
    pds = spec.get("progressDeadlineSeconds")
    if isinstance(pds, int) and pds <= spec.get("minReadySeconds", 0):
        errs.invalid("spec.progressDeadlineSeconds", pds, "must be greater than minReadySeconds")
    strategy = spec.get("strategy") or {}
    stype = strategy.get("type")
    if stype not in ("Recreate", "RollingUpdate"):
        errs.unsupported("spec.strategy.type", stype, ("Recreate", "RollingUpdate"))
    elif stype == "Recreate" and strategy.get("rollingUpdate") is not None:
        errs.forbidden("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'")
    elif stype == "RollingUpdate":
        ru = strategy.get("rollingUpdate") or {}
        surge = _int_or_percent(ru.get("maxSurge"), "spec.strategy.rollingUpdate.maxSurge", errs)
        unavailable = _int_or_percent(ru.get("maxUnavailable"), "spec.strategy.rollingUpdate.maxUnavailable", errs)
        if isinstance(ru.get("maxUnavailable"), str) and unavailable is not None and unavailable > 100:
            errs.invalid("spec.strategy.rollingUpdate.maxUnavailable", ru["maxUnavailable"],
                         "must not be greater than 100%")
        if surge == 0 and unavailable == 0:
            errs.invalid("spec.strategy.rollingUpdate.maxUnavailable", ru.get("maxUnavailable"),
                         "may not be 0 when `maxSurge` is 0")
    validate_selected_template(spec, errs, "deployment")


def validate_job_spec(spec: Any, path: str, errs: FieldErrors, check_selector: bool) -> None:
    if not isinstance(spec, dict):
        errs.required(f"{path}.template")
        return
    for field in ("parallelism", "completions", "backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"):
        errs.non_negative(f"{path}.{field}", spec.get(field))
    mode = spec.get("completionMode", "NonIndexed")
    if mode not in ("Indexed", "NonIndexed"):
        errs.unsupported(f"{path}.completionMode", mode, ("NonIndexed", "Indexed"))
    elif mode == "Indexed" and spec.get("completions") is None:
        errs.required(f"{path}.completions", "when completion mode is Indexed")
    sel = spec.get("selector")
    if check_selector and sel is not None:
        before = len(errs.items)
        validate_selector(sel, f"{path}.selector", errs)
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if len(errs.items) == before and not selector_from_spec(sel).matches(labels):
            errs.invalid(f"{path}.template.metadata.labels", labels, "`selector` does not match template `labels`")
    validate_template(spec.get("template"), f"{path}.template", errs, ("OnFailure", "Never"))


def immutable(errs: FieldErrors, path: str, new: Any, old: Any, rendered: str | None = None) -> None:
    if new != old:
        errs.invalid(path, new, "field is immutable", rendered)


_POD_MUTABLE_MESSAGE = (
    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")


def _diff(old: Any, new: Any, path: str, out: list[str]) -> None:
    if len(out) >= 12 or old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new)):
            _diff(old.get(k), new.get(k), f"{path}.{k}", out)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new)):
            _diff(a, b, f"{path}[{i}]", out)
    else:
        out.append(f"  - {path}: {go_value(old)}\n  + {path}: {go_value(new)}")


def validate_pod_update(new_spec: dict, old_spec: dict, errs: FieldErrors) -> None:
    """Only images, deadlines, added tolerations and binding (empty nodeName) may change on a pod."""
    probe = dict(new_spec)
    for group in ("containers", "initContainers"):
        new_cs, old_cs = new_spec.get(group) or [], old_spec.get(group) or []
        if new_cs and len(new_cs) == len(old_cs):
            probe[group] = [dict(n, image=o.get("image")) if isinstance(n, dict) and isinstance(o, dict) and
                            "image" in o else n for n, o in zip(new_cs, old_cs)]
    for field in ("activeDeadlineSeconds", "terminationGracePeriodSeconds"):
        probe.pop(field, None)
        if field in old_spec:
            probe[field] = old_spec[field]
    old_tol = old_spec.get("tolerations") or []
    if all(t in (new_spec.get("tolerations") or []) for t in old_tol):
        probe["tolerations"] = old_tol
        if not old_tol:
            probe.pop("tolerations", None)
    if not old_spec.get("nodeName"):
        probe.pop("nodeName", None)
        if "nodeName" in old_spec:
            probe["nodeName"] = old_spec["nodeName"]
    if probe != old_spec:
        lines: list[str] = []
        _diff(old_spec, probe, "spec", lines)
        errs.forbidden("spec", _POD_MUTABLE_MESSAGE + ("\n" + "\n".join(lines) if lines else ""))
