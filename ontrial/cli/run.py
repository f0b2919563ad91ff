"""``ontrial run``: put agents on trial on a set of tasks, k trials each, and print the verdicts.

One RunTrialsWorkflow per agent (suite id ``<run id>`` or ``<run id>-<agent>`` when comparing),
each fanning out to TrialWorkflows. An in-process worker serves them unless ``worker=False``
(then workers started with ``python -m worker`` must serve ``task_queue``). The first Ctrl-C
cancels the suites, waits for the trials to tear their sandboxes down and still prints what
finished; a second Ctrl-C leaves at once (the reaper collects leftovers).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import secrets
import signal
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from temporalio.client import WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import WorkflowAlreadyStartedError

from ..agents import agent_kinds
from ..errors import ConfigError, InfraError
from ..logging import add_log_file
from ..models.result import TrialResult
from ..models.trial import AgentSpec, SandboxSettings
from ..tasks import load_tasks
from .progress import ProgressLine
from .stack import SandboxKind, open_stack

POLL_SECONDS = 0.5
WORKER_GRACE = timedelta(seconds=5)  # by the time the worker stops, the trials are over (or abandoned)


@dataclass(frozen=True)
class RunReport:
    run_id: str
    results: list[TrialResult]
    directory: Path
    """Where the run keeps results.json, its log and the local stack's files."""


def new_run_id() -> str:
    return f"run-{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def import_agent_modules(modules: Sequence[str]) -> None:
    """Import modules that register extra agent kinds (``ontrial.agents.register_agent``)."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as err:
            raise ConfigError(f"--agent-module {name}: {err}") from err


def agent_specs(agents: Sequence[str]) -> list[AgentSpec]:
    if not agents:
        raise ConfigError("--agent: give at least one agent kind")
    if len(set(agents)) != len(agents):
        raise ConfigError("--agent: each agent may be given once")
    unknown = [kind for kind in agents if kind not in agent_kinds()]
    if unknown:
        raise ConfigError(f"--agent {unknown[0]}: unknown agent kind (known: {', '.join(agent_kinds())})")
    return [AgentSpec(kind=kind) for kind in agents]


async def run_trials(
    tasks: str,
    agents: Sequence[str],
    trials: int = 1,
    concurrency: int = 4,
    *,
    temporal_address: str | None = None,
    temporal_namespace: str = "default",
    task_queue: str = "ontrial",
    kubeconfig: str | None = None,
    sandbox_kind: SandboxKind | None = None,
    artifacts: str = ".artifacts",
    run_id: str | None = None,
    worker: bool = True,
    agent_modules: Sequence[str] = (),
    progress: ProgressLine | None = None,
) -> RunReport:
    """Run every (agent, task, trial) through Temporal and return the verdicts."""
    from workflows import RunTrialsInput, RunTrialsWorkflow, TaskRef  # Temporal side, loaded on use

    if trials < 1 or concurrency < 1:
        raise ConfigError("--trials and --concurrency must be at least 1")
    import_agent_modules(agent_modules)
    specs = agent_specs(agents)
    loaded = load_tasks(tasks)
    run_id = run_id or new_run_id()
    artifacts_root = Path(artifacts).resolve()
    scratch = artifacts_root / "runs" / run_id
    scratch.mkdir(parents=True, exist_ok=True)
    add_log_file(scratch / "ontrial.log")
    progress = progress or ProgressLine()
    async with AsyncExitStack() as exits:
        stack = await exits.enter_async_context(open_stack(
            temporal_address=temporal_address, temporal_namespace=temporal_namespace, kubeconfig=kubeconfig,
            sandbox_kind=sandbox_kind, scratch=scratch))
        if worker:
            from worker.app import build_worker

            await exits.enter_async_context(build_worker(stack.client, task_queue, graceful_shutdown=WORKER_GRACE))
        sandbox = SandboxSettings(kubeconfig=stack.kubeconfig, kind=stack.sandbox_kind)
        task_refs = [TaskRef(task_id=t.id, task_file=str(Path(t.source_path).resolve())) for t in loaded]
        handles: list[WorkflowHandle] = []
        for agent in specs:
            suite_id = run_id if len(specs) == 1 else f"{run_id}-{agent.label}"
            suite = RunTrialsInput(suite_id=suite_id, tasks=task_refs, agent=agent, trials=trials,
                                   concurrency=concurrency, sandbox=sandbox, artifacts_root=str(artifacts_root))
            try:
                handles.append(await stack.client.start_workflow(
                    RunTrialsWorkflow.run, suite, id=suite_id, task_queue=task_queue))
            except WorkflowAlreadyStartedError as err:
                raise ConfigError(f"--run-id {run_id}: suite {suite_id} is already running") from err
        results = await _follow(handles, progress)
    (scratch / "results.json").write_text(json.dumps([r.model_dump(mode="json") for r in results], indent=2))
    return RunReport(run_id, results, scratch)


async def _follow(handles: list[WorkflowHandle], progress: ProgressLine) -> list[TrialResult]:
    """Show progress until every suite has returned; Ctrl-C cancels them (once)."""
    from workflows import RunTrialsWorkflow, SuiteProgress

    loop = asyncio.get_running_loop()
    interrupted = asyncio.Event()
    main = asyncio.current_task()

    def on_interrupt() -> None:
        if interrupted.is_set():
            assert main is not None
            main.cancel()
            return
        interrupted.set()
        progress.note("cancelling: waiting for running trials to tear down (Ctrl-C again to leave now)")
        for handle in handles:
            loop.create_task(handle.cancel())

    loop.add_signal_handler(signal.SIGINT, on_interrupt)
    try:
        outcomes = asyncio.ensure_future(asyncio.gather(*(handle.result() for handle in handles)))
        while not outcomes.done():
            states: list[SuiteProgress] = []
            for handle in handles:
                try:
                    states.append(await handle.query(RunTrialsWorkflow.progress))
                except Exception:  # noqa: BLE001 - a query racing a suite's completion; next poll will do
                    pass
            if states:
                by_outcome: dict[str, int] = {}
                for state in states:
                    for name, count in state.by_outcome.items():
                        by_outcome[name] = by_outcome.get(name, 0) + count
                progress.show(total=sum(s.total for s in states), done=sum(s.done for s in states),
                              running=sum(s.running for s in states), by_outcome=by_outcome)
            await asyncio.wait([outcomes], timeout=POLL_SECONDS)
        try:
            suites = outcomes.result()
        except WorkflowFailureError as err:
            raise InfraError(f"a suite workflow failed: {err.cause or err}") from err
        _show_final(progress, [result for suite in suites for result in suite.results])
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        progress.close()
    return [result for suite in suites for result in suite.results]


def _show_final(progress: ProgressLine, results: list[TrialResult]) -> None:
    by_outcome: dict[str, int] = {}
    for result in results:
        by_outcome[result.outcome.outcome.value] = by_outcome.get(result.outcome.outcome.value, 0) + 1
    progress.show(total=len(results), done=len(results), running=0, by_outcome=by_outcome)
