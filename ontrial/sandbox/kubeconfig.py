"""Kubeconfigs in and out: the admin one the harness is given, the scoped one each agent gets."""

from __future__ import annotations

import base64
import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes.client import ApiClient, Configuration
from kubernetes.config.config_exception import ConfigException
from kubernetes.config.incluster_config import load_incluster_config
from kubernetes.config.kube_config import load_kube_config, new_client_from_config_dict

from ..errors import ConfigError


@dataclass(frozen=True)
class ClusterAccess:
    """A connected ApiClient plus what else reaches the same server (admin endpoints, new kubeconfigs)."""

    api_client: ApiClient
    server: str
    token: str | None
    ca_data: str | None  # base64 PEM, as kubeconfigs carry it
    verify_tls: bool

    def close(self) -> None:
        self.api_client.close()


def _access(api_client: ApiClient) -> ClusterAccess:
    cfg: Configuration = api_client.configuration
    auth = (cfg.api_key or {}).get("authorization") or (cfg.api_key or {}).get("BearerToken")
    token = auth.split(" ", 1)[1] if auth and auth.lower().startswith("bearer ") else auth
    ca_data = None
    if cfg.ssl_ca_cert and Path(cfg.ssl_ca_cert).is_file():
        ca_data = base64.b64encode(Path(cfg.ssl_ca_cert).read_bytes()).decode()
    return ClusterAccess(api_client, cfg.host.rstrip("/"), token, ca_data, bool(cfg.verify_ssl))


IN_CLUSTER = "in-cluster"


def load_admin(kubeconfig: str, context: str | None = None) -> ClusterAccess:
    """Connect with the admin kubeconfig of the target cluster (kubesim or real).

    ``in-cluster`` uses the pod's ServiceAccount, as the worker Deployment in deploy/ does."""
    if kubeconfig == IN_CLUSTER:
        cfg = Configuration()
        try:
            load_incluster_config(client_configuration=cfg)
        except ConfigException as e:
            raise ConfigError(f"sandbox kubeconfig in-cluster: {e}") from e
        return _access(ApiClient(cfg))
    path = Path(kubeconfig).expanduser()
    if not path.is_file():
        raise ConfigError(f"sandbox kubeconfig {kubeconfig} does not exist")
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, context)
    cfg = _LOADED.get(key)
    if cfg is None:
        cfg = Configuration()
        try:
            load_kube_config(str(path), context=context, client_configuration=cfg, persist_config=False)
        except (ConfigException, ValueError, KeyError, TypeError, yaml.YAMLError) as e:
            raise ConfigError(f"sandbox kubeconfig {kubeconfig}: {e}") from e
        _LOADED[key] = cfg
    return _access(ApiClient(copy.deepcopy(cfg)))


# Parsed admin kubeconfigs by (path, mtime, size, context): every step of every trial connects, and
# parsing (YAML, certificates to temporary files) cost ~4 ms a time; an edited file is parsed again.
_LOADED: dict[tuple[str, int, int, str | None], Configuration] = {}


def render_agent_kubeconfig(access: ClusterAccess, *, token: str, namespace: str, name: str) -> str:
    """A kubeconfig holding only the agent's short-lived token, defaulting to its namespace."""
    cluster: dict[str, Any] = {"server": access.server}
    if access.ca_data:
        cluster["certificate-authority-data"] = access.ca_data
    if not access.verify_tls and access.server.startswith("https"):
        cluster["insecure-skip-tls-verify"] = True
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": f"{name}-agent", "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": f"{name}-agent", "namespace": namespace}}],
        "current-context": name,
        "preferences": {},
    }
    return yaml.safe_dump(doc, sort_keys=False)


def client_from_kubeconfig_text(text: str | bytes) -> ClusterAccess:
    """An ApiClient from kubeconfig content (the agent's kubeconfig artifact)."""
    try:
        doc = yaml.safe_load(text)
        client = new_client_from_config_dict(doc, persist_config=False)
    except (ConfigException, ValueError, KeyError, TypeError, yaml.YAMLError) as e:
        raise ConfigError(f"invalid kubeconfig: {e}") from e
    return _access(client)


def kubeconfig_namespace(text: str | bytes) -> str | None:
    """The current context's namespace of a kubeconfig."""
    doc = yaml.safe_load(text) or {}
    current = doc.get("current-context")
    for ctx in doc.get("contexts") or []:
        if ctx.get("name") == current:
            return (ctx.get("context") or {}).get("namespace")
    return None
