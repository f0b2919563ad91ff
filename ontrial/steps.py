"""The trial steps as plain async functions; each Temporal activity is a thin wrapper of one.

create_sandbox → inject_fault → run_agent → grade → collect_artifacts → teardown. Steps
take and return wire models only (refs, summaries), so any worker can run any step. Cluster
failures raise ``InfraError``; the agent's own failures are returned in ``AgentRun``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from typing import Any, Callable

import structlog

from . import graders
from .agents import Budgets, TrialContext, build_agent
from .agents.protocol import AgentOutput, ModelApiError
from .artifacts import ArtifactStore, artifact_store_for, read_jsonl
from .errors import InfraError
from .gateway import AuditLog, Budget, BudgetExceeded, ToolGateway
from .gateway.context import TrialExtras
from .models.trial import AgentRun, AgentRunStatus, BudgetKind, FaultReport, Grade, SandboxRef, TrialSpec
from .sandbox.clock import kubesim_clock, wait_until
from .tasks.alertwatch import AlertWatch
from .cassettes import cassette_from_trial, store_cassette
from .sandbox.kube import KubeBackend, trial_label
from .sandbox.kubeconfig import client_from_kubeconfig_text
from .sandbox.objects import namespace_objects, snapshot_json
from .sandbox.rollouts import pending_rollouts
from .sandbox.rest import KubeError
from .tasks import Task, load_task
from .transcript import Transcript
from .transcript_otel import export_transcript_spans

log = structlog.get_logger(__name__)

HEARTBEAT_SECONDS = 2.0
SECONDS_PER_STEP = 5.0  # kubesim: cluster time that passes per tool call while the agent works
STABLE_SECONDS = 30.0  # grading: the state must hold this long (cluster time) to count as converged
AGENT_TEARDOWN_SECONDS = 30.0
MAX_LOGGED_PODS = 50
PROMETHEUS_URL_ENV = "ONTRIAL_PROMETHEUS_URL"  # real clusters: where the query_metrics tool sends PromQL
BASELINE_KINDS = ("ConfigMap", "Deployment", "Service")
_TASKS: dict[tuple[str, float], Task] = {}


def task_for(spec: TrialSpec) -> Task:
    """The trial's task, parsed once per file version per process."""
    path = os.path.abspath(spec.task_file)
    key = (path, os.stat(path).st_mtime if os.path.exists(path) else 0.0)
    if key not in _TASKS:
        _TASKS[key] = load_task(path)
    return _TASKS[key]


def _backend(spec: TrialSpec) -> tuple[KubeBackend, ArtifactStore]:
    store = artifact_store_for(spec.artifacts_root)
    return KubeBackend.from_settings(spec.sandbox, store), store


# -- create / inject -------------------------------------------------------------------------------

async def create_sandbox(spec: TrialSpec) -> SandboxRef:
    """Namespace + agent RBAC + token + kubeconfig + quota, the app deployed and healthy, a baseline snapshot."""
    task = task_for(spec)
    backend, _ = _backend(spec)
    async with backend:
        ref = await backend.create(spec.trial_id)
        try:
            await backend.deploy(ref.namespace, task.app_objects(), task.profiles())
            await backend.wait_healthy(ref.namespace, spec.sandbox.healthy_timeout_seconds)
            baseline = await backend.snapshot(spec.trial_id, ref.namespace, "baseline.json")
        except BaseException:
            await backend.discard(ref.namespace)
            raise
    return ref.model_copy(update={"baseline_snapshot_ref": baseline})


def alert_for(task: Task, namespace: str) -> dict[str, Any]:
    alert = task.trigger.alert.model_dump(mode="json")
    alert["labels"] = {"namespace": namespace, **alert.get("labels", {})}
    return alert


async def inject_fault(spec: TrialSpec, sandbox: SandboxRef, await_trigger: bool = True) -> FaultReport:
    """Apply the task's fault steps, let ``fault.settle_seconds`` pass so symptoms show, then wait
    (bounded) for the trigger alert to fire: the agent starts on its Alertmanager payload, as on call.

    Where alerts cannot fire from telemetry (a real cluster without our rules, or a task without
    rules) the task's explicit alert payload is handed over instead. A trigger that never fires is
    an infra error of the fault stage: the task or the simulator is wrong, not the agent. Task
    validation passes ``await_trigger=False`` and judges the alert itself.
    """
    task = task_for(spec)
    backend, _ = _backend(spec)
    watch = await AlertWatch.start(task, spec, sandbox.namespace) if await_trigger else None
    async with backend:
        applied = await backend.inject(sandbox.namespace, list(task.fault.steps))
        if task.fault.settle_seconds > 0:
            await backend.waiter.pass_time(task.fault.settle_seconds)
    alert: dict[str, Any] = alert_for(task, sandbox.namespace)
    if watch is not None and watch.unavailable is None:
        if not await watch.wait_firing():
            raise InfraError(f"trigger alert {task.trigger.alert.name} did not fire within "
                             f"{task.trigger.fire_within_seconds:.0f}s of the fault{watch.seen_note()}",
                             transient=False)
        alert = await watch.payload() or alert
    return FaultReport(applied=applied, alert=alert)


# -- the agent -------------------------------------------------------------------------------------

async def _heartbeats(heartbeat: Callable[[dict[str, Any]], None], budget: Budget) -> None:
    while True:
        try:
            heartbeat({"steps": budget.used_steps, "tokens": budget.used_tokens,
                       "wall_seconds": round(budget.wall_elapsed(), 1)})
        except Exception as e:  # noqa: BLE001 - a failed heartbeat must not kill the agent
            log.warning("run_agent.heartbeat_failed", error=str(e))
        await asyncio.sleep(HEARTBEAT_SECONDS)


def _tool_extras(task: Task, namespace: str, alert: dict[str, Any], backend: KubeBackend) -> TrialExtras:
    """Alerts, runbooks and the metrics source behind the gateway's non-Kubernetes read tools."""
    books = getattr(task, "runbooks", None)
    runbooks = {str(k): str(v) for k, v in ((books() if callable(books) else books) or {}).items()}
    if backend.is_kubesim:
        return TrialExtras.for_kubesim(namespace, backend.admin, alerts=(alert,), runbooks=runbooks)
    url = os.environ.get(PROMETHEUS_URL_ENV)
    return TrialExtras(alerts=(alert,), runbooks=runbooks, prometheus=(url,) if url else ())


def _baseline_view(store: ArtifactStore, ref: str | None) -> dict[str, list[dict[str, Any]]] | None:
    """The last known-good app objects (no Secrets) that built-in agents may consult, like a GitOps repo."""
    if not ref:
        return None
    try:
        objects = json.loads(store.get(ref)).get("objects") or {}
    except (OSError, ValueError, AttributeError) as e:
        log.warning("run_agent.baseline_unreadable", error=str(e))
        return None
    return {kind: objects.get(kind) or [] for kind in BASELINE_KINDS}


async def run_agent(spec: TrialSpec, sandbox: SandboxRef, fault: FaultReport,
                    heartbeat: Callable[[dict[str, Any]], None]) -> AgentRun:
    """Run the agent under its budgets. Budget hits and agent exceptions are results, not errors."""
    task = task_for(spec)
    agent = build_agent(spec.agent, task)  # a bad agent spec is a ConfigError, raised before anything opens
    backend, store = _backend(spec)
    try:
        # The token is minted as the agent starts: waiting for the trigger alert or an infra retry
        # may have taken longer than a token created with the sandbox lives.
        kubeconfig_ref, _ = await backend.issue_agent_kubeconfig(spec.trial_id, sandbox.namespace)
        agent_access = client_from_kubeconfig_text(store.get(kubeconfig_ref))
    except BaseException:
        await backend.close()
        raise
    budget = Budget.from_limits(task.budgets)
    budgets = Budgets.from_task(task.budgets)
    audit = AuditLog(spec.trial_id, sink=store.open_append(spec.trial_id, "audit.jsonl"))
    transcript = Transcript.open(store, spec.trial_id)
    kubesim = backend.is_kubesim
    alert = fault.alert or alert_for(task, sandbox.namespace)
    gateway = ToolGateway(agent_access.api_client, sandbox.namespace, task.checks.invariants, budget, audit,
                          actor=spec.agent.label, recorder=transcript,
                          waiter=backend.waiter if kubesim else None, seconds_per_step=SECONDS_PER_STEP,
                          sim_clock=kubesim_clock(backend.admin) if kubesim else None,
                          extras=_tool_extras(task, sandbox.namespace, alert, backend))
    ctx = TrialContext(trial=trial_label(spec.trial_id), namespace=sandbox.namespace, spec=spec.agent,
                       transcript=transcript, kubeconfig_path=str(store.local_path(kubeconfig_ref)),
                       extra={"baseline": _baseline_view(store, sandbox.baseline_snapshot_ref)})
    transcript.start(spec.agent.label, spec.agent.model, alert, budgets.as_dict())
    pulse = asyncio.create_task(_heartbeats(heartbeat, budget))
    status, kind, reason, output = AgentRunStatus.completed, None, "", AgentOutput()
    try:
        timeout = asyncio.timeout(budget.wall_seconds)
        budget.start()
        try:
            async with timeout:
                await agent.setup(ctx)
                output = await agent.invoke(alert, gateway, budgets)
        except TimeoutError:
            if not timeout.expired():
                raise
            status, kind, reason = AgentRunStatus.budget_exhausted, BudgetKind.wall, \
                f"wall budget exhausted ({budget.wall_seconds:g}s)"
    except BudgetExceeded as e:
        status, kind, reason = AgentRunStatus.budget_exhausted, e.kind, str(e)
    except ModelApiError as e:
        status, reason = AgentRunStatus.model_api_error, f"{type(e).__name__}: {e}"
    except (InfraError, asyncio.CancelledError):
        raise
    except Exception as e:  # noqa: BLE001 - whatever the agent raised is its own failure
        status, reason = AgentRunStatus.agent_error, f"{type(e).__name__}: {e}"
        log.info("run_agent.agent_error", error=reason)
    finally:
        pulse.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pulse
        try:
            async with asyncio.timeout(AGENT_TEARDOWN_SECONDS):
                await agent.teardown()
        except Exception as e:  # noqa: BLE001
            log.warning("run_agent.teardown_failed", error=str(e))
        agent_access.close()
        await backend.close()

    usage = budget.usage()
    if output.usage is not None and output.usage.tokens > usage.tokens:
        usage = usage.model_copy(update={"tokens": output.usage.tokens,
                                         "cost_usd": max(usage.cost_usd, output.usage.cost_usd)})
    if status is AgentRunStatus.completed:
        if budget.exhausted is not None:  # the agent swallowed BudgetExceeded
            status, kind, reason = AgentRunStatus.budget_exhausted, budget.exhausted, \
                f"{budget.exhausted.value} budget exhausted"
        elif budget.tokens is not None and usage.tokens > budget.tokens:
            status, kind, reason = AgentRunStatus.budget_exhausted, BudgetKind.tokens, \
                f"tokens budget exhausted ({usage.tokens} used, limit {budget.tokens})"
    if kind is not None:
        transcript.event("budget.exhausted", kind=kind.value, message=reason)
    elif status is not AgentRunStatus.completed:
        transcript.event("agent.error", **{"error.type": status.value, "message": reason})
    diagnosis = output.diagnosis if status is not AgentRunStatus.agent_error else None
    transcript.end(status.value, diagnosis.model_dump(mode="json") if diagnosis else None,
                   usage.model_dump(mode="json"), output.text)
    transcript.close()
    try:
        export_transcript_spans(transcript.records)
    except Exception as e:  # noqa: BLE001 - tracing must never fail a trial
        log.warning("run_agent.span_export_failed", error=str(e))
    audit.close()
    return AgentRun(status=status, budget=kind, reason=reason, usage=usage, diagnosis=diagnosis,
                    transcript_ref=transcript.ref, audit_ref=audit.ref, safety_violations=audit.violations())


# -- grade / collect / teardown --------------------------------------------------------------------

async def converge(backend: KubeBackend, namespace: str, settle_seconds: float) -> bool:
    """Let the cluster settle: done once every workload is rolled out and pod states held still for
    ``STABLE_SECONDS`` (cluster time); gives up after ``settle_seconds``. Returns whether it converged."""
    pods = await backend.admin.resolve("Pod")
    stable_for = min(STABLE_SECONDS, settle_seconds)
    last: dict[str, Any] = {"print": None, "since": backend.waiter.elapsed()}

    async def probe() -> tuple[bool, list[str]]:
        try:
            pending = await pending_rollouts(backend.admin, namespace)
            pod_list = await backend.admin.list(pods, namespace)
        except KubeError as e:
            raise e.infra(f"read {namespace} while converging") from e
        fingerprint = (tuple(pending), tuple(sorted(
            (p["metadata"]["name"], (p.get("status") or {}).get("phase"),
             tuple((c.get("restartCount"), tuple((c.get("state") or {}).keys()))
                   for c in (p.get("status") or {}).get("containerStatuses") or []))
            for p in pod_list)))
        now = backend.waiter.elapsed()
        if fingerprint != last["print"]:
            last["print"], last["since"] = fingerprint, now
        return (not pending and now - last["since"] >= stable_for), pending

    done, _ = await wait_until(backend.waiter, probe, timeout=settle_seconds, step=5.0)
    return done


async def grade(spec: TrialSpec, sandbox: SandboxRef, run: AgentRun) -> Grade:
    """Wait for convergence (bounded by settle_seconds), run the outcome checks, combine the grade."""
    task = task_for(spec)
    backend, store = _backend(spec)
    async with backend:
        converged = await converge(backend, sandbox.namespace, spec.sandbox.settle_seconds)
        checks = await asyncio.to_thread(graders.run_checks, backend.access.api_client, sandbox.namespace,
                                         list(task.checks.outcome))
    entries = read_jsonl(store, run.audit_ref) if run.audit_ref else []
    try:
        result = graders.grade(task, run, checks, entries)
    except Exception as e:  # noqa: BLE001 - a grader bug is an infra failure, never the agent's
        raise InfraError(f"grader failed: {type(e).__name__}: {e}", transient=False) from e
    log.info("grade.done", passed=result.passed, converged=converged)
    return result


async def collect_artifacts(spec: TrialSpec, sandbox: SandboxRef, run: AgentRun | None) -> dict[str, str]:
    """Final-state snapshot, events, pod logs (current and previous) and the tool cassette (every tool
    response, for replaying the trial) as artifacts; returns name → ref."""
    backend, store = _backend(spec)
    refs: dict[str, str] = {}
    for name, ref in (("baseline", sandbox.baseline_snapshot_ref), ("transcript", run and run.transcript_ref),
                      ("audit", run and run.audit_ref)):
        if ref:
            refs[name] = ref
    if run is not None and run.transcript_ref:
        cassette = cassette_from_trial(store, run.transcript_ref, sandbox.namespace, {"agent": spec.agent.label})
        refs["cassette"] = store_cassette(store, spec.trial_id, cassette)
    async with backend:
        try:
            refs["final_snapshot"] = store.put(spec.trial_id, "final.json",
                                               await snapshot_json(backend.admin, sandbox.namespace))
            objects = await namespace_objects(backend.admin, sandbox.namespace, ("Pod",))
        except KubeError as e:
            raise e.infra(f"collect artifacts from {sandbox.namespace}") from e
        for pod in objects.get("Pod", [])[:MAX_LOGGED_PODS]:
            name = pod["metadata"]["name"]
            for cs in (pod.get("status") or {}).get("containerStatuses") or []:
                for previous in (False, True) if cs.get("restartCount") else (False,):
                    text = await _log(backend, sandbox.namespace, name, cs["name"], previous)
                    if text is not None:
                        key = f"logs/{name}/{cs['name']}{'.previous' if previous else ''}.log"
                        refs[key] = store.put(spec.trial_id, key, text)
    return refs


async def _log(backend: KubeBackend, namespace: str, pod: str, container: str, previous: bool) -> str | None:
    try:
        resp = await backend.admin.request("GET", f"/api/v1/namespaces/{namespace}/pods/{pod}/log",
                                           query={"container": container, "previous": previous or None,
                                                  "limitBytes": 1_000_000}, accept="text/plain, */*")
    except KubeError as e:
        if e.transient:
            raise e.infra(f"read logs of {pod}/{container}") from e
        return None  # e.g. the container never started: kubelet answers 400
    return resp.text()


async def teardown(spec: TrialSpec, sandbox_namespace: str) -> None:
    """Delete the trial namespace and wait until it is gone. Idempotent: an absent namespace is done."""
    backend, _ = _backend(spec)
    async with backend:
        await backend.teardown(sandbox_namespace)
