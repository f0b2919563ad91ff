"""Recorded histories must replay against the current workflow code (regenerate them with
record_histories.py only for a deliberate, versioned break)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio import workflow
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer, UnsandboxedWorkflowRunner

from workflows import ALL_WORKFLOWS

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def load(path: Path) -> WorkflowHistory:
    return WorkflowHistory.from_json(path.stem, json.loads(path.read_text()))


def test_there_are_histories_to_replay():
    assert {p.stem for p in HISTORIES} >= {"trial-passed", "trial-cancelled", "trial-agent-error",
                                           "trial-infra-error", "suite-run"}


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
async def test_recorded_history_replays(path: Path):
    replayer = Replayer(workflows=ALL_WORKFLOWS, data_converter=pydantic_data_converter)
    result = await replayer.replay_workflow(load(path), raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure


@workflow.defn(name="TrialWorkflow", sandboxed=False)
class GradesBeforeCollecting:
    """A reordered trial (grade before collect_artifacts): what an unguarded change looks like."""

    @workflow.run
    async def run(self, trial_input: dict) -> dict:
        from datetime import timedelta

        for name in ("create_sandbox", "inject_fault", "run_agent", "grade", "collect_artifacts", "teardown"):
            await workflow.execute_activity(name, start_to_close_timeout=timedelta(minutes=1))
        return {}


async def test_a_reordered_workflow_does_not_replay():
    replayer = Replayer(workflows=[GradesBeforeCollecting], data_converter=pydantic_data_converter,
                        workflow_runner=UnsandboxedWorkflowRunner())
    result = await replayer.replay_workflow(load(HISTORIES[[p.stem for p in HISTORIES].index("trial-passed")]),
                                            raise_on_replay_failure=False)
    assert result.replay_failure is not None
    assert "collect_artifacts" in str(result.replay_failure) or "grade" in str(result.replay_failure)
