"""What a tool handler gets: the agent-scoped REST client and the namespace the call targets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..sandbox.kinds import KindInfo
from ..sandbox.rest import KubeError, KubeRest


class ToolError(Exception):
    """A tool call the agent got wrong (bad arguments, missing object): returned as a tool error."""


KUBESIM_PROMETHEUS = ("/kubesim/v1/namespaces/{namespace}/prometheus", "/prometheus/namespaces/{namespace}")


@dataclass(frozen=True)
class TrialExtras:
    """What the read tools can show beyond the cluster objects.

    ``alerts``: the alert payloads handed to the agent. ``runbooks``: name → text, when the task
    has them. ``prometheus``: where PromQL goes, tried in order until one answers — each an
    absolute URL or a path prefix on the API server (kubesim serves a namespace-scoped Prometheus
    HTTP API under its admin endpoints, see ``KUBESIM_PROMETHEUS``); empty = no metrics tool.
    ``metrics_rest``: the harness's own client for path prefixes (the agent's token cannot reach
    admin paths; the harness fixes the namespace, so the agent still sees only its trial's series)."""

    alerts: tuple[dict[str, Any], ...] = ()
    runbooks: dict[str, str] = field(default_factory=dict)
    prometheus: tuple[str, ...] = ()
    metrics_rest: Any = None

    @classmethod
    def for_kubesim(cls, namespace: str, admin: KubeRest, **kw: Any) -> "TrialExtras":
        return cls(prometheus=tuple(p.format(namespace=namespace) for p in KUBESIM_PROMETHEUS), metrics_rest=admin,
                   **kw)


@dataclass(frozen=True)
class ToolContext:
    rest: KubeRest
    namespace: str  # the namespace this call targets (the trial namespace unless the agent asked otherwise)
    extras: TrialExtras = field(default_factory=TrialExtras)
    cache: dict[str, Any] = field(default_factory=dict)  # per-gateway memo (e.g. the Prometheus prefix found)

    async def kind(self, kind: str) -> KindInfo:
        if not kind:
            raise ToolError("kind is required")
        try:
            return await self.rest.resolve(kind)
        except KubeError as e:
            if e.status == 404:
                raise ToolError(f'the server doesn\'t have a resource type "{kind}"') from e
            raise


def qualified(info: KindInfo) -> str:
    """kubectl's resource prefix: "deployment.apps", "pod"."""
    return f"{info.kind.lower()}.{info.group}" if info.group else info.kind.lower()


def kube_error_text(err: KubeError) -> str:
    """A failed request as kubectl prints it: ``Error from server (Forbidden): ...``."""
    if err.status == 0:
        return f"error: unable to reach the cluster: {err.message}"
    return f"Error from server ({err.reason or err.status}): {err.message}"
