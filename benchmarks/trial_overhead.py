"""What Temporal orchestration costs per trial: the same activity functions run as TrialWorkflows
(dev server + in-process worker) and called one after another in a plain asyncio loop.

    python benchmarks/trial_overhead.py                   # noop agent on a real task, on kubesim
    python benchmarks/trial_overhead.py --instant-steps   # steps that return at once: pure overhead

Trials run sequentially so the two sides do identical work; prints seconds per trial for both and
their ratio. Numbers depend on the machine; compare ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import ActivityEnvironment, WorkflowEnvironment
from temporalio.worker import Worker

import activities
from activities.instant import INSTANT_TRIAL_ACTIVITIES
from ontrial.models.trial import AgentSpec, SandboxSettings, TrialSpec
from workflows import TrialInput, TrialWorkflow

ROOT = Path(__file__).resolve().parents[1]


INSTANT = INSTANT_TRIAL_ACTIVITIES  # steps that return at once: the pure orchestration cost
REAL = [activities.create_sandbox, activities.inject_fault, activities.run_agent, activities.collect_artifacts,
        activities.grade, activities.teardown]


async def plain_trial(steps: Sequence[Callable[..., Awaitable[Any]]], spec: TrialSpec) -> None:
    """The trial's step sequence without Temporal (ActivityEnvironment gives the steps their context)."""
    create, fault, agent, collect, grade, teardown = steps
    env = ActivityEnvironment()
    sandbox = await env.run(create, spec)
    try:
        report = await env.run(fault, spec, sandbox)
        run = await env.run(agent, spec, sandbox, report)
        await env.run(collect, spec, sandbox, run)
        await env.run(grade, spec, sandbox, run)
    finally:
        await env.run(teardown, spec, sandbox.namespace)


async def measure(trials: int, run_one: Callable[[int], Awaitable[None]]) -> float:
    await run_one(-1)  # warm-up: imports, connections, caches
    started = time.perf_counter()
    for index in range(trials):
        await run_one(index)
    return (time.perf_counter() - started) / trials


async def main(trials: int, task_file: Path, instant: bool) -> None:
    steps = INSTANT if instant else REAL
    cli = shutil.which("temporal", path=str(Path(sys.executable).parent)) or shutil.which("temporal")
    cluster = None
    kubeconfig = "unused"
    if not instant:
        import kubesim.embedded

        cluster = kubesim.embedded.start(time_scale=0)
        kubeconfig = cluster.kubeconfig_path
    env = await WorkflowEnvironment.start_local(dev_server_existing_path=cli, data_converter=pydantic_data_converter)
    try:
        with tempfile.TemporaryDirectory() as artifacts:
            run_id = uuid.uuid4().hex[:6]

            def spec(side: str, index: int) -> TrialSpec:
                return TrialSpec(suite_id=f"bench-{run_id}-{side}", task_id="task", trial_index=index + 1,
                                 task_file=str(task_file), agent=AgentSpec(kind="noop"),
                                 sandbox=SandboxSettings(kubeconfig=kubeconfig), artifacts_root=artifacts)

            plain = await measure(trials, lambda i: plain_trial(steps, spec("plain", i)))
            async with Worker(env.client, task_queue="bench", workflows=[TrialWorkflow], activities=steps):
                async def temporal_trial(index: int) -> None:
                    s = spec("temporal", index)
                    await env.client.execute_workflow(TrialWorkflow.run, TrialInput(spec=s), id=s.trial_id,
                                                      task_queue="bench")

                orchestrated = await measure(trials, temporal_trial)
    finally:
        await env.shutdown()
        if cluster is not None:
            cluster.stop()
    what = "instant steps" if instant else f"noop agent on {task_file.parent.name}"
    print(f"trial overhead: {what}, {trials} sequential trials")
    print(f"  plain asyncio loop : {plain * 1000:9.1f} ms/trial")
    print(f"  TrialWorkflow      : {orchestrated * 1000:9.1f} ms/trial")
    print(f"  ratio              : {orchestrated / plain:9.2f}x   (orchestration adds "
          f"{(orchestrated - plain) * 1000:.1f} ms/trial)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--task", type=Path, default=ROOT / "tasks" / "bad-image-rollout" / "task.yaml")
    parser.add_argument("--instant-steps", action="store_true", help="steps that return at once (pure overhead)")
    args = parser.parse_args()
    asyncio.run(main(args.trials, args.task.resolve(), args.instant_steps))
