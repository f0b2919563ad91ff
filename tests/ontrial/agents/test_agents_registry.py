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


def test_adapters_are_registered_and_bad_specs_are_config_errors(monkeypatch) -> None:
    from ontrial.agents.adapters import CommandAgent, HttpAgent, OpenAIAgent, PythonAgent
    from ontrial.agents.heuristic import HeuristicAgent

    assert {"python", "http", "command", "openai", "heuristic"} <= set(agent_kinds())
    assert isinstance(build_agent(AgentSpec(kind="heuristic", config={"apply": True}), None), HeuristicAgent)
    assert isinstance(build_agent(AgentSpec(kind="command", config={"command": "agent --fast"}), None), CommandAgent)
    assert isinstance(build_agent(AgentSpec(kind="http", config={"url": "http://127.0.0.1:1/"}), None), HttpAgent)
    python = build_agent(AgentSpec(kind="python:ontrial.agents.noop:NoopAgent"), None)
    assert isinstance(python, PythonAgent) and isinstance(python.inner, NoopAgent)
    monkeypatch.setenv("SOME_KEY", "k")
    openai = build_agent(AgentSpec(kind="openai", model="m", config={"api_key_env": "SOME_KEY"}), None)
    assert isinstance(openai, OpenAIAgent) and openai.api_key == "k"
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    for spec, message in [
        (AgentSpec(kind="python"), "needs config.entrypoint"),
        (AgentSpec(kind="python", config={"entrypoint": "no_such_module_x:A"}), "cannot import"),
        (AgentSpec(kind="python", config={"entrypoint": "ontrial.agents:Nope"}), "has no attribute"),
        (AgentSpec(kind="python", config={"entrypoint": "ontrial.agents.noop:NoopAgent", "options": {"x": 1}}),
         "rejected its options"),
        (AgentSpec(kind="http", config={}), "needs config.url"),
        (AgentSpec(kind="http", config={"url": "http://x/", "headers": {"A": "${NO_SUCH_KEY}"}}), "NO_SUCH_KEY"),
        (AgentSpec(kind="command", config={}), "needs config.command"),
        (AgentSpec(kind="openai", config={"api_key_env": None}), "needs a model"),
        (AgentSpec(kind="openai", model="m", config={"api_key_env": "NO_SUCH_KEY"}), "NO_SUCH_KEY"),
        (AgentSpec(kind="openai", model="m", config={"api_key_env": None, "temprature": 1}), "unknown config"),
    ]:
        with pytest.raises(ConfigError, match=message):
            build_agent(spec, None)
