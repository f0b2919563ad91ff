"""Adapters that put agents built elsewhere on trial through the one Agent protocol.

``python`` (a class in-process), ``http`` (an agent service), ``command`` (a CLI agent in a scratch
directory), ``openai`` (a built-in tool-calling loop for any OpenAI-compatible endpoint).
"""

from .command import CommandAgent
from .http import HttpAgent
from .openai import OpenAIAgent
from .python import PythonAgent, load_entrypoint

__all__ = ["CommandAgent", "HttpAgent", "OpenAIAgent", "PythonAgent", "load_entrypoint"]
