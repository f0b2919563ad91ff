"""Agents on trial: the protocol, the built-in reference and noop agents, and the registry."""

from .noop import NoopAgent
from .protocol import Agent, AgentOutput, Budgets, ModelApiError, TrialContext
from .reference import ReferenceAgent
from .registry import agent_kinds, build_agent, register_agent

__all__ = ["Agent", "AgentOutput", "Budgets", "ModelApiError", "NoopAgent", "ReferenceAgent", "TrialContext",
           "agent_kinds", "build_agent", "register_agent"]
