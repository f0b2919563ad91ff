"""Decode-level type checks: what the real API server rejects with 400 before validation runs.

The real server decodes JSON into Go structs, so a label value that YAML turned into ``true``, a
string ``replicas`` or an unparseable quantity fail with Go's ``json: cannot unmarshal ...`` message.
This module describes the commonly written fields of the built-in kinds and reproduces that wording.
Unknown fields are ignored, like the server's non-strict decoding.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from . import quantity
from .errors import ApiError
from .resources import ResourceType


class Scalar:
    def __init__(self, go: str):
        self.go = go


class Struct:
    def __init__(self, name: str, fields: dict[str, Any]):
        self.name = name
        self.fields = fields

    @property
    def go(self) -> str:
        return "v1." + self.name


class ListOf:
    def __init__(self, elem: Any):
        self.elem = elem

    @property
    def go(self) -> str:
        return "[]" + self.elem.go


class MapOf:
    def __init__(self, elem: Any, go: str | None = None):
        self.elem = elem
        self._go = go

    @property
    def go(self) -> str:
        return self._go or "map[string]" + self.elem.go


S, I32, I64, B, F64 = Scalar("string"), Scalar("int32"), Scalar("int64"), Scalar("bool"), Scalar("float64")
Q, IOS, BYTES, ANY_OBJ = Scalar("resource.Quantity"), Scalar("intstr.IntOrString"), Scalar("[]uint8"), Scalar("object")
MSS = MapOf(S)
RL = MapOf(Q, "v1.ResourceList")
LS = ListOf(S)

OWNER_REF = Struct("OwnerReference", {"apiVersion": S, "kind": S, "name": S, "uid": S, "controller": B,
                                      "blockOwnerDeletion": B})
META = Struct("ObjectMeta", {
    "name": S, "generateName": S, "namespace": S, "uid": S, "resourceVersion": S, "generation": I64,
    "creationTimestamp": S, "deletionTimestamp": S, "deletionGracePeriodSeconds": I64, "labels": MSS,
    "annotations": MSS, "ownerReferences": ListOf(OWNER_REF), "finalizers": LS,
})
KEY_SELECTOR = {"name": S, "key": S, "optional": B}
ENV = Struct("EnvVar", {"name": S, "value": S, "valueFrom": Struct("EnvVarSource", {
    "configMapKeyRef": Struct("ConfigMapKeySelector", KEY_SELECTOR),
    "secretKeyRef": Struct("SecretKeySelector", KEY_SELECTOR),
    "fieldRef": Struct("ObjectFieldSelector", {"apiVersion": S, "fieldPath": S}),
    "resourceFieldRef": Struct("ResourceFieldSelector", {"containerName": S, "resource": S, "divisor": Q}),
})})
ENV_FROM = Struct("EnvFromSource", {"prefix": S,
                                    "configMapRef": Struct("ConfigMapEnvSource", {"name": S, "optional": B}),
                                    "secretRef": Struct("SecretEnvSource", {"name": S, "optional": B})})
PORT_ACTION = {"port": IOS, "host": S}
PROBE = Struct("Probe", {
    "initialDelaySeconds": I32, "timeoutSeconds": I32, "periodSeconds": I32, "successThreshold": I32,
    "failureThreshold": I32, "terminationGracePeriodSeconds": I64,
    "exec": Struct("ExecAction", {"command": LS}),
    "httpGet": Struct("HTTPGetAction", dict(PORT_ACTION, path=S, scheme=S, httpHeaders=ListOf(
        Struct("HTTPHeader", {"name": S, "value": S})))),
    "tcpSocket": Struct("TCPSocketAction", PORT_ACTION),
    "grpc": Struct("GRPCAction", {"port": I32, "service": S}),
})
CONTAINER = Struct("Container", {
    "name": S, "image": S, "command": LS, "args": LS, "workingDir": S,
    "ports": ListOf(Struct("ContainerPort", {"name": S, "containerPort": I32, "hostPort": I32, "protocol": S,
                                             "hostIP": S})),
    "env": ListOf(ENV), "envFrom": ListOf(ENV_FROM),
    "resources": Struct("ResourceRequirements", {"limits": RL, "requests": RL}),
    "volumeMounts": ListOf(Struct("VolumeMount", {"name": S, "readOnly": B, "mountPath": S, "subPath": S})),
    "livenessProbe": PROBE, "readinessProbe": PROBE, "startupProbe": PROBE,
    "imagePullPolicy": S, "terminationMessagePath": S, "terminationMessagePolicy": S, "stdin": B, "tty": B,
    "securityContext": ANY_OBJ,
})
KEY_TO_PATH = ListOf(Struct("KeyToPath", {"key": S, "path": S, "mode": I32}))
VOLUME = Struct("Volume", {
    "name": S,
    "configMap": Struct("ConfigMapVolumeSource", {"name": S, "defaultMode": I32, "optional": B,
                                                  "items": KEY_TO_PATH}),
    "secret": Struct("SecretVolumeSource", {"secretName": S, "defaultMode": I32, "optional": B,
                                            "items": KEY_TO_PATH}),
    "emptyDir": Struct("EmptyDirVolumeSource", {"medium": S, "sizeLimit": Q}),
    "persistentVolumeClaim": Struct("PersistentVolumeClaimVolumeSource", {"claimName": S, "readOnly": B}),
    "hostPath": Struct("HostPathVolumeSource", {"path": S, "type": S}),
})
POD_SPEC = Struct("PodSpec", {
    "volumes": ListOf(VOLUME), "initContainers": ListOf(CONTAINER), "containers": ListOf(CONTAINER),
    "restartPolicy": S, "terminationGracePeriodSeconds": I64, "activeDeadlineSeconds": I64, "dnsPolicy": S,
    "nodeSelector": MSS, "serviceAccountName": S, "serviceAccount": S, "automountServiceAccountToken": B,
    "nodeName": S, "hostNetwork": B, "hostPID": B, "hostIPC": B, "shareProcessNamespace": B,
    "securityContext": Struct("PodSecurityContext", {"runAsUser": I64, "runAsGroup": I64, "runAsNonRoot": B,
                                                     "fsGroup": I64}),
    "imagePullSecrets": ListOf(Struct("LocalObjectReference", {"name": S})), "hostname": S, "subdomain": S,
    "affinity": ANY_OBJ, "schedulerName": S, "priorityClassName": S, "priority": I32, "enableServiceLinks": B,
    "preemptionPolicy": S,
    "tolerations": ListOf(Struct("Toleration", {"key": S, "operator": S, "value": S, "effect": S,
                                                "tolerationSeconds": I64})),
})
TEMPLATE = Struct("PodTemplateSpec", {"metadata": META, "spec": POD_SPEC})
SELECTOR = Struct("LabelSelector", {"matchLabels": MSS, "matchExpressions": ListOf(
    Struct("LabelSelectorRequirement", {"key": S, "operator": S, "values": LS}))})
JOB_SPEC = Struct("JobSpec", {
    "parallelism": I32, "completions": I32, "activeDeadlineSeconds": I64, "backoffLimit": I32,
    "selector": SELECTOR, "manualSelector": B, "template": TEMPLATE, "ttlSecondsAfterFinished": I32,
    "completionMode": S, "suspend": B,
})
_WORKLOAD = {"replicas": I32, "selector": SELECTOR, "template": TEMPLATE, "minReadySeconds": I32,
             "revisionHistoryLimit": I32}

NP_PEER = ListOf(Struct("NetworkPolicyPeer", {"podSelector": SELECTOR, "namespaceSelector": SELECTOR,
                                               "ipBlock": Struct("IPBlock", {"cidr": S, "except": LS})}))
NP_PORTS = ListOf(Struct("NetworkPolicyPort", {"protocol": S, "port": IOS, "endPort": I32}))
OBJECT_REF = Struct("ObjectReference", {"kind": S, "namespace": S, "name": S, "uid": S, "apiVersion": S,
                                        "resourceVersion": S, "fieldPath": S})
ENDPOINT_ADDRESSES = ListOf(Struct("EndpointAddress", {"ip": S, "hostname": S, "nodeName": S,
                                                       "targetRef": OBJECT_REF}))
BINDING = {"subjects": ListOf(Struct("Subject", {"kind": S, "apiGroup": S, "name": S, "namespace": S})),
           "roleRef": Struct("RoleRef", {"apiGroup": S, "kind": S, "name": S})}
RULES = {"rules": ListOf(Struct("PolicyRule", {"verbs": LS, "apiGroups": LS, "resources": LS,
                                               "resourceNames": LS, "nonResourceURLs": LS}))}
INGRESS_BACKEND = Struct("IngressBackend", {"service": Struct("IngressServiceBackend", {
    "name": S, "port": Struct("ServiceBackendPort", {"name": S, "number": I32})})})

SPECS: dict[str, dict[str, Any]] = {
    "NetworkPolicy": {"spec": Struct("NetworkPolicySpec", {
        "podSelector": SELECTOR, "policyTypes": LS,
        "ingress": ListOf(Struct("NetworkPolicyIngressRule", {"from": NP_PEER, "ports": NP_PORTS})),
        "egress": ListOf(Struct("NetworkPolicyEgressRule", {"to": NP_PEER, "ports": NP_PORTS}))})},
    "RoleBinding": BINDING,
    "ClusterRoleBinding": BINDING,
    "Role": RULES,
    "ClusterRole": RULES,
    "Ingress": {"spec": Struct("IngressSpec", {
        "ingressClassName": S, "defaultBackend": INGRESS_BACKEND,
        "tls": ListOf(Struct("IngressTLS", {"hosts": LS, "secretName": S})),
        "rules": ListOf(Struct("IngressRule", {"host": S, "http": Struct("HTTPIngressRuleValue", {
            "paths": ListOf(Struct("HTTPIngressPath", {"path": S, "pathType": S, "backend": INGRESS_BACKEND}))})}))})},
    "Endpoints": {"subsets": ListOf(Struct("EndpointSubset", {
        "addresses": ENDPOINT_ADDRESSES, "notReadyAddresses": ENDPOINT_ADDRESSES,
        "ports": ListOf(Struct("EndpointPort", {"name": S, "port": I32, "protocol": S}))}))},
    "Event": {"involvedObject": OBJECT_REF, "reason": S, "message": S, "type": S, "count": I32,
              "source": Struct("EventSource", {"component": S, "host": S}), "firstTimestamp": S,
              "lastTimestamp": S},
    "Node": {"spec": Struct("NodeSpec", {"podCIDR": S, "unschedulable": B, "taints": ListOf(
        Struct("Taint", {"key": S, "value": S, "effect": S}))})},
    "Pod": {"spec": POD_SPEC},
    "Deployment": {"spec": Struct("DeploymentSpec", dict(
        _WORKLOAD, paused=B, progressDeadlineSeconds=I32,
        strategy=Struct("DeploymentStrategy", {"type": S, "rollingUpdate": Struct(
            "RollingUpdateDeployment", {"maxUnavailable": IOS, "maxSurge": IOS})})))},
    "ReplicaSet": {"spec": Struct("ReplicaSetSpec", _WORKLOAD)},
    "ReplicationController": {"spec": Struct("ReplicationControllerSpec", dict(_WORKLOAD, selector=MSS))},
    "StatefulSet": {"spec": Struct("StatefulSetSpec", dict(
        _WORKLOAD, serviceName=S, podManagementPolicy=S,
        updateStrategy=Struct("StatefulSetUpdateStrategy", {"type": S, "rollingUpdate": Struct(
            "RollingUpdateStatefulSetStrategy", {"partition": I32, "maxUnavailable": IOS})}),
        volumeClaimTemplates=ListOf(Struct("PersistentVolumeClaim", {"apiVersion": S, "kind": S, "metadata": META,
                                                                     "spec": ANY_OBJ, "status": ANY_OBJ})),
        persistentVolumeClaimRetentionPolicy=Struct("StatefulSetPersistentVolumeClaimRetentionPolicy",
                                                    {"whenDeleted": S, "whenScaled": S}),
        ordinals=Struct("StatefulSetOrdinals", {"start": I32})))},
    "DaemonSet": {"spec": Struct("DaemonSetSpec", dict(
        _WORKLOAD, updateStrategy=Struct("DaemonSetUpdateStrategy", {"type": S, "rollingUpdate": Struct(
            "RollingUpdateDaemonSet", {"maxUnavailable": IOS, "maxSurge": IOS})})))},
    "Job": {"spec": JOB_SPEC},
    "CronJob": {"spec": Struct("CronJobSpec", {
        "schedule": S, "timeZone": S, "startingDeadlineSeconds": I64, "concurrencyPolicy": S, "suspend": B,
        "jobTemplate": Struct("JobTemplateSpec", {"metadata": META, "spec": JOB_SPEC}),
        "successfulJobsHistoryLimit": I32, "failedJobsHistoryLimit": I32})},
    "Service": {"spec": Struct("ServiceSpec", {
        "ports": ListOf(Struct("ServicePort", {"name": S, "protocol": S, "appProtocol": S, "port": I32,
                                               "targetPort": IOS, "nodePort": I32})),
        "selector": MSS, "clusterIP": S, "clusterIPs": LS, "type": S, "externalIPs": LS, "sessionAffinity": S,
        "loadBalancerIP": S, "externalName": S, "externalTrafficPolicy": S, "internalTrafficPolicy": S,
        "ipFamilies": LS, "ipFamilyPolicy": S, "publishNotReadyAddresses": B})},
    "ConfigMap": {"data": MSS, "binaryData": MapOf(BYTES), "immutable": B},
    "Secret": {"data": MapOf(BYTES), "stringData": MSS, "type": S, "immutable": B},
    "Namespace": {"spec": Struct("NamespaceSpec", {"finalizers": LS})},
    "ServiceAccount": {"imagePullSecrets": ListOf(Struct("LocalObjectReference", {"name": S})),
                       "secrets": ListOf(OBJECT_REF), "automountServiceAccountToken": B},
    "HorizontalPodAutoscaler": {"spec": Struct("HorizontalPodAutoscalerSpec", {
        "scaleTargetRef": Struct("CrossVersionObjectReference", {"kind": S, "name": S, "apiVersion": S}),
        "minReplicas": I32, "maxReplicas": I32, "targetCPUUtilizationPercentage": I32})},
    "ResourceQuota": {"spec": Struct("ResourceQuotaSpec", {"hard": RL, "scopes": LS})},
    "LimitRange": {"spec": Struct("LimitRangeSpec", {"limits": ListOf(Struct("LimitRangeItem", {
        "type": S, "max": RL, "min": RL, "default": RL, "defaultRequest": RL, "maxLimitRequestRatio": RL}))})},
    "PersistentVolumeClaim": {"spec": Struct("PersistentVolumeClaimSpec", {
        "accessModes": LS, "storageClassName": S, "volumeName": S,
        "resources": Struct("VolumeResourceRequirements", {"limits": RL, "requests": RL})})},
}


class DecodeError(ValueError):
    pass


def _jkind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _fail(v: Any, owner: str, path: list[str], go: str, with_value: bool = False) -> DecodeError:
    what = f"number {v!r}" if with_value else _jkind(v)
    return DecodeError(f"json: cannot unmarshal {what} into Go struct field {owner}.{'.'.join(path)} of type {go}")


_INT_RANGE = {"int32": 2**31, "int64": 2**63}


def _scalar(v: Any, t: Scalar, owner: str, path: list[str]) -> None:
    go = t.go
    if go == "string":
        if not isinstance(v, str):
            raise _fail(v, owner, path, go)
    elif go in _INT_RANGE:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _fail(v, owner, path, go)
        if isinstance(v, float) or not -_INT_RANGE[go] <= v < _INT_RANGE[go]:
            raise _fail(v, owner, path, go, with_value=True)
    elif go == "bool":
        if not isinstance(v, bool):
            raise _fail(v, owner, path, go)
    elif go == "resource.Quantity":
        try:
            quantity.parse(v)
        except quantity.QuantityError:
            raise DecodeError(quantity.QUANTITY_ERROR) from None
    elif go == "intstr.IntOrString":
        if isinstance(v, str):
            return
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise DecodeError(f"json: cannot unmarshal {_jkind(v)} into Go value of type int32")
        if isinstance(v, float) or not -2**31 <= v < 2**31:
            raise DecodeError(f"json: cannot unmarshal number {v!r} into Go value of type int32")
    elif go == "[]uint8":
        if not isinstance(v, str):
            raise _fail(v, owner, path, go)
        try:
            base64.b64decode(v, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise DecodeError(f"illegal base64 data at input byte {_bad_b64_offset(v)}") from exc
    elif go == "object":
        if not isinstance(v, dict):
            raise _fail(v, owner, path, "map[string]interface {}")


def _bad_b64_offset(v: str) -> int:
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    for i, ch in enumerate(v):
        if ch not in alphabet and ch != "=":
            return i
    return max(len(v) - len(v) % 4, 0) if len(v) % 4 else len(v)


def _check(v: Any, t: Any, owner: str, path: list[str]) -> None:
    if v is None:
        return
    if isinstance(t, Scalar):
        _scalar(v, t, owner, path)
    elif isinstance(t, Struct):
        if not isinstance(v, dict):
            raise _fail(v, owner, path, t.go)
        for k, sub in t.fields.items():
            if k in v:
                _check(v[k], sub, t.name, path + [k])
    elif isinstance(t, ListOf):
        if not isinstance(v, list):
            raise _fail(v, owner, path, t.go)
        for item in v:
            _check(item, t.elem, owner, path)
    elif isinstance(t, MapOf):
        if not isinstance(v, dict):
            raise _fail(v, owner, path, t.go)
        for item in v.values():
            _check(item, t.elem, owner, path)


def decode_error(rt: ResourceType, detail: str) -> ApiError:
    return ApiError(400, f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {detail}',
                    "BadRequest")


def check_types(rt: ResourceType, obj: dict) -> None:
    """Raise the API server's 400 when ``obj`` would not decode into the kind's Go type."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    for field, value in (("apiVersion", api_version), ("kind", kind)):
        if value is not None and not isinstance(value, str):
            raise decode_error(rt, f"json: cannot unmarshal {_jkind(value)} into Go struct field "
                                   f"{rt.kind}.{field} of type string")
    if api_version and api_version != rt.api_version:
        raise ApiError(400, f"the API version in the data ({api_version}) does not match the expected API "
                            f"version ({rt.api_version})", "BadRequest")
    if kind and kind != rt.kind:
        raise ApiError(400, f'{kind} in version "{rt.version}" cannot be handled as a {rt.kind}: the kind in the '
                            f"data ({kind}) does not match the expected kind ({rt.kind})", "BadRequest")
    try:
        _check(obj.get("metadata"), META, rt.kind, ["metadata"])
        for field, t in SPECS.get(rt.kind, {}).items():
            if field in obj:
                _check(obj[field], t, rt.kind, [field])
    except DecodeError as exc:
        raise decode_error(rt, str(exc)) from None
