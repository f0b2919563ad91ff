"""Write the kubeconfig that points kubectl and the Python client at a kubesim server."""

from __future__ import annotations

import base64
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

CONTEXT = "kubesim"
USER = "kubesim-admin"


def kubeconfig_dict(server_url: str, token: str, namespace: str = "default", name: str = CONTEXT,
                    ca_pem: bytes | None = None) -> dict[str, Any]:
    """A single-context kubeconfig with a bearer-token user (and the CA that signed an HTTPS server)."""
    cluster: dict[str, Any] = {"server": server_url}
    if ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode("ascii")
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": USER, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": USER, "namespace": namespace}}],
        "current-context": name,
    }


def write_kubeconfig(path: str | os.PathLike[str] | None, server_url: str, token: str,
                     namespace: str = "default", ca_pem: bytes | None = None) -> Path:
    """Write atomically with mode 0600 (it holds a credential); a temp file when ``path`` is None."""
    if path is None:
        fd, tmp = tempfile.mkstemp(prefix="kubesim-", suffix=".kubeconfig")
        os.close(fd)
        target = Path(tmp)
    else:
        target = Path(path).expanduser()
        target.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(kubeconfig_dict(server_url, token, namespace, ca_pem=ca_pem), sort_keys=False)
    partial = target.with_name(f".{target.name}.tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(partial, target)
    return target
