"""The subcommands behind ``ontrial``: parse-free functions taking the parsed arguments."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from ..errors import ConfigError
from ..models.result import TrialResult
from ..models.trial import SandboxSettings
from .exits import EXIT_BAD_INPUT, EXIT_INFRA, EXIT_OK
from .run import run_trials
from .table import tally, verdict_table


async def run_command(args: argparse.Namespace) -> int:
    report = await run_trials(
        args.tasks, args.agents or ["reference"], args.trials, args.concurrency,
        temporal_address=args.temporal_address, temporal_namespace=args.temporal_namespace,
        task_queue=args.task_queue, kubeconfig=args.kubeconfig, sandbox_kind=args.sandbox_kind,
        artifacts=args.artifacts, run_id=args.run_id, worker=args.worker, agent_modules=args.agent_modules,
    )
    print(verdict_table(report.results))
    print()
    for line in summary_lines(report.results):
        print(line)
    print(f"results and logs: {report.directory}", file=sys.stderr)
    return EXIT_OK if all(result.outcome.counts for result in report.results) else EXIT_INFRA


def summary_lines(results: list[TrialResult]) -> list[str]:
    lines = []
    for agent in sorted({r.agent.label for r in results}):
        mine = [r for r in results if r.agent.label == agent]
        counted = [r for r in mine if r.outcome.counts]
        passed = sum(r.outcome.passed for r in counted)
        outcomes = Counter(r.outcome.outcome.value for r in mine)
        lines.append(f"{agent}: passed {passed}/{len(counted)} counted trials ({tally(dict(outcomes))})")
    return lines


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
