"""Suite throughput: how fast SuiteWorkflow pushes trials through, and how small it keeps each run's history.

    python benchmarks/suite_throughput.py                  # 2,000 instant trials, then 200 side by side with Inspect AI
    python benchmarks/suite_throughput.py --trials 2000 --skip-inspect
    python benchmarks/suite_throughput.py --inspect-python /path/to/venv/bin/python   # Inspect in its own venv

The *instant trial path* (``activities.instant``): the real SuiteWorkflow and TrialWorkflow, children,
continue-as-new, record batches, finish (summary, gate, reports, results store) — with the six trial-step
activities returning at once (no cluster, no agent). So the numbers are orchestration alone. Everything
runs on this machine: a Temporal dev server (in-memory) and one in-process worker.

Inspect AI (optional: ``pip install inspect-ai``) runs the same shape, 40 samples × 5 epochs, with
``generate()`` on its mock model (``mockllm/model``, canned outputs with usage set so it needs no
tokenizer download) and a ``match()`` scorer. Compare ratios, not absolute times.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from activities.instant import INSTANT_TRIAL_ACTIVITIES  # noqa: E402 - after the path fix for direct runs
from ontrial.models.suite import SuiteSpec  # noqa: E402
from ontrial.models.trial import AgentSpec, SandboxSettings  # noqa: E402
from worker.app import build_worker  # noqa: E402
from workflows import SuiteInput, SuiteWorkflow  # noqa: E402

TEMPLATE = ROOT / "tests" / "workflows" / "fixtures" / "tasks"
EVENT_LIMIT = 10_000  # what each run of the parent must stay under

INSPECT_SCRIPT = r"""
import json, sys, time
started = time.perf_counter()
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate
imported = time.perf_counter()
samples, epochs, log_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]

def instant(input, tools, tool_choice, config):
    out = ModelOutput.from_content(model="mockllm", content="ok")
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out

task = Task(dataset=[Sample(input=f"incident {i}", target="ok") for i in range(samples)], solver=generate(),
            scorer=match(), epochs=epochs)
logs = eval(task, model=get_model("mockllm/model", custom_outputs=instant), log_dir=log_dir, display="none")
done = time.perf_counter()
peak_kb = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"import_s": imported - started, "eval_s": done - imported, "status": logs[0].status,
                  "samples": logs[0].results.completed_samples if logs[0].results else 0,
                  "peak_rss_mb": peak_kb / 1024}))
"""


@dataclass(frozen=True)
class SuiteNumbers:
    trials: int
    wall: float
    run_events: list[int]
    outcome_counts: dict[str, int]
    server_cpu: float
    worker_cpu: float


def make_tasks(directory: Path, count: int) -> Path:
    """``count`` small tasks (the suite tests' one-pod fixture, under distinct ids)."""
    directory.mkdir(parents=True)
    (directory / "app").symlink_to(TEMPLATE / "app")
    text = (TEMPLATE / "web-scaled-down" / "task.yaml").read_text()
    for i in range(count):
        (directory / f"t{i:03d}").mkdir()
        (directory / f"t{i:03d}" / "task.yaml").write_text(text.replace("id: web-scaled-down", f"id: bench-{i:03d}"))
    return directory


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid: int | str = "self") -> float:
    """The process's resident-set high-water mark (VmHWM; ru_maxrss would survive fork and exec)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def server_pids() -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(os.getpid())], capture_output=True, text=True).stdout.split()
    return [int(p) for p in found]


async def run_lengths(env: WorkflowEnvironment, workflow_id: str) -> list[int]:
    lengths, run_id = [], None
    while True:
        history = await env.client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        lengths.append(len(history.events))
        run_id = history.events[0].workflow_execution_started_event_attributes.continued_execution_run_id
        if not run_id:
            return lengths[::-1]


async def instant_suite(env: WorkflowEnvironment, queue: str, scratch: Path, name: str, tasks: int, trials: int,
                        concurrency: int, chunk: int) -> SuiteNumbers:
    spec = SuiteSpec(suite_id=name, name=name, task_files=[str(make_tasks(scratch / name, tasks))], trials=trials,
                     agent=AgentSpec(kind="instant", config={"pass_rate": 0.9}), concurrency=concurrency,
                     chunk_size=chunk, sandbox=SandboxSettings(kubeconfig="/unused"),
                     artifacts_root=str(scratch / "artifacts"))
    suite = SuiteInput(spec=spec, results_url=f"sqlite:///{scratch}/results.db")
    pids = server_pids()
    server_before, worker_before = sum(map(cpu_seconds, pids)), time.process_time()
    started = time.perf_counter()
    outcome = await env.client.execute_workflow(SuiteWorkflow.run, suite, id=name, task_queue=queue)
    wall = time.perf_counter() - started
    return SuiteNumbers(trials=outcome.trials, wall=wall, run_events=await run_lengths(env, name),
                        outcome_counts=outcome.outcome_counts,
                        server_cpu=sum(map(cpu_seconds, pids)) - server_before,
                        worker_cpu=time.process_time() - worker_before)


def inspect_side_by_side(python: str, samples: int, epochs: int, scratch: Path) -> dict | None:
    probe = subprocess.run([python, "-c", "import inspect_ai"], capture_output=True)
    if probe.returncode != 0:
        return None
    started = time.perf_counter()
    done = subprocess.run([python, "-c", INSPECT_SCRIPT, str(samples), str(epochs), str(scratch / "inspect-logs")],
                          capture_output=True, text=True, check=True)
    numbers = json.loads(done.stdout.strip().splitlines()[-1])
    numbers["process_s"] = time.perf_counter() - started
    return numbers


def report(title: str, n: SuiteNumbers) -> None:
    print(f"{title}: {n.trials} trials in {n.wall:.1f}s = {n.trials / n.wall:.1f} trials/s "
          f"(worker CPU {n.worker_cpu:.1f}s, Temporal server CPU {n.server_cpu:.1f}s)")
    print(f"  parent history: {len(n.run_events)} run(s), events per run {n.run_events} "
          f"(max {max(n.run_events)}, limit {EVENT_LIMIT:,})")
    print(f"  outcomes: {n.outcome_counts}")


async def main(args: argparse.Namespace) -> None:
    cli = shutil.which("temporal", path=str(Path(sys.executable).parent)) or shutil.which("temporal")
    env = await WorkflowEnvironment.start_local(dev_server_existing_path=cli, data_converter=pydantic_data_converter)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            scratch = Path(tmp)
            async with build_worker(env.client, "bench", trial_activities=INSTANT_TRIAL_ACTIVITIES,
                                    max_concurrent_activities=200):
                big = await instant_suite(env, "bench", scratch, "bench-big", args.tasks, args.trials // args.tasks,
                                          args.concurrency, args.chunk)
                report(f"SuiteWorkflow, instant trials ({args.tasks} tasks x {args.trials // args.tasks})", big)
                assert max(big.run_events) < EVENT_LIMIT, big.run_events
                small = await instant_suite(env, "bench", scratch, "bench-200", 40, 5, args.concurrency, args.chunk)
                report("SuiteWorkflow, instant trials (40 tasks x 5)", small)
            print(f"worker peak memory: {peak_rss_mib():.0f} MiB RSS (this process: the in-process worker and the "
                  f"client); Temporal dev server peak {sum(map(peak_rss_mib, server_pids())):.0f} MiB")
            if args.skip_inspect:
                return
            inspect = inspect_side_by_side(args.inspect_python, 40, 5, scratch)
            if inspect is None:
                print("Inspect AI: not installed for", args.inspect_python, "(pip install inspect-ai); skipped")
                return
            print(f"Inspect AI, mockllm/model + generate(), 40 samples x 5 epochs: {inspect['samples']} samples in "
                  f"{inspect['eval_s']:.1f}s eval = {inspect['samples'] / inspect['eval_s']:.1f} samples/s "
                  f"(+{inspect['import_s']:.1f}s import; peak {inspect['peak_rss_mb']:.0f} MiB; {inspect['status']})")
            print(f"side by side, 200 instant trials: ontrial {small.wall:.1f}s vs Inspect AI {inspect['eval_s']:.1f}s "
                  f"= {small.wall / inspect['eval_s']:.1f}x (ontrial: durable children, 6 activities and a "
                  "results-store record per trial)")
    finally:
        await env.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=2000, help="trials in the big suite")
    parser.add_argument("--tasks", type=int, default=40, help="tasks in the big suite (trials per task = trials/tasks)")
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--chunk", type=int, default=200, help="trials per workflow run before continue-as-new")
    parser.add_argument("--skip-inspect", action="store_true")
    parser.add_argument("--inspect-python", default=sys.executable, help="interpreter with inspect-ai installed")
    asyncio.run(main(parser.parse_args()))
