"""Temporal workflows: deterministic orchestration only (no I/O, no clocks, no randomness).

``TrialWorkflow`` runs one trial; ``RunTrialsWorkflow`` fans trials out as children;
``ReapSandboxesWorkflow`` is the scheduled safety net for sandboxes no teardown reached.
"""

from .options import TrialInput, TrialOptions
from .reaper import ReapSandboxesWorkflow
from .stages import TrialStage
from .suite import RunTrialsInput, RunTrialsResult, RunTrialsWorkflow, SuiteProgress, TaskRef
from .trial import TrialWorkflow

ALL_WORKFLOWS = [TrialWorkflow, RunTrialsWorkflow, ReapSandboxesWorkflow]

__all__ = [
    "ALL_WORKFLOWS", "ReapSandboxesWorkflow", "RunTrialsInput", "RunTrialsResult", "RunTrialsWorkflow",
    "SuiteProgress", "TaskRef", "TrialInput", "TrialOptions", "TrialStage", "TrialWorkflow",
]
