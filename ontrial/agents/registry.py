"""Agent kinds by name.

Built-ins: ``reference``, ``noop``, ``heuristic`` (the non-LLM baseline); adapters: ``python``
(also spelled ``python:package.module:Class``), ``http``, ``command``, ``openai``. Tests and
plugins add more with ``register_agent``.
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import ConfigError
from ..models.trial import AgentSpec
from .adapters import CommandAgent, HttpAgent, OpenAIAgent, PythonAgent
from .heuristic import HeuristicAgent
from .noop import NoopAgent
from .protocol import Agent
from .reference import ReferenceAgent

AgentFactory = Callable[[AgentSpec, Any], Agent]
PYTHON_PREFIX = "python:"

_FACTORIES: dict[str, AgentFactory] = {
    "reference": lambda spec, task: ReferenceAgent.for_task(task),
    "noop": lambda spec, task: NoopAgent(),
    "heuristic": lambda spec, task: HeuristicAgent.from_config(spec.config),
    "python": lambda spec, task: PythonAgent.from_config(spec.config),
    "http": lambda spec, task: HttpAgent.from_config(spec.config),
    "command": lambda spec, task: CommandAgent.from_config(spec.config),
    "openai": lambda spec, task: OpenAIAgent.from_spec(spec.config, spec.model),
}


def register_agent(kind: str, factory: AgentFactory) -> None:
    """Make ``AgentSpec(kind=kind)`` buildable; ``factory(spec, task)`` returns the Agent."""
    _FACTORIES[kind] = factory


def agent_kinds() -> list[str]:
    return sorted(_FACTORIES)


def build_agent(spec: AgentSpec, task: Any) -> Agent:
    """The Agent for ``spec``; a bad spec (unknown kind, missing config, unset API key) is a ConfigError."""
    if spec.kind.startswith(PYTHON_PREFIX) and spec.kind not in _FACTORIES:
        return PythonAgent.from_config(spec.config, entrypoint=spec.kind[len(PYTHON_PREFIX):])
    factory = _FACTORIES.get(spec.kind)
    if factory is None:
        raise ConfigError(f"unknown agent kind {spec.kind!r} (known: {', '.join(agent_kinds())})")
    return factory(spec, task)
