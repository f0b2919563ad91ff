"""Everything that makes pods behave: image profiles, nodes, scheduling, admission, the kubelet,
logs and metrics. ``attach(cluster)`` installs the shared state and returns the controllers."""

from __future__ import annotations

from typing import Any, Iterable

from .kubelet import Kubelet
from .nodes import NodeController, NodeSpec, ensure_nodes
from .profiles import Profile, ProfileError, ProfileRegistry
from .quota import QuotaController
from .runtime import Runtime
from .scheduler import Scheduler

__all__ = ["attach", "NodeSpec", "Profile", "ProfileError", "ProfileRegistry", "Runtime", "Kubelet", "Scheduler",
           "NodeController", "QuotaController"]


def attach(cluster: Any, nodes: Iterable[NodeSpec] | None = None, profiles: ProfileRegistry | None = None,
           seed: Any = 0, extra_profiles: Iterable[Any] = ()) -> list[Any]:
    """Set ``cluster.profiles`` and ``cluster.runtime``, create the nodes (default: one
    "kubesim-node-1" with 8 cpu / 32Gi), and return the controllers in the order to run them."""
    registry = profiles if profiles is not None else ProfileRegistry.builtin()
    for p in extra_profiles:
        registry.register(p)
    cluster.profiles = registry
    cluster.runtime = Runtime()
    ensure_nodes(cluster, list(nodes) if nodes is not None else [NodeSpec()])
    scheduler = Scheduler()
    cluster.store.write_hooks.append(lambda ev: scheduler.on_write(cluster, ev))
    return [NodeController(), scheduler, Kubelet(seed), QuotaController()]
