"""Agents on trial: the protocol, the built-in agents (reference, noop, heuristic), the adapters
(python, http, command, openai) and the registry."""

from .heuristic import HeuristicAgent
from .noop import NoopAgent
from .protocol import Agent, AgentOutput, Budgets, ModelApiError, TrialContext
from .reference import ReferenceAgent
from .registry import agent_kinds, build_agent, register_agent

__all__ = ["Agent", "AgentOutput", "Budgets", "HeuristicAgent", "ModelApiError", "NoopAgent", "ReferenceAgent",
           "TrialContext", "agent_kinds", "build_agent", "register_agent"]
