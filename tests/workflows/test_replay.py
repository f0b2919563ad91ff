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


#: Histories whose workflow id is not their file name (the suite takes its run id from its workflow id).
WORKFLOW_IDS = {"suite-continued": "suite-run"}


def load(path: Path) -> WorkflowHistory:
    return WorkflowHistory.from_json(WORKFLOW_IDS.get(path.stem, path.stem), json.loads(path.read_text()))


def test_there_are_histories_to_replay():
    assert {p.stem for p in HISTORIES} >= {"trial-passed", "trial-cancelled", "trial-agent-error",
                                           "trial-infra-error", "suite-run", "suite-continued", "suite-override"}


def test_the_suite_histories_cover_continue_as_new_and_the_override_update():
    def kinds(name: str) -> list[str]:
        events = json.loads((Path(__file__).parent / "histories" / f"{name}.json").read_text())["events"]
        return [e["eventType"] for e in events]

    assert kinds("suite-continued")[-1] == "EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW"
    assert "EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED" in kinds("suite-continued")
    assert "EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED" in kinds("suite-override")
    assert kinds("suite-run")[-1] == "EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED"


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
