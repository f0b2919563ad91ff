"""How core exceptions cross the Temporal boundary: the one place that decides what is retried.

``InfraError(transient=True)`` is retried by the workflow's retry policy; a permanent
``InfraError`` and every ``ConfigError`` fail the activity at once. Anything else (a bug, an
unexpected client exception) is left to Temporal's default: retried until the step's
schedule-to-close timeout, so a flaky dependency we did not classify still gets a second chance.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from temporalio.exceptions import ApplicationError

from ontrial.errors import ConfigError, InfraError

INFRA_ERROR = "InfraError"
CONFIG_ERROR = "ConfigError"

#: Error types no retry policy may retry (a permanent InfraError is already non_retryable).
NON_RETRYABLE_TYPES = (CONFIG_ERROR,)


def to_application_error(err: BaseException) -> BaseException:
    """The Temporal failure for ``err``; exceptions we do not classify are returned unchanged."""
    if isinstance(err, ConfigError):
        return ApplicationError(str(err), type=CONFIG_ERROR, non_retryable=True)
    if isinstance(err, InfraError):
        return ApplicationError(str(err), type=INFRA_ERROR, non_retryable=not err.transient)
    return err


@contextmanager
def temporal_errors() -> Iterator[None]:
    """Re-raise ``ConfigError`` / ``InfraError`` as ``ApplicationError`` with the right retry semantics."""
    try:
        yield
    except (ConfigError, InfraError) as err:
        raise to_application_error(err) from err
