"""The agent registry and the reference agent's construction from a task."""

from pathlib import Path

import pytest

from ontrial.agents import Agent, Budgets, NoopAgent, ReferenceAgent, agent_kinds, build_agent, register_agent
from ontrial.errors import ConfigError
from ontrial.models.trial import AgentSpec
from ontrial.tasks import load_task

TASK = Path(__file__).parents[1] / "fixtures" / "shop" / "web-bad-image" / "task.yaml"


def test_builtins_are_registered() -> None:
    task = load_task(TASK)
    assert {"reference", "noop"} <= set(agent_kinds())
    ref = build_agent(AgentSpec(kind="reference"), task)
    assert isinstance(ref, ReferenceAgent) and isinstance(ref, Agent)
    assert [a["tool"] for a in ref.actions] == ["get_resources", "describe", "get_events", "rollout_undo"]
    assert isinstance(build_agent(AgentSpec(kind="noop"), task), NoopAgent)


def test_unknown_kind_and_missing_solution_are_config_errors() -> None:
    task = load_task(TASK)
    with pytest.raises(ConfigError, match="unknown agent kind 'gpt'"):
        build_agent(AgentSpec(kind="gpt"), task)
    without = task.model_copy(update={"reference_solution": None})
    with pytest.raises(ConfigError, match="no reference_solution"):
        build_agent(AgentSpec(kind="reference"), without)


def test_register_agent() -> None:
    register_agent("test-noop", lambda spec, task: NoopAgent())
    assert isinstance(build_agent(AgentSpec(kind="test-noop"), None), NoopAgent)


def test_budgets_from_task() -> None:
    budgets = Budgets.from_task(load_task(TASK).budgets)
    assert budgets.as_dict() == {"steps": 20, "tokens": 1000, "wall_seconds": 120.0}
