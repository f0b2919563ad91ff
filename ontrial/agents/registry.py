"""Agent kinds by name. Built-ins: ``reference`` and ``noop``; adapters register more."""

from __future__ import annotations

from typing import Any, Callable

from ..errors import ConfigError
from ..models.trial import AgentSpec
from .noop import NoopAgent
from .protocol import Agent
from .reference import ReferenceAgent

AgentFactory = Callable[[AgentSpec, Any], Agent]

_FACTORIES: dict[str, AgentFactory] = {
    "reference": lambda spec, task: ReferenceAgent.for_task(task),
    "noop": lambda spec, task: NoopAgent(),
}


def register_agent(kind: str, factory: AgentFactory) -> None:
    """Make ``AgentSpec(kind=kind)`` buildable; ``factory(spec, task)`` returns the Agent."""
    _FACTORIES[kind] = factory


def agent_kinds() -> list[str]:
    return sorted(_FACTORIES)


def build_agent(spec: AgentSpec, task: Any) -> Agent:
    factory = _FACTORIES.get(spec.kind)
    if factory is None:
        raise ConfigError(f"unknown agent kind {spec.kind!r} (known: {', '.join(agent_kinds())})")
    return factory(spec, task)
