"""The subcommands behind ``ontrial``: parse-free functions taking the parsed arguments."""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta
from pathlib import Path

from ..errors import ConfigError
from ..models.suite import SuiteMode
from ..models.trial import SandboxSettings
from .exits import EXIT_BAD_INPUT, EXIT_OK, exit_code
from .run import RunOptions, run_suites
from .suite_view import gate_lines, stats_lines, verdict_table


async def run_command(args: argparse.Namespace) -> int:
    options = RunOptions(
        trials=args.trials, concurrency=args.concurrency, suite=args.suite, mode=SuiteMode(args.mode),
        baseline=args.baseline, results_url=args.results, temporal_address=args.temporal_address,
        temporal_namespace=args.temporal_namespace, task_queue=args.task_queue, kubeconfig=args.kubeconfig,
        sandbox_kind=args.sandbox_kind, artifacts=args.artifacts, run_id=args.run_id, worker=args.worker,
        agent_modules=args.agent_modules, model=args.model,
        decision_window=timedelta(minutes=args.decision_window_minutes), promote_on_pass=args.promote_on_pass,
        chunk_size=args.chunk_size, infra_error_threshold=args.infra_error_threshold)
    report = await run_suites(args.tasks, args.agents or ["reference"], options)
    records = [suite.record for suite in report.suites if suite.record is not None]
    if records:
        print(verdict_table(records))
        print()
        for record in records:
            print("\n".join(stats_lines(record)))
        print()
    for suite in report.suites:
        outcome = suite.outcome
        print("\n".join(gate_lines(outcome.run_id, outcome.gate, outcome.baseline_run_id)))
        if outcome.reports:
            print(f"  reports: {outcome.reports.get('md')} (also .json, .junit.xml)")
    print(f"run log: {report.directory / 'ontrial.log'}", file=sys.stderr)
    return exit_code([suite.outcome.gate.effective for suite in report.suites])


async def tasks_command(args: argparse.Namespace) -> int:
    return await (scan_command if args.tasks_command == "scan" else validate_command)(args)


async def scan_command(args: argparse.Namespace) -> int:
    """Print each contamination finding and each unloadable file; exit 2 if there is any."""
    from ..tasks.scan import scan_paths

    findings, problems = scan_paths(args.paths)
    for problem in problems:
        print(problem, file=sys.stderr)
    for finding in sorted(findings):
        print(finding)
    if problems or findings:
        print(f"{len(findings)} finding(s), {len(problems)} unreadable file problem(s)", file=sys.stderr)
        return EXIT_BAD_INPUT
    print("ok: nothing an agent can see gives the answer away")
    return EXIT_OK


async def validate_command(args: argparse.Namespace) -> int:
    from ..tasks import load_tasks
    from ..tasks.validate import TaskValidation, validate_schema, validate_tasks

    problems = validate_schema(args.paths)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return EXIT_BAD_INPUT
    tasks = [task for path in args.paths for task in load_tasks(path)]
    print(f"ok: {len(tasks)} task(s) valid")
    if not args.on_cluster:
        return EXIT_OK

    def report(result: TaskValidation) -> None:
        print(result.line(), flush=True)
        for problem in result.problems:
            print(problem, file=sys.stderr)

    with _cluster(args.kubeconfig, args.sandbox_kind) as settings:
        results = await validate_tasks(tasks, settings, reference_trials=args.reference_trials, noop=args.noop,
                                       concurrency=args.concurrency, on_result=report)
    return EXIT_OK if all(result.ok for result in results) else EXIT_BAD_INPUT


class _cluster:
    """The given cluster, or an embedded kubesim for the duration of the block."""

    def __init__(self, kubeconfig: str | None, kind: str | None):
        self.kubeconfig, self.kind, self._embedded = kubeconfig, kind, None

    def __enter__(self) -> SandboxSettings:
        if self.kubeconfig is None:
            import kubesim.embedded

            self._embedded = kubesim.embedded.start(time_scale=0)
            return SandboxSettings(kubeconfig=self._embedded.kubeconfig_path, kind="kubesim")
        if not Path(self.kubeconfig).is_file():
            raise ConfigError(f"--kubeconfig {self.kubeconfig}: no such file")
        return SandboxSettings(kubeconfig=self.kubeconfig, kind=self.kind or "kubernetes")  # type: ignore[arg-type]

    def __exit__(self, *exc: object) -> None:
        if self._embedded is not None:
            self._embedded.stop()


async def reap_command(args: argparse.Namespace) -> int:
    from ..sandbox.reaper import reap

    if not args.kubeconfig:
        raise ConfigError("--kubeconfig (or ONTRIAL_KUBECONFIG) is required")
    if not Path(args.kubeconfig).is_file():
        raise ConfigError(f"--kubeconfig {args.kubeconfig}: no such file")
    reaped = await reap(SandboxSettings(kubeconfig=args.kubeconfig, context=args.context))
    for namespace in reaped:
        print(namespace)
    print(f"reaped {len(reaped)} expired namespace(s)", file=sys.stderr)
    return EXIT_OK
