"""Helpers for trial-workflow tests: specs for the fixture tasks, fast options, cluster probes."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from temporalio.client import Client, WorkflowHandle

from ontrial.models.trial import AgentSpec, SandboxSettings, TrialSpec
from ontrial.sandbox import KubeRest, load_admin
from ontrial.sandbox.kinds import lookup_kind
from ontrial.sandbox.kube import MANAGED_LABEL, TRIAL_LABEL, trial_label
from workflows import TrialInput, TrialOptions

TASKS = Path(__file__).parent / "fixtures" / "tasks"
ROOT = Path(__file__).resolve().parents[2]

#: Short timeouts so exhausted retries and lost workers show up in seconds.
FAST = TrialOptions(
    infra_step_timeout=timedelta(seconds=6),
    infra_attempt_timeout=timedelta(seconds=60),
    infra_heartbeat_timeout=timedelta(seconds=5),
    infra_initial_backoff=timedelta(milliseconds=200),
    infra_max_backoff=timedelta(seconds=1),
    agent_timeout=timedelta(minutes=5),
    agent_heartbeat_timeout=timedelta(seconds=4),
    teardown_timeout=timedelta(seconds=60),
)


def trial_spec(cluster: Any, artifacts: Path, *, agent: str = "reference", task: str = "web-bad-image",
               suite: str = "suite", index: int = 0, config: dict[str, Any] | None = None) -> TrialSpec:
    return TrialSpec(suite_id=suite, task_id=task, trial_index=index, task_file=str(TASKS / task / "task.yaml"),
                     agent=AgentSpec(kind=agent, config=config or {}),
                     sandbox=SandboxSettings(kubeconfig=cluster.kubeconfig_path, settle_seconds=60,
                                             healthy_timeout_seconds=60),
                     artifacts_root=str(artifacts))


def trial_input(spec: TrialSpec, options: TrialOptions = FAST) -> TrialInput:
    return TrialInput(spec=spec, options=options)


async def namespaces(cluster: Any, selector: str = f"{MANAGED_LABEL}=true") -> list[str]:
    """Names of live (not yet deleted) namespaces matching ``selector``."""
    access = load_admin(cluster.kubeconfig_path)
    try:
        found = await KubeRest(access.api_client).list(lookup_kind("Namespace"), None, label_selector=selector)
    finally:
        access.close()
    return sorted(ns["metadata"]["name"] for ns in found)


async def namespaces_of(cluster: Any, trial_id: str) -> list[str]:
    return await namespaces(cluster, f"{TRIAL_LABEL}={trial_label(trial_id)}")


def set_api_faults(cluster: Any, **config: Any) -> None:
    """Make the kubesim API fail like a sick apiserver (POST /kubesim/v1/faults)."""
    response = httpx.post(f"{cluster.url}/kubesim/v1/faults", json=config,
                          headers={"Authorization": f"Bearer {cluster.admin_token}"})
    response.raise_for_status()


def clear_api_faults(cluster: Any) -> None:
    httpx.delete(f"{cluster.url}/kubesim/v1/faults",
                 headers={"Authorization": f"Bearer {cluster.admin_token}"}).raise_for_status()


def seed_failing_first(rate: float, then_passing: int = 8) -> int:
    """A fault seed whose first draw fails and the next ``then_passing`` draws pass."""
    for seed in range(100_000):
        rng = random.Random(seed)
        if rng.random() < rate and all(rng.random() >= rate for _ in range(then_passing)):
            return seed
    raise AssertionError("no such seed")


async def attempts_of(client: Client, workflow_id: str, activity_type: str) -> int:
    """The attempt number the step finally ran with (history keeps only the last attempt's start)."""
    scheduled: dict[int, str] = {}
    attempt = 0
    async for event in client.get_workflow_handle(workflow_id).fetch_history_events():
        if event.HasField("activity_task_scheduled_event_attributes"):
            scheduled[event.event_id] = event.activity_task_scheduled_event_attributes.activity_type.name
        elif event.HasField("activity_task_started_event_attributes"):
            started = event.activity_task_started_event_attributes
            if scheduled.get(started.scheduled_event_id) == activity_type:
                attempt = max(attempt, started.attempt)
    return attempt


async def wait_for_stage(handle: WorkflowHandle, stage: Any, timeout: float = 60.0) -> None:
    import asyncio

    from workflows import TrialWorkflow

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while (current := await handle.query(TrialWorkflow.progress)) != stage:
        assert loop.time() < deadline, f"trial stuck in {current}, waiting for {stage}"
        await asyncio.sleep(0.1)


def markers(directory: Path) -> list[Path]:
    return sorted(directory.glob("invoked-*")) if directory.exists() else []


async def result_within(handle: WorkflowHandle, timeout: float = 90.0) -> Any:
    """The workflow's result; on timeout, fail with where the trial is stuck."""
    import asyncio

    from workflows import TrialWorkflow

    try:
        return await asyncio.wait_for(handle.result(), timeout)
    except asyncio.TimeoutError:
        description = await handle.describe()
        pending = [(p.activity_type.name, p.state, p.attempt, p.last_failure.message)
                   for p in description.raw_description.pending_activities]
        try:
            stage = await handle.query(TrialWorkflow.progress)
        except Exception as err:  # noqa: BLE001 - a suite, or no worker to answer
            stage = f"unknown ({err})"
        raise AssertionError(f"{handle.id} not done after {timeout}s: stage {stage}, pending {pending}") from None


def suite_tasks(directory: Path, count: int, template: str = "web-scaled-down") -> Path:
    """``count`` distinct small tasks (copies of a fixture task with their own ids) under ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    if not (directory / "app").exists():
        (directory / "app").symlink_to(TASKS / "app")
    text = (TASKS / template / "task.yaml").read_text()
    for i in range(count):
        task_dir = directory / f"{template}-{i:02d}"
        task_dir.mkdir(exist_ok=True)
        (task_dir / "task.yaml").write_text(text.replace(f"id: {template}", f"id: {template}-{i:02d}"))
    return directory


def suite_input(cluster: Any, artifacts: Path, tasks: Path, *, agent: str = "reference", trials: int = 1,
                concurrency: int = 4, suite_id: str | None = None, results_url: str | None = None,
                config: dict[str, Any] | None = None, **fields: Any):
    """A SuiteInput over the tasks under ``tasks`` (extra ``fields`` go to SuiteSpec, or SuiteInput if named so)."""
    import uuid

    from ontrial.models.suite import SuiteSpec
    from workflows import SuiteInput

    input_fields = {k: fields.pop(k) for k in list(fields) if k in SuiteInput.model_fields}
    kubeconfig = cluster.kubeconfig_path if cluster is not None else "/nonexistent/kubeconfig"
    spec = SuiteSpec(suite_id=suite_id or f"suite-{uuid.uuid4().hex[:6]}", task_files=[str(tasks)], trials=trials,
                     agent=AgentSpec(kind=agent, config=config or {}), concurrency=concurrency,
                     sandbox=SandboxSettings(kubeconfig=kubeconfig, settle_seconds=10, healthy_timeout_seconds=60),
                     artifacts_root=str(artifacts), **fields)
    input_fields.setdefault("trial_options", FAST)
    return SuiteInput(spec=spec, results_url=results_url or f"sqlite:///{artifacts}/results.db", **input_fields)


async def suite_run_lengths(client: Client, workflow_id: str) -> list[int]:
    """Events in each run of a (continued-as-new) workflow, first run first."""
    lengths, run_id = [], None
    while True:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        lengths.append(len(history.events))
        run_id = history.events[0].workflow_execution_started_event_attributes.continued_execution_run_id
        if not run_id:
            return lengths[::-1]


async def child_starts(client: Client, workflow_id: str) -> list[str]:
    """Ids of every child workflow any run of ``workflow_id`` started."""
    started, run_id = [], None
    while True:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        started += [e.child_workflow_execution_started_event_attributes.workflow_execution.workflow_id
                    for e in history.events if e.HasField("child_workflow_execution_started_event_attributes")]
        run_id = history.events[0].workflow_execution_started_event_attributes.continued_execution_run_id
        if not run_id:
            return started


def start_worker(address: str, queue: str, log: Path) -> subprocess.Popen:
    """``python -m worker`` serving ``queue`` with the test agents, no graceful shutdown (to be killed)."""
    env = {**os.environ, "TEMPORAL_ADDRESS": address, "ONTRIAL_TASK_QUEUE": queue,
           "ONTRIAL_AGENT_MODULES": "trial_agents", "ONTRIAL_GRACEFUL_SHUTDOWN_SECONDS": "0",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, "-m", "worker", "--log-format", "json"], cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)
