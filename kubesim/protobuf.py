"""Decode the Kubernetes protobuf request bodies that kubectl 1.32's typed commands send.

``kubectl create namespace|configmap|secret|deployment|job|cronjob|service|serviceaccount|role|
rolebinding|clusterrole|clusterrolebinding|quota|ingress|token``, ``kubectl autoscale`` and
``kubectl auth can-i`` POST
``application/vnd.kubernetes.protobuf`` with no JSON fallback. This module turns those bodies
(the ``k8s\\0`` envelope around a ``runtime.Unknown``) into the JSON dict the rest of kubesim
handles, using the field numbers of the upstream ``generated.proto`` files.

The schemas cover what those commands send. A field outside them is refused with 415 (never
silently dropped) unless it carries only zero values, which gogo-protobuf writes for every
non-pointer field. Zero values of non-pointer fields are omitted, as Go's JSON ``omitempty``
would; pointer fields (marked ``p``) keep them, so ``--replicas=0`` stays 0.
"""

from __future__ import annotations

import base64
from datetime import datetime, timezone
from typing import Any

from .errors import ApiError

MAGIC = b"k8s\x00"

# message -> {field number: (json name, type, flags)}; types: s string, b bytes, i integer, ? bool,
# q Quantity, t Time, is IntOrString, m:<Message>, map:<s|b|q>, skip (ignored: status on create).
# flags: r repeated, p pointer (zero values are meaningful), i inline (merged into the parent).
F = tuple
SCHEMAS: dict[str, dict[int, F]] = {
    "ObjectMeta": {1: ("name", "s"), 2: ("generateName", "s"), 3: ("namespace", "s"), 4: ("selfLink", "s"),
                   5: ("uid", "s"), 6: ("resourceVersion", "s"), 7: ("generation", "i"),
                   8: ("creationTimestamp", "t"), 9: ("deletionTimestamp", "t"),
                   10: ("deletionGracePeriodSeconds", "i", "p"), 11: ("labels", "map:s"),
                   12: ("annotations", "map:s"), 14: ("finalizers", "s", "r"), 17: ("managedFields", "skip")},
    "LabelSelector": {1: ("matchLabels", "map:s"), 2: ("matchExpressions", "m:LabelSelectorRequirement", "r")},
    "LabelSelectorRequirement": {1: ("key", "s"), 2: ("operator", "s"), 3: ("values", "s", "r")},
    "PodTemplateSpec": {1: ("metadata", "m:ObjectMeta"), 2: ("spec", "m:PodSpec")},
    "PodSpec": {2: ("containers", "m:Container", "r"), 3: ("restartPolicy", "s"),
                4: ("terminationGracePeriodSeconds", "i", "p"), 5: ("activeDeadlineSeconds", "i", "p"),
                6: ("dnsPolicy", "s"), 7: ("nodeSelector", "map:s"), 8: ("serviceAccountName", "s"),
                9: ("serviceAccount", "s"), 10: ("nodeName", "s"), 11: ("hostNetwork", "?"), 12: ("hostPID", "?"),
                13: ("hostIPC", "?"), 16: ("hostname", "s"), 17: ("subdomain", "s"), 19: ("schedulerName", "s"),
                20: ("initContainers", "m:Container", "r"), 24: ("priorityClassName", "s")},
    "Container": {1: ("name", "s"), 2: ("image", "s"), 3: ("command", "s", "r"), 4: ("args", "s", "r"),
                  5: ("workingDir", "s"), 6: ("ports", "m:ContainerPort", "r"), 7: ("env", "m:EnvVar", "r"),
                  8: ("resources", "m:ResourceRequirements"), 13: ("terminationMessagePath", "s"),
                  14: ("imagePullPolicy", "s"), 16: ("stdin", "?"), 17: ("stdinOnce", "?"), 18: ("tty", "?"),
                  20: ("terminationMessagePolicy", "s")},
    "ContainerPort": {1: ("name", "s"), 2: ("hostPort", "i"), 3: ("containerPort", "i"), 4: ("protocol", "s"),
                      5: ("hostIP", "s")},
    "EnvVar": {1: ("name", "s"), 2: ("value", "s")},
    "ResourceRequirements": {1: ("limits", "map:q"), 2: ("requests", "map:q")},
    "Namespace": {1: ("metadata", "m:ObjectMeta"), 2: ("spec", "m:NamespaceSpec"), 3: ("status", "skip")},
    "NamespaceSpec": {1: ("finalizers", "s", "r")},
    "ConfigMap": {1: ("metadata", "m:ObjectMeta"), 2: ("data", "map:s"), 3: ("binaryData", "map:b"),
                  4: ("immutable", "?", "p")},
    "Secret": {1: ("metadata", "m:ObjectMeta"), 2: ("data", "map:b"), 3: ("type", "s"), 4: ("stringData", "map:s"),
               5: ("immutable", "?", "p")},
    "ServiceAccount": {1: ("metadata", "m:ObjectMeta"), 4: ("automountServiceAccountToken", "?", "p")},
    "ResourceQuota": {1: ("metadata", "m:ObjectMeta"), 2: ("spec", "m:ResourceQuotaSpec"), 3: ("status", "skip")},
    "ResourceQuotaSpec": {1: ("hard", "map:q"), 2: ("scopes", "s", "r")},
    "Service": {1: ("metadata", "m:ObjectMeta"), 2: ("spec", "m:ServiceSpec"), 3: ("status", "skip")},
    "ServiceSpec": {1: ("ports", "m:ServicePort", "r"), 2: ("selector", "map:s"), 3: ("clusterIP", "s"),
                    4: ("type", "s"), 5: ("externalIPs", "s", "r"), 7: ("sessionAffinity", "s"),
                    8: ("loadBalancerIP", "s"), 10: ("externalName", "s"), 11: ("externalTrafficPolicy", "s"),
                    13: ("publishNotReadyAddresses", "?")},
    "ServicePort": {1: ("name", "s"), 2: ("protocol", "s"), 3: ("port", "i"), 4: ("targetPort", "is"),
                    5: ("nodePort", "i"), 6: ("appProtocol", "s", "p")},
    "Deployment": {1: ("metadata", "m:ObjectMeta"), 2: ("spec", "m:DeploymentSpec"), 3: ("status", "skip")},
    "DeploymentSpec": {1: ("replicas", "i", "p"), 2: ("selector", "m:LabelSelector"),
                       3: ("template", "m:PodTemplateSpec"), 4: ("strategy", "m:DeploymentStrategy"),
                       5: ("minReadySeconds", "i"), 6: ("revisionHistoryLimit", "i", "p"), 7: ("paused", "?"),
                       9: ("progressDeadlineSeconds", "i", "p")},
    "DeploymentStrategy": {1: ("type", "s")},
    "Job": {1: ("metadata", "m:ObjectMeta"), 2: ("spec", "m:JobSpec"), 3: ("status", "skip")},
    "JobSpec": {1: ("parallelism", "i", "p"), 2: ("completions", "i", "p"), 3: ("activeDeadlineSeconds", "i", "p"),
                4: ("selector", "m:LabelSelector"), 5: ("manualSelector", "?", "p"),
                6: ("template", "m:PodTemplateSpec"), 7: ("backoffLimit", "i", "p"),
                8: ("ttlSecondsAfterFinished", "i", "p")},
    "CronJob": {1: ("metadata", "m:ObjectMeta"), 2: ("spec", "m:CronJobSpec"), 3: ("status", "skip")},
    "CronJobSpec": {1: ("schedule", "s"), 2: ("startingDeadlineSeconds", "i", "p"), 3: ("concurrencyPolicy", "s"),
                    4: ("suspend", "?", "p"), 5: ("jobTemplate", "m:JobTemplateSpec"),
                    6: ("successfulJobsHistoryLimit", "i", "p"), 7: ("failedJobsHistoryLimit", "i", "p")},
    "JobTemplateSpec": {1: ("metadata", "m:ObjectMeta"), 2: ("spec", "m:JobSpec")},
    "Role": {1: ("metadata", "m:ObjectMeta"), 2: ("rules", "m:PolicyRule", "r")},
    "ClusterRole": {1: ("metadata", "m:ObjectMeta"), 2: ("rules", "m:PolicyRule", "r"),
                    3: ("aggregationRule", "m:AggregationRule")},
    "AggregationRule": {1: ("clusterRoleSelectors", "m:LabelSelector", "r")},
    "PolicyRule": {1: ("verbs", "s", "r"), 2: ("apiGroups", "s", "r"), 3: ("resources", "s", "r"),
                   4: ("resourceNames", "s", "r"), 5: ("nonResourceURLs", "s", "r")},
    "RoleBinding": {1: ("metadata", "m:ObjectMeta"), 2: ("subjects", "m:Subject", "r"), 3: ("roleRef", "m:RoleRef")},
    "Subject": {1: ("kind", "s"), 2: ("apiGroup", "s"), 3: ("name", "s"), 4: ("namespace", "s")},
    "RoleRef": {1: ("apiGroup", "s"), 2: ("kind", "s"), 3: ("name", "s")},
    "Ingress": {1: ("metadata", "m:ObjectMeta"), 2: ("spec", "m:IngressSpec"), 3: ("status", "skip")},
    "IngressSpec": {1: ("defaultBackend", "m:IngressBackend"), 2: ("tls", "m:IngressTLS", "r"),
                    3: ("rules", "m:IngressRule", "r"), 4: ("ingressClassName", "s", "p")},
    "IngressBackend": {4: ("service", "m:IngressServiceBackend")},
    "IngressServiceBackend": {1: ("name", "s"), 2: ("port", "m:ServiceBackendPort")},
    "ServiceBackendPort": {1: ("name", "s"), 2: ("number", "i")},
    "IngressTLS": {1: ("hosts", "s", "r"), 2: ("secretName", "s")},
    "IngressRule": {1: ("host", "s"), 2: ("", "m:IngressRuleValue", "i")},
    "IngressRuleValue": {1: ("http", "m:HTTPIngressRuleValue")},
    "HTTPIngressRuleValue": {1: ("paths", "m:HTTPIngressPath", "r")},
    "HTTPIngressPath": {1: ("path", "s"), 2: ("backend", "m:IngressBackend"), 3: ("pathType", "s", "p")},
    "TokenRequest": {1: ("metadata", "m:ObjectMeta"), 2: ("spec", "m:TokenRequestSpec"), 3: ("status", "skip")},
    "TokenRequestSpec": {1: ("audiences", "s", "r"), 3: ("boundObjectRef", "m:BoundObjectReference"),
                         4: ("expirationSeconds", "i", "p")},
    "BoundObjectReference": {1: ("kind", "s"), 2: ("apiVersion", "s"), 3: ("name", "s"), 4: ("uid", "s")},
    "SelfSubjectAccessReview": {1: ("metadata", "m:ObjectMeta"), 2: ("spec", "m:SelfSubjectAccessReviewSpec"),
                                3: ("status", "skip")},
    "SelfSubjectAccessReviewSpec": {1: ("resourceAttributes", "m:ResourceAttributes"),
                                    2: ("nonResourceAttributes", "m:NonResourceAttributes")},
    "ResourceAttributes": {1: ("namespace", "s"), 2: ("verb", "s"), 3: ("group", "s"), 4: ("version", "s"),
                           5: ("resource", "s"), 6: ("subresource", "s"), 7: ("name", "s")},
    "NonResourceAttributes": {1: ("path", "s"), 2: ("verb", "s")},
    "SelfSubjectRulesReview": {1: ("metadata", "m:ObjectMeta"), 2: ("spec", "m:SelfSubjectRulesReviewSpec"),
                               3: ("status", "skip")},
    "SelfSubjectRulesReviewSpec": {1: ("namespace", "s")},
    "HorizontalPodAutoscaler": {1: ("metadata", "m:ObjectMeta"), 2: ("spec", "m:HorizontalPodAutoscalerSpec"),
                                3: ("status", "skip")},
    "HorizontalPodAutoscalerSpec": {1: ("scaleTargetRef", "m:CrossVersionObjectReference"),
                                    2: ("minReplicas", "i", "p"), 3: ("maxReplicas", "i"),
                                    4: ("targetCPUUtilizationPercentage", "i", "p")},
    "CrossVersionObjectReference": {1: ("kind", "s"), 2: ("name", "s"), 3: ("apiVersion", "s")},
}
# (apiVersion, kind) -> top-level message; the message name is the kind except for bindings.
KINDS: dict[tuple[str, str], str] = {
    (av, kind): msg for av, kind, msg in (
        ("v1", "Namespace", "Namespace"), ("v1", "ConfigMap", "ConfigMap"), ("v1", "Secret", "Secret"),
        ("v1", "ServiceAccount", "ServiceAccount"), ("v1", "ResourceQuota", "ResourceQuota"),
        ("v1", "Service", "Service"), ("apps/v1", "Deployment", "Deployment"), ("batch/v1", "Job", "Job"),
        ("batch/v1", "CronJob", "CronJob"), ("rbac.authorization.k8s.io/v1", "Role", "Role"),
        ("rbac.authorization.k8s.io/v1", "ClusterRole", "ClusterRole"),
        ("rbac.authorization.k8s.io/v1", "RoleBinding", "RoleBinding"),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "RoleBinding"),
        ("networking.k8s.io/v1", "Ingress", "Ingress"), ("authentication.k8s.io/v1", "TokenRequest", "TokenRequest"),
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview", "SelfSubjectAccessReview"),
        ("authorization.k8s.io/v1", "SelfSubjectRulesReview", "SelfSubjectRulesReview"),
        ("autoscaling/v1", "HorizontalPodAutoscaler", "HorizontalPodAutoscaler"))}


class _Malformed(Exception):
    pass


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise _Malformed("truncated varint")
        byte = buf[i]
        i += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, i


def _fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) triples; length-delimited values stay bytes."""
    out, i = [], 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 2:
            size, i = _varint(buf, i)
            if i + size > len(buf):
                raise _Malformed("truncated field")
            value, i = buf[i:i + size], i + size
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            value, i = buf[i:i + width], i + width
        else:
            raise _Malformed(f"unsupported wire type {wire}")
        if number == 0:
            raise _Malformed("field number 0")
        out.append((number, wire, value))
    return out


def _all_zero(wire: int, value: Any, depth: int = 0) -> bool:
    """True when a field carries nothing but zero values (how gogo writes unset non-pointer fields)."""
    if wire == 0:
        return value == 0
    if wire != 2 or depth > 32:
        return False
    if not value:
        return True
    try:
        return all(_all_zero(w, v, depth + 1) for _, w, v in _fields(value))
    except _Malformed:
        return False


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _scalar(kind: str, wire: int, value: Any, where: str) -> Any:
    if kind in ("s", "b", "q", "t", "is") or kind.startswith(("m:", "map:")):
        if wire != 2:
            raise _Malformed(f"{where}: expected a length-delimited field")
    elif wire != 0:
        raise _Malformed(f"{where}: expected a varint field")
    if kind == "s":
        return value.decode("utf-8")
    if kind == "b":
        return base64.b64encode(value).decode("ascii")
    if kind == "i":
        return _signed(value)
    if kind == "?":
        return bool(value)
    if kind == "q":
        return next((v.decode("utf-8") for n, w, v in _fields(value) if n == 1 and w == 2), "")
    if kind == "t":
        parts = {n: v for n, w, v in _fields(value) if w == 0}
        if not parts.get(1):
            return None
        return datetime.fromtimestamp(_signed(parts[1]), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if kind == "is":  # IntOrString: type (0 int, 1 string), intVal, strVal
        parts = {n: v for n, _, v in _fields(value)}
        if parts.get(1) == 1:
            return bytes(parts.get(3, b"")).decode("utf-8")
        return _signed(parts.get(2, 0))
    if kind.startswith("map:"):  # map entries are messages {1: key, 2: value}
        entry = {n: v for n, _, v in _fields(value)}
        key = bytes(entry.get(1, b"")).decode("utf-8")
        return key, _scalar(kind[4:], 2, entry.get(2, b""), f"{where}[{key}]")
    return decode_message(kind[2:], value, where)


def _is_zero(value: Any) -> bool:
    return value in ("", 0, False, None) or value == {} or value == []


def decode_message(name: str, buf: bytes, where: str = "") -> dict[str, Any]:
    schema = SCHEMAS[name]
    out: dict[str, Any] = {}
    for number, wire, value in _fields(buf):
        spec = schema.get(number)
        path = f"{where}.{spec[0]}" if spec and spec[0] else f"{where}.<{number}>"
        if spec is None:
            if _all_zero(wire, value):
                continue
            raise ApiError(415, f"kubesim cannot decode field {number} of {name} from protobuf; send this request "
                                f"as application/json instead", "UnsupportedMediaType")
        json_name, kind = spec[0], spec[1]
        flags = spec[2] if len(spec) > 2 else ""
        if kind == "skip":
            continue
        decoded = _scalar(kind, wire, value, path)
        if "i" in flags:
            out.update(decoded)
        elif kind.startswith("map:"):
            out.setdefault(json_name, {})[decoded[0]] = decoded[1]
        elif "r" in flags:
            out.setdefault(json_name, []).append(decoded)
        elif "p" in flags or not _is_zero(decoded):
            out[json_name] = decoded
    return out


def decode(body: bytes) -> dict[str, Any]:
    """A ``k8s\\0``-prefixed protobuf request body as the equivalent JSON object; ApiError 400/415 otherwise."""
    if not body.startswith(MAGIC):
        raise ApiError(400, "the protobuf request body does not start with the Kubernetes protobuf prefix",
                       "BadRequest")
    try:
        envelope = {n: v for n, _, v in _fields(body[len(MAGIC):])}
        type_meta = {n: v for n, _, v in _fields(envelope.get(1, b""))}
        api_version = type_meta.get(1, b"").decode("utf-8")
        kind = type_meta.get(2, b"").decode("utf-8")
        if envelope.get(3) or (envelope.get(4) and envelope[4] != b"application/vnd.kubernetes.protobuf"):
            raise ApiError(415, "kubesim decodes only unencoded protobuf bodies; send application/json",
                           "UnsupportedMediaType")
        message = KINDS.get((api_version, kind))
        if message is None:
            supported = ", ".join(sorted({k for _, k in KINDS}))
            raise ApiError(415, f"kubesim cannot decode a protobuf {kind or 'object'} ({api_version or '?'}); it "
                                f"decodes protobuf only for {supported}. Send application/json instead.",
                           "UnsupportedMediaType")
        obj = decode_message(message, envelope.get(2, b""), kind)
    except _Malformed as e:
        raise ApiError(400, f"the protobuf request body is malformed: {e}", "BadRequest") from None
    except (UnicodeDecodeError, ValueError, OverflowError, TypeError, AttributeError) as e:
        raise ApiError(400, f"the protobuf request body is malformed: {e}", "BadRequest") from None
    return {"apiVersion": api_version, "kind": kind, **obj}
