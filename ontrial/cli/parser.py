"""The ``ontrial`` argument parser (exit codes: ``exits``; where each command lives: ``main``)."""

from __future__ import annotations

import argparse
import os

from .stores import DEFAULT_RESULTS_URL

ENV = os.environ.get
EXIT_CODES = "exit codes: 0 gate passed (or report only), 1 gate failed, 2 bad input, 3 inconclusive"


def _results(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", default=ENV("ONTRIAL_RESULTS_URL", DEFAULT_RESULTS_URL), metavar="URL",
                        help="results store: a SQLAlchemy URL (default %(default)s)")


def _temporal(parser: argparse.ArgumentParser, *, required_help: str = "") -> None:
    parser.add_argument("--temporal-address", default=ENV("TEMPORAL_ADDRESS"),
                        help=required_help or "Temporal frontend host:port (default: start a local dev server)")
    parser.add_argument("--temporal-namespace", default=ENV("TEMPORAL_NAMESPACE", "default"))
    parser.add_argument("--task-queue", default=ENV("ONTRIAL_TASK_QUEUE", "ontrial"))


def _cluster(parser: argparse.ArgumentParser, default_help: str) -> None:
    parser.add_argument("--kubeconfig", default=ENV("ONTRIAL_KUBECONFIG"), help=default_help)
    parser.add_argument("--sandbox-kind", choices=["kubesim", "kubernetes"], default=ENV("ONTRIAL_SANDBOX_KIND"),
                        help="what --kubeconfig points at: kubesim (its clock is advanced) or kubernetes (waited on; "
                             "the default with --kubeconfig)")


def _worker(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-worker", dest="worker", action="store_false",
                        help="do not run an in-process worker (`python -m worker` processes serve the queue)")


def _suite(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trials", type=int, default=1, help="trials per task (k)")
    parser.add_argument("--concurrency", type=int, default=4, help="trials running at once per suite")
    parser.add_argument("--suite", help="suite name: the baseline lineage (default: the tasks directory's name)")
    parser.add_argument("--mode", choices=["regression", "capability"], default="regression",
                        help="regression suites gate each task on its worst trial; capability suites only report")
    parser.add_argument("--model", help="the model the agent uses (recorded; passed to model-backed agents)")
    parser.add_argument("--artifacts", default=ENV("ONTRIAL_ARTIFACTS", ".artifacts"),
                        help="artifact directory (transcripts, audit logs, snapshots, reports, run logs)")
    parser.add_argument("--decision-window-minutes", type=float, default=0.0,
                        help="with --temporal-address and external workers (--no-worker): a failed gate waits "
                             "this long for `ontrial override`")
    parser.add_argument("--promote-on-pass", action="store_true", help="a run whose gate passes becomes the baseline")
    parser.add_argument("--agent-module", dest="agent_modules", action="append", default=[], metavar="MODULE",
                        help="import MODULE first (it registers extra agent kinds)")
    _results(parser)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ontrial", description="Put AI SRE agents on trial.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details to stderr")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run k trials of each task per agent; print verdicts, statistics, gate",
                              epilog=EXIT_CODES)
    run.add_argument("tasks", nargs="+", help="task.yaml files or directories of tasks")
    run.add_argument("--agent", dest="agents", action="append", default=[], metavar="KIND",
                     help="agent kind to put on trial; a second --agent is gated against the first "
                          "(default: reference)")
    run.add_argument("--baseline", metavar="RUN_ID", help="gate the (first) agent against this run "
                                                          "(default: the suite's stored baseline)")
    run.add_argument("--run-id", help="run id (default: run-<utc time>-<random>; -<agent> is added per agent)")
    run.add_argument("--chunk-size", type=int, default=200, help="trials per workflow run before continue-as-new")
    run.add_argument("--infra-error-threshold", type=float, default=0.1,
                     help="an infra error rate above this makes the gate inconclusive")
    _suite(run)
    _temporal(run)
    _cluster(run, "admin kubeconfig of the sandbox cluster (default: start an embedded kubesim)")
    _worker(run)

    gate = commands.add_parser("gate", help="recompute and print a stored run's gate", epilog=EXIT_CODES)
    gate.add_argument("run_id", metavar="RUN_ID")
    gate.add_argument("--baseline", metavar="RUN_ID", help="(default: the run's recorded baseline, else the suite's)")
    _results(gate)

    runs = commands.add_parser("runs", help="query stored runs").add_subparsers(
        dest="runs_command", required=True, metavar="SUBCOMMAND")
    listing = runs.add_parser("list", help="list runs, newest first")
    for name in ("suite", "agent", "model"):
        listing.add_argument(f"--{name}")
    listing.add_argument("--since", help="7d, 12h, 30m, 2w or an ISO date/time")
    listing.add_argument("--limit", type=int, default=50)
    _results(listing)

    report = commands.add_parser("report", help="print a stored run's report")
    report.add_argument("run_id", metavar="RUN_ID")
    report.add_argument("--format", choices=["md", "json", "junit"], default="md")
    report.add_argument("--output", "-o", help="write to this file instead of stdout")
    _results(report)

    override = commands.add_parser("override", help="ship despite a failed gate: record who and why")
    override.add_argument("run_id", metavar="RUN_ID")
    override.add_argument("--by", required=True, help="who decides")
    override.add_argument("--reason", required=True, help="why")
    override.add_argument("--promote", action="store_true", help="also make the run its suite's baseline")
    override.add_argument("--temporal-address", default=ENV("TEMPORAL_ADDRESS"),
                          help="where the run's workflow may wait for the decision (else: the store only)")
    override.add_argument("--temporal-namespace", default=ENV("TEMPORAL_NAMESPACE", "default"))
    _results(override)

    baseline = commands.add_parser("baseline", help="a suite's baseline run").add_subparsers(
        dest="baseline_command", required=True, metavar="SUBCOMMAND")
    promote = baseline.add_parser("promote", help="make a passing (or overridden) run the suite's baseline")
    promote.add_argument("run_id", metavar="RUN_ID")
    promote.add_argument("--by", required=True)
    promote.add_argument("--reason", required=True)
    _results(promote)
    show = baseline.add_parser("show", help="print a suite's baseline run")
    show.add_argument("suite")
    _results(show)

    rerun = commands.add_parser("rerun", help="re-run a stored run's failed trials (or --trial) as a new run")
    rerun.add_argument("run_id", metavar="RUN_ID")
    rerun.add_argument("--trial", dest="trial_ids", action="append", default=[], metavar="TRIAL_ID")
    rerun.add_argument("--artifacts", default=None, help="(default: the original run's artifact directory)")
    _results(rerun)
    _temporal(rerun)
    _cluster(rerun, "admin kubeconfig of the sandbox cluster (default: start an embedded kubesim)")
    _worker(rerun)

    regrade = commands.add_parser("regrade", help="re-grade a stored run's trials from their evidence")
    regrade.add_argument("run_id", metavar="RUN_ID")
    regrade.add_argument("--trial", dest="trial_ids", action="append", default=[], metavar="TRIAL_ID")
    regrade.add_argument("--tasks", help="grade against these (updated) task files instead of the run's")
    _results(regrade)
    _temporal(regrade)
    _worker(regrade)

    schedule = commands.add_parser("schedule", help="run suites on a schedule").add_subparsers(
        dest="schedule_command", required=True, metavar="SUBCOMMAND")
    nightly = schedule.add_parser("nightly", help="create or update a schedule starting a suite on a cron")
    nightly.add_argument("tasks", help="tasks as the workers see them")
    nightly.add_argument("--cron", default="0 2 * * *", help="cron expression (default %(default)r)")
    nightly.add_argument("--time-zone", default="UTC")
    nightly.add_argument("--agent", default="reference")
    nightly.add_argument("--schedule-id", help="(default: nightly-<suite>)")
    nightly.add_argument("--trigger", action="store_true", help="also start one run now")
    _suite(nightly)
    _temporal(nightly, required_help="Temporal frontend host:port (required)")
    _cluster(nightly, "admin kubeconfig of the sandbox cluster as the workers see it (required)")

    _tasks_and_reap(commands)
    return parser


def _tasks_and_reap(commands: argparse._SubParsersAction) -> None:
    tasks = commands.add_parser("tasks", help="work with task files").add_subparsers(
        dest="tasks_command", required=True, metavar="SUBCOMMAND")
    validate = tasks.add_parser("validate", help="check task files (schema, answer leaks, references)")
    validate.add_argument("paths", nargs="+", help="task.yaml files or directories")
    validate.add_argument("--on-cluster", action="store_true",
                          help="also run each task for real (healthy → the fault fails the checks → the reference "
                               "solution passes, repeatedly; the noop agent fails) on --kubeconfig or an embedded "
                               "kubesim")
    _cluster(validate, "admin kubeconfig of the sandbox cluster (default: start an embedded kubesim)")
    validate.add_argument("--reference-trials", type=int, default=5,
                          help="with --on-cluster: reference trials per task (all must pass)")
    validate.add_argument("--no-noop", dest="noop", action="store_false",
                          help="with --on-cluster: skip the noop trial (which must fail)")
    validate.add_argument("--concurrency", type=int, default=4, help="with --on-cluster: trials at once")
    scan = tasks.add_parser("scan", help="contamination: does anything an agent can see give the answer away?")
    scan.add_argument("paths", nargs="+", help="task.yaml files or directories")

    reap = commands.add_parser("reap", help="delete trial namespaces whose TTL has passed")
    reap.add_argument("--kubeconfig", default=ENV("ONTRIAL_KUBECONFIG"), required=False)
    reap.add_argument("--context")
