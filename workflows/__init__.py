"""Temporal workflows: deterministic orchestration only (no I/O, no clocks, no randomness).

``TrialWorkflow`` runs one trial; ``SuiteWorkflow`` runs tasks × k trials as children, then gates the
run against its baseline; ``RegradeWorkflow`` re-grades stored trials; ``ReapSandboxesWorkflow`` is the
scheduled safety net for sandboxes no teardown reached.

Names are loaded on first use (PEP 562): the workflow sandbox re-imports a workflow's module, and with
it this package, for every workflow instance, so importing everything here would multiply that cost.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "TrialWorkflow": "trial", "SuiteWorkflow": "suite", "RegradeWorkflow": "regrade",
    "ReapSandboxesWorkflow": "reaper", "TrialInput": "options", "TrialOptions": "options",
    "TrialStage": "stages", "SuiteInput": "suite_models", "SuiteProgress": "suite_models",
    "SuiteState": "suite_models", "SuiteStatus": "suite_models", "RegradeInput": "regrade",
}

__all__ = ["ALL_WORKFLOWS", *_WHERE]


def __getattr__(name: str) -> Any:
    if name == "ALL_WORKFLOWS":
        return [__getattr__(n) for n in ("TrialWorkflow", "SuiteWorkflow", "RegradeWorkflow", "ReapSandboxesWorkflow")]
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
