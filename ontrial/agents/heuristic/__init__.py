"""The heuristic baseline agent (no LLM): every suite gets a non-LLM baseline to beat."""

from .agent import HeuristicAgent

__all__ = ["HeuristicAgent"]
