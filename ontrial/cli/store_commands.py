"""Commands over the results store: ``gate``, ``runs list``, ``report``, ``override``, ``baseline promote|show``.

They read (and for decisions, write) the store named by ``--results`` (default ``ONTRIAL_RESULTS_URL`` or
``sqlite:///.ontrial/results.db``). ``override`` first asks Temporal (``--temporal-address`` /
``TEMPORAL_ADDRESS``) whether the run's workflow is waiting for a decision and sends it the Update;
otherwise it records the override in the store (see ``worker.decisions``).
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime, timedelta, timezone

from ..errors import ConfigError
from ..models.suite import Override, OverrideRequest
from ..reports import to_junit, to_markdown
from ..results import ResultsStore
from ..suite.decisions import DecisionRefused, check_who_and_why
from ..suite.runs import RunNotFound, load_run, promote_run, regate
from .exits import EXIT_OK, exit_code
from .stores import open_store
from .suite_view import gate_lines, stats_lines, verdict_table
from .table import render_table

RELATIVE = re.compile(r"^(\d+)([mhdw])$")
UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str | None, now: datetime | None = None) -> datetime | None:
    """``7d`` / ``12h`` / ``30m`` / ``2w`` ago, or an ISO date/time (UTC unless it says otherwise)."""
    if not text:
        return None
    now = now or datetime.now(timezone.utc)
    found = RELATIVE.match(text.strip())
    if found:
        return now - timedelta(**{UNITS[found.group(2)]: int(found.group(1))})
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ConfigError(f"--since {text}: use e.g. 7d, 12h, 2026-11-01 or 2026-11-01T08:00") from None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _record(store: ResultsStore, run_id: str):  # noqa: ANN202 - RunRecord
    try:
        return load_run(store, run_id)
    except RunNotFound as err:
        raise ConfigError(str(err)) from err


async def gate_command(args: argparse.Namespace) -> int:
    """Recompute and print a stored run's gate (against --baseline, its recorded baseline, or the suite's)."""
    store = open_store(args.results)
    try:
        record, baseline, result = regate(store, args.run_id, args.baseline)
    except RunNotFound as err:
        raise ConfigError(str(err)) from err
    print(verdict_table([r for r in (baseline, record.model_copy(update={"gate": result})) if r is not None]))
    print()
    print("\n".join(stats_lines(record)))
    print("\n".join(gate_lines(record.run_id, result, baseline.run_id if baseline else None)))
    return exit_code([result.effective])


async def runs_command(args: argparse.Namespace) -> int:
    store = open_store(args.results)
    found = store.runs(suite=args.suite, agent=args.agent, model=args.model, since=parse_since(args.since),
                       limit=args.limit)
    rows = [[r.run_id, r.suite, r.agent, r.model or "-", f"{r.started_at:%Y-%m-%d %H:%M}" if r.started_at else "-",
             "-" if r.pass_hat_1 is None else f"{r.pass_hat_1:.1%}", r.gate or "-", "baseline" if r.is_baseline else ""]
            for r in found]
    print(render_table(["run", "suite", "agent", "model", "started (UTC)", "pass^1", "gate", ""], rows))
    print(f"{len(found)} run(s)", file=sys.stderr)
    return EXIT_OK


async def report_command(args: argparse.Namespace) -> int:
    record = _record(open_store(args.results), args.run_id)
    text = {"json": record.to_json, "md": lambda: to_markdown(record), "junit": lambda: to_junit(record)}[args.format]()
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return EXIT_OK


async def override_command(args: argparse.Namespace) -> int:
    from worker.decisions import override

    from .stack import connect

    store = open_store(args.results)
    client = await connect(args.temporal_address, args.temporal_namespace) if args.temporal_address else None
    request = OverrideRequest(approver=args.by, reason=args.reason, promote=args.promote)
    try:
        decided = await override(client, store, args.run_id, request)
    except (DecisionRefused, RunNotFound) as err:
        raise ConfigError(str(err)) from err
    outcome = decided.outcome
    where = "sent to the waiting suite workflow" if decided.via == "update" else "recorded in the results store"
    print("\n".join(gate_lines(outcome.run_id, outcome.gate, outcome.baseline_run_id)))
    print(f"override {where}" + ("; the run is now its suite's baseline" if outcome.promoted else ""),
          file=sys.stderr)
    return EXIT_OK


async def baseline_command(args: argparse.Namespace) -> int:
    store = open_store(args.results)
    if args.baseline_command == "show":
        record = store.baseline(args.suite)
        if record is None:
            raise ConfigError(f"suite {args.suite!r} has no baseline (promote a run with `ontrial baseline promote`)")
        print(f"{record.run_id} ({record.report.agent.label}, pass^1 "
              f"{'-' if record.report.pass_hat_1.estimate is None else f'{record.report.pass_hat_1.estimate:.1%}'})")
        return EXIT_OK
    try:
        check_who_and_why(args.by, args.reason)
        promote_run(store, args.run_id, Override(approver=args.by.strip(), reason=args.reason.strip(),
                                                 at=datetime.now(timezone.utc)))
    except (DecisionRefused, RunNotFound) as err:
        raise ConfigError(str(err)) from err
    record = _record(store, args.run_id)
    print(f"{record.run_id} is now the baseline of suite {record.suite_name!r}")
    return EXIT_OK
