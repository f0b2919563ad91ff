"""Per-trial Kubernetes sandboxes (kubesim or a real cluster) behind one backend."""

from .backend import SandboxBackend
from .clock import KubesimWaiter, RealTimeWaiter, Waiter, wait_until
from .kube import KubeBackend, namespace_for
from .kubeconfig import ClusterAccess, client_from_kubeconfig_text, load_admin
from .reaper import reap, reap_expired
from .rest import KubeError, KubeRest

__all__ = [
    "ClusterAccess", "KubeBackend", "KubeError", "KubeRest", "KubesimWaiter", "RealTimeWaiter", "SandboxBackend",
    "Waiter", "client_from_kubeconfig_text", "load_admin", "namespace_for", "reap", "reap_expired", "wait_until",
]
