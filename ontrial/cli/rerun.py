"""``ontrial rerun`` and ``ontrial regrade``: a second look at a stored run's trials, as a new derived run.

*Re-run* starts a new TrialWorkflow per selected trial with the same spec (task file, trial index,
agent), on the stack given now (the run's own cluster may be gone), under a new run id
``<run>-rerun-<stamp>``. Its results never change the original run's numbers (re-running until a trial
passes would bias them); they are saved as a separate report-only run in suite ``<suite>:rerun``.

*Re-grade* runs RegradeWorkflow, which calls only the re-grade activity on the stored evidence
(diagnosis, audit log, recorded check results) with the current task files and grader — no sandbox, no
agent. It can fix a grading mistake; it cannot re-evaluate outcome checks (the sandbox is gone), see
``ontrial.suite.regrade``. The re-graded run is saved as ``<run>-regrade-<stamp>`` in the same suite and
gated like the original.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
from contextlib import AsyncExitStack
from datetime import datetime, timedelta, timezone
from pathlib import Path

from temporalio.client import WorkflowFailureError

from ..errors import ConfigError, InfraError
from ..models.suite import SuiteMode
from ..models.trial import SandboxSettings, TrialSpec
from ..reports import RunRecord
from ..results import ResultsStore
from ..suite.gate import gate
from ..suite.plan import load_suite_tasks
from ..suite.runs import RunNotFound, load_run, regate, write_reports
from ..suite.summary import TaskMeta, summarize
from .exits import EXIT_INCONCLUSIVE, EXIT_OK, exit_code
from .stores import absolute_store_url, open_store
from .stack import open_stack, open_temporal
from .suite_view import gate_lines
from .table import outcome_label, render_table

WORKER_GRACE = timedelta(seconds=5)


def _stamp() -> str:
    return f"{datetime.now(timezone.utc):%Y%m%d%H%M%S}-{secrets.token_hex(2)}"


def _load(store: ResultsStore, run_id: str) -> RunRecord:
    try:
        record = load_run(store, run_id)
    except RunNotFound as err:
        raise ConfigError(str(err)) from err
    if record.spec is None or record.plan is None:
        raise ConfigError(f"run {run_id} was saved without its spec and plan: it cannot be re-run or re-graded")
    return record


def _selected(record: RunRecord, trial_ids: list[str], default_failed: bool) -> list:
    by_id = {t.trial_id: t for t in record.trials}
    unknown = [t for t in trial_ids if t not in by_id]
    if unknown:
        raise ConfigError(f"--trial {unknown[0]}: run {record.run_id} has no such trial")
    if trial_ids:
        return [by_id[t] for t in trial_ids]
    chosen = [t for t in record.trials if not t.outcome.passed] if default_failed else list(record.trials)
    if not chosen:
        raise ConfigError(f"run {record.run_id}: no trial to select (every trial passed; name one with --trial)")
    return chosen


def _meta(record: RunRecord) -> dict[str, TaskMeta]:
    assert record.plan is not None
    return {t.task_id: TaskMeta(category=t.category, slices=dict(t.slices)) for t in record.plan.tasks}


def _renamed(trial, run_id: str):  # noqa: ANN001, ANN202 - TrialResult
    """The trial as a trial of the derived run (trial ids are unique across runs)."""
    return trial.model_copy(update={"suite_id": run_id, "trial_id": f"{run_id}/{trial.task_id}/{trial.trial_index}"})


async def rerun_command(args: argparse.Namespace) -> int:
    from worker.app import build_worker
    from workflows import TrialInput, TrialWorkflow

    store = open_store(args.results)
    record = _load(store, args.run_id)
    assert record.spec is not None and record.plan is not None
    trials = _selected(record, args.trial_ids, default_failed=True)
    files = {t.task_id: t.task_file for t in record.plan.tasks}
    new_id = f"{record.run_id}-rerun-{_stamp()}"
    artifacts = str(Path(args.artifacts).resolve()) if args.artifacts else record.spec.artifacts_root
    scratch = Path(artifacts) / "runs" / new_id
    scratch.mkdir(parents=True, exist_ok=True)
    async with AsyncExitStack() as exits:
        stack = await exits.enter_async_context(open_stack(
            temporal_address=args.temporal_address, temporal_namespace=args.temporal_namespace,
            kubeconfig=args.kubeconfig, sandbox_kind=args.sandbox_kind, scratch=scratch))
        if args.worker:
            await exits.enter_async_context(build_worker(stack.client, args.task_queue, graceful_shutdown=WORKER_GRACE))
        sandbox = SandboxSettings(kubeconfig=stack.kubeconfig, kind=stack.sandbox_kind)
        specs = [TrialSpec(suite_id=new_id, task_id=t.task_id, trial_index=t.trial_index, task_file=files[t.task_id],
                           agent=record.spec.agent, sandbox=sandbox, artifacts_root=artifacts) for t in trials]
        print(f"re-running {len(specs)} trial(s) of {record.run_id} as {new_id}", file=sys.stderr)
        try:
            results = await asyncio.gather(*(stack.client.execute_workflow(
                TrialWorkflow.run, TrialInput(spec=spec), id=spec.trial_id, task_queue=args.task_queue)
                for spec in specs))
        except WorkflowFailureError as err:
            raise InfraError(f"a re-run trial failed: {err.cause or err}") from err
    report = summarize(new_id, record.spec.agent, max(1, len({t.trial_index for t in trials})), results, _meta(record))
    rerun = RunRecord(run_id=new_id, suite_name=f"{record.suite_name}:rerun", report=report,
                      gate=gate(report, None, SuiteMode.capability), versions=record.versions, trials=list(results),
                      mode=SuiteMode.capability, spec=record.spec.model_copy(update={"suite_id": new_id}),
                      plan=record.plan, derived_from=record.run_id, started_at=min(
                          (r.started_at for r in results if r.started_at), default=None),
                      finished_at=max((r.finished_at for r in results if r.finished_at), default=None))
    store.record_trials(new_id, list(results))
    store.save(rerun)
    write_reports(rerun, scratch)
    before = {(t.task_id, t.trial_index): t.outcome.outcome.value for t in trials}
    rows = [[r.task_id, str(r.trial_index), before[(r.task_id, r.trial_index)], outcome_label(r),
             " ".join(r.outcome.reason.split())[:70]] for r in results]
    print(render_table(["task", "trial", "before", "re-run", "reason"], rows))
    print(f"saved as run {new_id} (suite {rerun.suite_name!r}, report only)", file=sys.stderr)
    return EXIT_OK if all(r.outcome.counts for r in results) else EXIT_INCONCLUSIVE


async def regrade_command(args: argparse.Namespace) -> int:
    from worker.app import build_worker
    from workflows import RegradeWorkflow

    from ..suite.regrade import RegradeInput, RegradeRequest

    store = open_store(args.results)
    record = _load(store, args.run_id)
    assert record.spec is not None and record.plan is not None
    trials = _selected(record, args.trial_ids, default_failed=False)
    files = {t.task_id: t.task_file for t in record.plan.tasks}
    if args.tasks:
        files.update({t.id: str(Path(str(t.source_path)).resolve()) for t in load_suite_tasks([args.tasks])})
    new_id = f"{record.run_id}-regrade-{_stamp()}"
    scratch = Path(record.spec.artifacts_root) / "runs" / new_id
    scratch.mkdir(parents=True, exist_ok=True)
    url = absolute_store_url(args.results)
    requests = [RegradeRequest(results_url=url, run_id=record.run_id, trial_id=t.trial_id, task_file=files[t.task_id])
                for t in trials]
    async with open_temporal(temporal_address=args.temporal_address, temporal_namespace=args.temporal_namespace,
                             scratch=scratch) as client:
        async with AsyncExitStack() as exits:
            if args.worker:
                await exits.enter_async_context(build_worker(client, args.task_queue, graceful_shutdown=WORKER_GRACE))
            try:
                regraded = await client.execute_workflow(RegradeWorkflow.run, RegradeInput(requests=requests),
                                                         id=new_id, task_queue=args.task_queue)
            except WorkflowFailureError as err:
                raise InfraError(f"the re-grade failed: {err.cause or err}") from err
    changed = {r.trial_id: r for r in regraded if r.regraded}
    new_trials = [_renamed(t.model_copy(update={"outcome": changed[t.trial_id].after,
                                                "grade": changed[t.trial_id].grade}) if t.trial_id in changed else t,
                           new_id) for t in record.trials]
    report = summarize(new_id, record.spec.agent, record.spec.trials, new_trials, _meta(record))
    derived = record.model_copy(update={"run_id": new_id, "report": report, "trials": new_trials, "gate": None,
                                        "derived_from": record.run_id,
                                        "spec": record.spec.model_copy(update={"suite_id": new_id})})
    store.save(derived)
    _, baseline, result = regate(store, new_id, record.baseline_run_id)
    derived = derived.model_copy(update={"gate": result, "baseline_run_id": baseline.run_id if baseline else None})
    store.save(derived)
    write_reports(derived, scratch)
    rows = [[r.trial_id, r.before.outcome.value, r.after.outcome.value,
             (r.note or r.after.reason)[:80]] for r in regraded]
    print(render_table(["trial", "before", "re-graded", "note"], rows))
    print("\n".join(gate_lines(new_id, result, derived.baseline_run_id)))
    print(f"saved as run {new_id}", file=sys.stderr)
    return exit_code([result.effective])
