"""The exceptions the core raises. Which outcome they become is decided in ``ontrial.outcomes``."""

from __future__ import annotations


class OntrialError(Exception):
    """Base for errors the user should see as one clear line, never as a traceback."""


class InfraError(OntrialError):
    """The harness or the cluster failed, not the agent. ``transient`` errors are retried."""

    def __init__(self, message: str, *, transient: bool = True):
        super().__init__(message)
        self.transient = transient


class ConfigError(OntrialError):
    """Bad user input (task file, agent spec, flags): never retried, always names what is wrong."""
