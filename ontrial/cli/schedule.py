"""``ontrial schedule nightly``: a Temporal Schedule that starts a SuiteWorkflow on a cron expression.

Paths (tasks, kubeconfig, artifacts, a SQLite results store) are taken as the *workers* see them; the
tasks are re-read at each run (the plan records the task-set hash each time). Re-running the command
updates the schedule. Each run gates against the suite's stored baseline; promote one first
(``ontrial baseline promote``) or let passing runs become the baseline with ``--promote-on-pass``.
"""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta
from pathlib import Path

from ..errors import ConfigError
from ..models.suite import SuiteMode, SuiteSpec
from ..models.trial import AgentSpec, SandboxSettings
from ..suite.plan import load_suite_tasks
from .exits import EXIT_OK
from .run import agent_specs, import_agent_modules, suite_name_for
from .stores import absolute_store_url

CRON_FIELDS = 5


def _cron(text: str) -> str:
    fields = text.split()
    if len(fields) != CRON_FIELDS and not text.startswith("@"):
        raise ConfigError(f"--cron {text!r}: want 5 fields (minute hour day-of-month month day-of-week) or @daily")
    return text


async def schedule_command(args: argparse.Namespace) -> int:
    from temporalio.client import ScheduleDescription
    from worker.schedules import ensure_schedule, suite_schedule
    from workflows import SuiteInput

    from .stack import connect

    cron = _cron(args.cron)
    if not args.temporal_address:
        raise ConfigError("--temporal-address (or TEMPORAL_ADDRESS) is required: a schedule lives on a server")
    if not args.kubeconfig:
        raise ConfigError("--kubeconfig (or ONTRIAL_KUBECONFIG): the sandbox cluster, as the workers see it")
    import_agent_modules(args.agent_modules)
    [agent] = agent_specs([args.agent], args.model)
    tasks = str(Path(args.tasks).resolve())
    if Path(tasks).exists():
        load_suite_tasks([tasks])  # fail now on a broken task file rather than at 2 a.m.
    else:
        print(f"note: {tasks} is not readable here; the workers must see it", file=sys.stderr)
    name = args.suite or suite_name_for(tasks)
    schedule_id = args.schedule_id or f"nightly-{name}"
    spec = SuiteSpec(suite_id=schedule_id, name=name, task_files=[tasks], trials=args.trials,
                     agent=AgentSpec(kind=agent.kind, model=agent.model), concurrency=args.concurrency,
                     sandbox=SandboxSettings(kubeconfig=str(Path(args.kubeconfig).resolve()),
                                             kind=args.sandbox_kind or "kubernetes"),  # type: ignore[arg-type]
                     artifacts_root=str(Path(args.artifacts).resolve()), mode=SuiteMode(args.mode))
    suite = SuiteInput(spec=spec, results_url=absolute_store_url(args.results),
                       decision_window=timedelta(minutes=args.decision_window_minutes),
                       promote_on_pass=args.promote_on_pass)
    client = await connect(args.temporal_address, args.temporal_namespace)
    created = await ensure_schedule(client, schedule_id, suite_schedule(
        suite, cron, args.task_queue, workflow_id=schedule_id, time_zone=args.time_zone))
    handle = client.get_schedule_handle(schedule_id)
    if args.trigger:
        await handle.trigger()
    described: ScheduleDescription = await handle.describe()
    upcoming = ", ".join(f"{t:%Y-%m-%d %H:%M %Z}" for t in described.info.next_action_times[:3])
    print(f"{'created' if created else 'updated'} schedule {schedule_id}: suite {name!r}, agent {agent.label}, "
          f"{args.trials} trial(s) per task, cron {cron!r} ({args.time_zone})")
    print(f"next runs: {upcoming or '-'}")
    return EXIT_OK
