"""Resolving what a container sees when it starts: environment variables and mounted files.

Runs at container start only (the kubelet's generateContainerConfig); the result is copied into
the container's run, which is what keeps running containers unaffected by later edits.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Any

from ..resources import CONFIGMAPS, SECRETS, SERVICES
from .units import parse_cpu_millis, parse_memory_bytes


class ConfigError(Exception):
    """CreateContainerConfigError, with the kubelet's message."""


class MountError(Exception):
    """A volume cannot be set up (FailedMount); ``volume`` names it."""

    def __init__(self, volume: str, message: str):
        super().__init__(message)
        self.volume = volume


@dataclass(frozen=True)
class Resolved:
    env: dict[str, str]
    files: dict[str, str]  # absolute path → content
    mounts: tuple[str, ...]  # mount paths (directories exist even when empty)


def _secret_values(secret: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in (secret.get("data") or {}).items():
        try:
            out[k] = base64.b64decode(str(v)).decode("utf-8", "replace")
        except (ValueError, TypeError):
            out[k] = str(v)
    for k, v in (secret.get("stringData") or {}).items():
        out[k] = str(v)
    return out


def _configmap_values(cm: dict[str, Any]) -> dict[str, str]:
    out = {k: str(v) for k, v in (cm.get("data") or {}).items()}
    for k, v in (cm.get("binaryData") or {}).items():
        out.setdefault(k, str(v))
    return out


def _source(store: Any, kind: str, namespace: str, name: str) -> dict[str, str] | None:
    if kind == "configmap":
        obj = store.find(CONFIGMAPS, namespace, name)
        return None if obj is None else _configmap_values(obj)
    obj = store.find(SECRETS, namespace, name)
    return None if obj is None else _secret_values(obj)


_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes $(VAR) expansion: known vars substitute, $$ escapes, unknown refs stay as written."""

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1)
        return env.get(name, m.group(0))

    return _REF.sub(sub, str(text))


def _field_ref(pod: dict[str, Any], path: str, pod_ip: str, host_ip: str) -> str:
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    m = re.match(r"^metadata\.(labels|annotations)\['(.+)'\]$", path)
    if m:
        return str((meta.get(m.group(1)) or {}).get(m.group(2), ""))
    return {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", ""),
        "metadata.uid": meta.get("uid", ""),
        "spec.nodeName": spec.get("nodeName", ""),
        "spec.serviceAccountName": spec.get("serviceAccountName", "default"),
        "status.podIP": pod_ip,
        "status.podIPs": pod_ip,
        "status.hostIP": host_ip,
        "status.hostIPs": host_ip,
    }.get(path, "")


def _resource_ref(container: dict[str, Any], ref: dict[str, Any], node_cpu: int, node_mem: int) -> str:
    resource = str(ref.get("resource", ""))
    res = container.get("resources") or {}
    section, _, name = resource.partition(".")
    value = (res.get(section) or {}).get(name)
    if name == "cpu":
        millis = parse_cpu_millis(value) if value is not None else node_cpu
        divisor = parse_cpu_millis(ref.get("divisor", "1")) or 1000
        return str(-(-millis // divisor))
    if name in ("memory", "ephemeral-storage"):
        amount = parse_memory_bytes(value) if value is not None else node_mem
        divisor = parse_memory_bytes(ref.get("divisor", "1")) or 1
        return str(-(-amount // divisor))
    return "0"


def service_links(store: Any, namespace: str, enabled: bool) -> dict[str, str]:
    """The docker-link style variables the kubelet injects for Services (KUBERNETES_* always)."""
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443",
           "KUBERNETES_SERVICE_PORT_HTTPS": "443", "KUBERNETES_PORT": "tcp://10.96.0.1:443",
           "KUBERNETES_PORT_443_TCP": "tcp://10.96.0.1:443", "KUBERNETES_PORT_443_TCP_PROTO": "tcp",
           "KUBERNETES_PORT_443_TCP_PORT": "443", "KUBERNETES_PORT_443_TCP_ADDR": "10.96.0.1"}
    if not enabled:
        return env
    for svc in store.list(SERVICES, namespace):
        spec = svc.get("spec") or {}
        ip = spec.get("clusterIP")
        ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
        if not ip or ip == "None" or not ports:
            continue
        prefix = svc["metadata"]["name"].upper().replace("-", "_")
        first = ports[0]
        env[f"{prefix}_SERVICE_HOST"] = ip
        env[f"{prefix}_SERVICE_PORT"] = str(first.get("port", ""))
        env[f"{prefix}_PORT"] = f"{str(first.get('protocol', 'TCP')).lower()}://{ip}:{first.get('port', '')}"
        for p in ports:
            proto = str(p.get("protocol", "TCP"))
            base = f"{prefix}_PORT_{p.get('port')}_{proto}"
            env[base] = f"{proto.lower()}://{ip}:{p.get('port')}"
            env[f"{base}_PROTO"] = proto.lower()
            env[f"{base}_PORT"] = str(p.get("port"))
            env[f"{base}_ADDR"] = ip
            if p.get("name"):
                env[f"{prefix}_SERVICE_PORT_{str(p['name']).upper().replace('-', '_')}"] = str(p.get("port"))
    return env


def resolve_env(store: Any, pod: dict[str, Any], container: dict[str, Any], pod_ip: str, host_ip: str,
                node_cpu: int, node_mem: int) -> dict[str, str]:
    """The container's environment, or ConfigError with the kubelet's wording."""
    ns = pod["metadata"].get("namespace", "default")
    spec = pod.get("spec") or {}
    env = service_links(store, ns, spec.get("enableServiceLinks", True) is not False)
    for src in container.get("envFrom") or []:
        if not isinstance(src, dict):
            continue
        prefix = str(src.get("prefix") or "")
        for key, kind in (("configMapRef", "configmap"), ("secretRef", "secret")):
            ref = src.get(key)
            if not isinstance(ref, dict):
                continue
            values = _source(store, kind, ns, str(ref.get("name", "")))
            if values is None:
                if ref.get("optional"):
                    continue
                raise ConfigError(f'{kind} "{ref.get("name", "")}" not found')
            for k, v in values.items():
                env[prefix + k] = v
    for item in container.get("env") or []:
        if not isinstance(item, dict) or not item.get("name"):
            continue
        name = str(item["name"])
        if "valueFrom" not in item or not isinstance(item.get("valueFrom"), dict):
            env[name] = expand(item.get("value", "") or "", env)
            continue
        vf = item["valueFrom"]
        for key, kind, label in (("configMapKeyRef", "configmap", "ConfigMap"), ("secretKeyRef", "secret", "Secret")):
            ref = vf.get(key)
            if not isinstance(ref, dict):
                continue
            src_name, k = str(ref.get("name", "")), str(ref.get("key", ""))
            values = _source(store, kind, ns, src_name)
            if values is None:
                if ref.get("optional"):
                    break
                raise ConfigError(f'{kind} "{src_name}" not found')
            if k not in values:
                if ref.get("optional"):
                    break
                raise ConfigError(f"couldn't find key {k} in {label} {ns}/{src_name}")
            env[name] = values[k]
            break
        else:
            if isinstance(vf.get("fieldRef"), dict):
                env[name] = _field_ref(pod, str(vf["fieldRef"].get("fieldPath", "")), pod_ip, host_ip)
            elif isinstance(vf.get("resourceFieldRef"), dict):
                env[name] = _resource_ref(container, vf["resourceFieldRef"], node_cpu, node_mem)
    return env


def check_volumes(store: Any, pod: dict[str, Any]) -> None:
    """Raise MountError for the first non-optional ConfigMap/Secret volume whose source is missing."""
    ns = pod["metadata"].get("namespace", "default")
    for vol in (pod.get("spec") or {}).get("volumes") or []:
        if not isinstance(vol, dict):
            continue
        for key, kind, name_field in (("configMap", "configmap", "name"), ("secret", "secret", "secretName")):
            src = vol.get(key)
            if not isinstance(src, dict) or src.get("optional"):
                continue
            name = str(src.get(name_field, ""))
            values = _source(store, kind, ns, name)
            if values is None:
                raise MountError(str(vol.get("name", "")), f'{kind} "{name}" not found')
            for item in src.get("items") or []:
                if isinstance(item, dict) and item.get("key") not in values:
                    raise MountError(str(vol.get("name", "")),
                                     f"configmap references non-existent config key: {item.get('key')}"
                                     if kind == "configmap" else
                                     f"references non-existent secret key: {item.get('key')}")


def resolve_files(store: Any, pod: dict[str, Any], container: dict[str, Any]) -> tuple[dict[str, str], tuple[str, ...]]:
    """Files visible in the container from ConfigMap/Secret volume mounts (snapshot at start)."""
    ns = pod["metadata"].get("namespace", "default")
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or [] if isinstance(v, dict)}
    files: dict[str, str] = {}
    mounts: list[str] = []
    for vm in container.get("volumeMounts") or []:
        if not isinstance(vm, dict):
            continue
        vol = volumes.get(vm.get("name"))
        mount_path = str(vm.get("mountPath", "")).rstrip("/") or "/"
        mounts.append(mount_path)
        if vol is None:
            continue
        content: dict[str, str] = {}
        for key, kind, name_field in (("configMap", "configmap", "name"), ("secret", "secret", "secretName")):
            src = vol.get(key)
            if isinstance(src, dict):
                values = _source(store, kind, ns, str(src.get(name_field, ""))) or {}
                items = [i for i in src.get("items") or [] if isinstance(i, dict)]
                if items:
                    content = {str(i.get("path", i.get("key"))): values.get(str(i.get("key")), "") for i in items
                               if i.get("key") in values}
                else:
                    content = values
        sub_path = vm.get("subPath")
        if sub_path:
            if sub_path in content:
                files[mount_path] = content[sub_path]
            continue
        for rel, text in content.items():
            files[f"{mount_path}/{rel}" if mount_path != "/" else f"/{rel}"] = text
    return files, tuple(mounts)
