"""What a tool handler gets: the agent-scoped REST client and the namespace the call targets."""

from __future__ import annotations

from dataclasses import dataclass

from ..sandbox.kinds import KindInfo
from ..sandbox.rest import KubeError, KubeRest


class ToolError(Exception):
    """A tool call the agent got wrong (bad arguments, missing object): returned as a tool error."""


@dataclass(frozen=True)
class ToolContext:
    rest: KubeRest
    namespace: str  # the namespace this call targets (the trial namespace unless the agent asked otherwise)

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
