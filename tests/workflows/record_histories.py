"""Record the workflow histories the replay test checks (tests/workflows/histories/*.json).

Run after changing workflow code in a way that is *meant* to be incompatible (and only then —
normally new code must replay the old histories, guarded by ``workflow.patched``):

    python tests/workflows/record_histories.py

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


async def record() -> None:
    sys.path.insert(0, str(HERE))
    import trial_agents  # noqa: F401 - registers the test agents
    from temporalio.contrib.pydantic import pydantic_data_converter
    from temporalio.testing import WorkflowEnvironment

    import kubesim.embedded
    from ontrial.models.trial import AgentSpec, SandboxSettings
    from trial_harness import FAST, TASKS, trial_input, trial_spec, wait_for_stage
    from worker.app import build_worker
    from workflows import RunTrialsInput, RunTrialsWorkflow, TaskRef, TrialStage, TrialWorkflow

    cli = shutil.which("temporal", path=str(Path(sys.executable).parent)) or shutil.which("temporal")
    HISTORIES.mkdir(exist_ok=True)
    with kubesim.embedded.start(time_scale=0) as cluster, tempfile.TemporaryDirectory() as scratch:
        env = await WorkflowEnvironment.start_local(dev_server_existing_path=cli, data_converter=pydantic_data_converter)
        client = env.client
        try:
            async with build_worker(client, "record"):
                async def save(name: str, workflow_id: str) -> None:
                    history = await client.get_workflow_handle(workflow_id).fetch_history()
                    (HISTORIES / f"{name}.json").write_text(json.dumps(json.loads(history.to_json()), indent=1))
                    print(f"recorded {name}")

                artifacts = Path(scratch)
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

                suite = RunTrialsInput(
                    suite_id="suite-run", agent=AgentSpec(kind="reference"), trials=2, concurrency=2,
                    tasks=[TaskRef(task_id="web-bad-image", task_file=str(TASKS / "web-bad-image" / "task.yaml"))],
                    sandbox=SandboxSettings(kubeconfig=cluster.kubeconfig_path, settle_seconds=60),
                    artifacts_root=str(artifacts), trial_options=FAST)
                await client.execute_workflow(RunTrialsWorkflow.run, suite, id=suite.suite_id, task_queue="record")
                await save("suite-run", suite.suite_id)
        finally:
            await env.shutdown()


if __name__ == "__main__":
    asyncio.run(record())
