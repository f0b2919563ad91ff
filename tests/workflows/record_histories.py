"""Record the workflow histories the replay test checks (tests/workflows/histories/*.json).

Run after changing workflow code in a way that is *meant* to be incompatible (and only then —
normally new code must replay the old histories, guarded by ``workflow.patched``):

    python tests/workflows/record_histories.py            # every scenario
    python tests/workflows/record_histories.py suites     # only the suite histories (or: trials)

Each scenario runs for real: Temporal dev server, embedded kubesim, in-process worker.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
HISTORIES = HERE / "histories"


async def record(only: str | None = None) -> None:
    sys.path.insert(0, str(HERE))
    import trial_agents  # noqa: F401 - registers the test agents
    from temporalio.contrib.pydantic import pydantic_data_converter
    from temporalio.testing import WorkflowEnvironment

    import kubesim.embedded
    from worker.app import build_worker

    cli = shutil.which("temporal", path=str(Path(sys.executable).parent)) or shutil.which("temporal")
    HISTORIES.mkdir(exist_ok=True)
    with kubesim.embedded.start(time_scale=0) as cluster, tempfile.TemporaryDirectory() as scratch:
        env = await WorkflowEnvironment.start_local(dev_server_existing_path=cli,
                                                    data_converter=pydantic_data_converter)
        client = env.client
        try:
            async with build_worker(client, "record"):
                async def save(name: str, workflow_id: str) -> None:
                    history = await client.get_workflow_handle(workflow_id).fetch_history()
                    (HISTORIES / f"{name}.json").write_text(json.dumps(json.loads(history.to_json()), indent=1))
                    print(f"recorded {name}")

                artifacts = Path(scratch)
                if only != "suites":
                    await record_trials(client, cluster, artifacts, save)
                if only != "trials":
                    await record_suites(client, cluster, artifacts, save)
        finally:
            await env.shutdown()


async def record_trials(client, cluster, artifacts: Path, save) -> None:  # noqa: ANN001 - script helpers
    from trial_harness import trial_input, trial_spec, wait_for_stage
    from workflows import TrialStage, TrialWorkflow

    for name, agent, task in [("trial-passed", "reference", "web-bad-image"),
                              ("trial-agent-error", "test-crash", "web-bad-image"),
                              ("trial-infra-error", "reference", "web-never-healthy")]:
        spec = trial_spec(cluster, artifacts, agent=agent, task=task, suite=name)
        await client.execute_workflow(TrialWorkflow.run, trial_input(spec), id=spec.trial_id,
                                      task_queue="record")
        await save(name, spec.trial_id)

    spec = trial_spec(cluster, artifacts, agent="test-sleep", suite="trial-cancelled")
    handle = await client.start_workflow(TrialWorkflow.run, trial_input(spec), id=spec.trial_id,
                                         task_queue="record")
    await wait_for_stage(handle, TrialStage.running_agent)
    await asyncio.sleep(1)
    await handle.cancel()
    await handle.result()
    await save("trial-cancelled", spec.trial_id)


async def record_suites(client, cluster, artifacts: Path, save) -> None:  # noqa: ANN001 - script helpers
    """suite-continued: a first run ending in continue-as-new; suite-run: the last run (finish, gate);
    suite-override: a failed gate waiting for a decision, then overridden through the Update."""
    from datetime import timedelta

    from ontrial.models.suite import OverrideRequest
    from trial_harness import suite_input, suite_tasks
    from workflows import SuiteWorkflow
    from workflows.suite_models import SuiteStatus

    tasks = suite_tasks(artifacts / "suite-tasks", 2)
    url = f"sqlite:///{artifacts}/results.db"
    suite = suite_input(cluster, artifacts, tasks, trials=2, concurrency=2, chunk_size=3, suite_id="suite-run",
                        results_url=url, name="recorded", promote_on_pass=True)
    handle = await client.start_workflow(SuiteWorkflow.run, suite, id=suite.spec.suite_id, task_queue="record")
    await handle.result()
    await save("suite-run", suite.spec.suite_id)
    first = await client.get_workflow_handle(suite.spec.suite_id).fetch_history()
    run_id = first.events[0].workflow_execution_started_event_attributes.continued_execution_run_id
    history = await client.get_workflow_handle(suite.spec.suite_id, run_id=run_id).fetch_history()
    (HISTORIES / "suite-continued.json").write_text(json.dumps(json.loads(history.to_json()), indent=1))
    print("recorded suite-continued")

    failing = suite_input(cluster, artifacts, tasks, agent="noop", trials=1, concurrency=2, suite_id="suite-override",
                          results_url=url, name="recorded", decision_window=timedelta(minutes=5))
    handle = await client.start_workflow(SuiteWorkflow.run, failing, id=failing.spec.suite_id, task_queue="record")
    while (await handle.query(SuiteWorkflow.progress)).status is not SuiteStatus.awaiting_decision:
        await asyncio.sleep(0.2)
    await handle.execute_update(SuiteWorkflow.override, OverrideRequest(approver="recorder", reason="a fixture"))
    await handle.result()
    await save("suite-override", failing.spec.suite_id)


if __name__ == "__main__":
    asyncio.run(record(sys.argv[1] if len(sys.argv) > 1 else None))
