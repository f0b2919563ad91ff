"""``ontrial run``: put agents on trial on a set of tasks, k trials each, and gate each against its baseline.

One SuiteWorkflow per agent (run id ``<run id>``, or ``<run id>-<agent>`` when comparing agents). The
first agent is gated against ``--baseline`` or the suite's stored baseline; each further agent against
the first agent's run of this invocation. An in-process worker serves the suites unless ``worker=False``
(then ``python -m worker`` processes must serve ``task_queue``). The first Ctrl-C cancels the suites:
running trials tear their sandboxes down and the runs still finish (inconclusive); a second Ctrl-C
leaves at once (the reaper collects leftovers).
"""

from __future__ import annotations

import asyncio
import importlib
import secrets
import signal
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from temporalio.client import WorkflowFailureError, WorkflowHandle
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from ..agents import agent_kinds
from ..errors import ConfigError, InfraError
from ..logging import add_log_file
from ..models.suite import SuiteMode, SuiteOutcome, SuiteSpec
from ..models.trial import AgentSpec, SandboxSettings
from ..reports import RunRecord
from ..results import ResultsStore
from ..suite.plan import load_suite_tasks
from .progress import ProgressLine
from .stores import DEFAULT_RESULTS_URL, absolute_store_url
from .stack import SandboxKind, open_stack

POLL_SECONDS = 0.5
WORKER_GRACE = timedelta(seconds=5)  # by the time the worker stops, the trials are over (or abandoned)


@dataclass(frozen=True)
class SuiteRun:
    outcome: SuiteOutcome
    record: RunRecord | None
    """The saved run (per-trial verdicts, statistics); None if the store could not be read back."""


@dataclass(frozen=True)
class RunReport:
    run_id: str
    suites: list[SuiteRun] = field(default_factory=list)
    directory: Path = Path(".")
    """Where the run keeps its log, its reports and the local stack's files."""


def new_run_id() -> str:
    return f"run-{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def import_agent_modules(modules: Sequence[str]) -> None:
    """Import modules that register extra agent kinds (``ontrial.agents.register_agent``)."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as err:
            raise ConfigError(f"--agent-module {name}: {err}") from err


def agent_specs(agents: Sequence[str], model: str | None = None) -> list[AgentSpec]:
    if not agents:
        raise ConfigError("--agent: give at least one agent kind")
    if len(set(agents)) != len(agents):
        raise ConfigError("--agent: each agent may be given once")
    unknown = [kind for kind in agents if kind not in agent_kinds() and not kind.startswith("python:")]
    if unknown:
        raise ConfigError(f"--agent {unknown[0]}: unknown agent kind (known: {', '.join(agent_kinds())})")
    return [AgentSpec(kind=kind, model=model) for kind in agents]


def suite_name_for(tasks: str | Sequence[str]) -> str:
    """The tasks directory's name (a file's directory); several paths name the suite after them all."""
    paths = [tasks] if isinstance(tasks, str) else list(tasks)
    names = [(p.parent.name if p.is_file() else p.name) for p in (Path(t).resolve() for t in paths)]
    return names[0] if len(names) == 1 else "+".join(names)


@dataclass(frozen=True)
class RunOptions:
    """``ontrial run``'s settings beyond the tasks and agents."""

    trials: int = 1
    concurrency: int = 4
    suite: str | None = None
    mode: SuiteMode = SuiteMode.regression
    baseline: str | None = None
    results_url: str = DEFAULT_RESULTS_URL
    temporal_address: str | None = None
    temporal_namespace: str = "default"
    task_queue: str = "ontrial"
    kubeconfig: str | None = None
    sandbox_kind: SandboxKind | None = None
    artifacts: str = ".artifacts"
    run_id: str | None = None
    worker: bool = True
    agent_modules: Sequence[str] = ()
    model: str | None = None
    decision_window: timedelta = timedelta(0)
    promote_on_pass: bool = False
    chunk_size: int = 200
    infra_error_threshold: float = 0.1


async def run_suites(tasks: str | Sequence[str], agents: Sequence[str], options: RunOptions,
                     progress: ProgressLine | None = None) -> RunReport:
    """Run every (agent, task, trial) through Temporal; return each suite's verdict and saved run."""
    from workflows import SuiteInput, SuiteWorkflow  # the Temporal side, loaded on use
    from workflows.suite_models import MAX_CONCURRENCY

    if options.trials < 1 or not 1 <= options.concurrency <= MAX_CONCURRENCY:
        raise ConfigError(f"--trials must be at least 1 and --concurrency between 1 and {MAX_CONCURRENCY}")
    import_agent_modules(options.agent_modules)
    specs = agent_specs(agents, options.model)
    paths = [tasks] if isinstance(tasks, str) else list(tasks)
    task_files = [str(Path(t.source_path).resolve()) for t in load_suite_tasks(paths)]  # fail fast, exit 2
    run_id = options.run_id or new_run_id()
    results_url = absolute_store_url(options.results_url)
    artifacts_root = Path(options.artifacts).resolve()
    scratch = artifacts_root / "runs" / run_id
    scratch.mkdir(parents=True, exist_ok=True)
    add_log_file(scratch / "ontrial.log")
    progress = progress or ProgressLine()
    name = options.suite or suite_name_for(tasks)
    async with AsyncExitStack() as exits:
        stack = await exits.enter_async_context(open_stack(
            temporal_address=options.temporal_address, temporal_namespace=options.temporal_namespace,
            kubeconfig=options.kubeconfig, sandbox_kind=options.sandbox_kind, scratch=scratch))
        if options.worker:
            from worker.app import build_worker

            await exits.enter_async_context(build_worker(stack.client, options.task_queue,
                                                         graceful_shutdown=WORKER_GRACE))
        sandbox = SandboxSettings(kubeconfig=stack.kubeconfig, kind=stack.sandbox_kind)
        handles: list[WorkflowHandle] = []
        first: str | None = None
        for agent in specs:
            suite_id = run_id if len(specs) == 1 else f"{run_id}-{agent.label}"
            spec = SuiteSpec(suite_id=suite_id, name=name, task_files=task_files, trials=options.trials, agent=agent,
                             sandbox=sandbox, artifacts_root=str(artifacts_root), concurrency=options.concurrency,
                             mode=options.mode, baseline_run_id=first or options.baseline,
                             infra_error_threshold=options.infra_error_threshold, chunk_size=options.chunk_size)
            # a run waiting for a decision needs workers that outlive this command
            window = options.decision_window if not (stack.local_temporal or options.worker) else timedelta(0)
            suite = SuiteInput(spec=spec, results_url=results_url, decision_window=window,
                               promote_on_pass=options.promote_on_pass)
            try:
                handles.append(await stack.client.start_workflow(
                    SuiteWorkflow.run, suite, id=suite_id, task_queue=options.task_queue,
                    id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE))
            except WorkflowAlreadyStartedError as err:
                raise ConfigError(f"--run-id {run_id}: run {suite_id} already exists") from err
            first = first or suite_id
        outcomes = await follow(handles, progress)
    store = ResultsStore(results_url)
    return RunReport(run_id, [SuiteRun(o, store.get(o.run_id)) for o in outcomes], scratch)


async def follow(handles: list[WorkflowHandle], progress: ProgressLine) -> list[SuiteOutcome]:
    """Show progress until every suite has a verdict (finished, or waiting for a decision on a failed gate).

    Ctrl-C cancels the suites (once); a second Ctrl-C leaves at once."""
    from workflows import SuiteWorkflow
    from workflows.suite_models import SuiteProgress, SuiteStatus

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

    results = [asyncio.ensure_future(handle.result()) for handle in handles]
    verdicts: dict[int, SuiteOutcome] = {}
    states: dict[int, SuiteProgress] = {}
    loop.add_signal_handler(signal.SIGINT, on_interrupt)
    try:
        while len(verdicts) < len(handles):
            for i, handle in enumerate(handles):
                if i in verdicts:
                    continue
                if results[i].done():
                    verdicts[i] = _result(results[i])
                    states[i] = _final(verdicts[i])
                    continue
                try:
                    states[i] = state = await handle.query(SuiteWorkflow.progress)
                except Exception:  # noqa: BLE001 - a query racing the suite's completion; the next poll will do
                    continue
                if state.status is SuiteStatus.awaiting_decision:
                    outcome = await handle.query(SuiteWorkflow.outcome)
                    if outcome is not None:
                        verdicts[i] = outcome
            if states:
                _show(progress, list(states.values()))
            pending = [r for i, r in enumerate(results) if i not in verdicts]
            if pending:
                await asyncio.wait(pending, timeout=POLL_SECONDS)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        for result in results:
            result.cancel()
        progress.close()
    return [verdicts[i] for i in range(len(handles))]


def _result(done: asyncio.Future[SuiteOutcome]) -> SuiteOutcome:
    try:
        return done.result()
    except WorkflowFailureError as err:
        raise InfraError(f"a suite workflow failed: {err.cause or err}") from err


def _final(outcome: SuiteOutcome):  # noqa: ANN202 - SuiteProgress
    from workflows.suite_models import SuiteProgress, SuiteStatus

    return SuiteProgress(status=SuiteStatus.done, total=outcome.trials, done=outcome.trials,
                         by_outcome=dict(outcome.outcome_counts))


def _show(progress: ProgressLine, states: list) -> None:
    by_outcome: dict[str, int] = {}
    for state in states:
        for name, count in state.by_outcome.items():
            by_outcome[name] = by_outcome.get(name, 0) + count
    busy = sorted({s.status.value for s in states if s.status.value not in ("running", "done")})
    progress.show(total=sum(s.total for s in states), done=sum(s.done for s in states),
                  running=sum(s.running for s in states), by_outcome=by_outcome, status=", ".join(busy))
