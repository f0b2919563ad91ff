"""The worker's HTTP API: start a gate run when a model alias changes, read a run, override its gate.

A raw ASGI app served by uvicorn: ``python -m worker --api-port N`` (next to the worker) or
``python -m worker.api --port N`` (alone; workers elsewhere serve the runs).

- ``POST /v1/model-alias-changed`` ``{alias, model_version, suite?, tasks?, agent?: {kind, name?, config?},
  trials?, concurrency?, mode?, baseline_run_id?}`` → 202 ``{run_id, created, status_url}``. The run id is
  ``gate-<alias>-<model_version>``; it is started with conflict policy USE_EXISTING and reuse policy
  REJECT_DUPLICATE, so a retried or duplicated webhook never starts a second run (200, ``created: false``).
- ``GET /v1/runs/{id}`` → the run's status, progress and, once known, its gate (from Temporal while the
  workflow exists, else from the results store).
- ``POST /v1/runs/{id}/override`` ``{approver, reason, promote?}`` → the Update if the run waits for a
  decision, else the store (``worker.decisions``); a refusal is 409 with the reason.

Errors are JSON ``{"error": message, "field": path}``: 400 for a body that is not a JSON object, 422 for
a field that fails validation (naming it), 404, 405, 409, 503 (no worker answered). Never a traceback.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from pydantic import BaseModel, ValidationError
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from ontrial.agents import agent_kinds
from ontrial.errors import InfraError
from ontrial.models.suite import OverrideRequest, SuiteMode, SuiteSpec
from ontrial.models.trial import AgentSpec, SandboxSettings
from ontrial.results import ResultsStore
from ontrial.suite.decisions import DecisionRefused
from ontrial.suite.runs import RunNotFound

from .api_models import AliasChanged, ApiSettings, OverrideBody
from .decisions import ANSWER_WITHIN, override, workflow_status

log = logging.getLogger("worker.api")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
MAX_BODY = 256 * 1024


class HttpError(Exception):
    def __init__(self, status: int, message: str, field: str | None = None):
        super().__init__(message)
        self.status, self.message, self.field = status, message, field

    def body(self) -> dict[str, Any]:
        return {"error": self.message, **({"field": self.field} if self.field else {})}


def _field_error(err: ValidationError) -> HttpError:
    first = err.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    message = "unknown field" if first["type"] == "extra_forbidden" else first["msg"]
    return HttpError(422, f"{field}: {message}" if field else message, field)


class GateApi:
    """The ASGI application; one Temporal client and one results store for all requests."""

    def __init__(self, client: Client, settings: ApiSettings):
        self.client, self.settings = client, settings
        self.store = ResultsStore(settings.results_url)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        try:
            status, body = await self._route(scope["method"], scope.get("path", ""), receive)
        except HttpError as err:
            status, body = err.status, err.body()
        except Exception:  # a bug here must not leak a traceback to the caller
            log.exception("api: unexpected error on %s %s", scope["method"], scope.get("path"))
            status, body = 500, {"error": "internal error (see the worker log)"}
        payload = json.dumps(body, default=str).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    async def _route(self, method: str, path: str, receive: Receive) -> tuple[int, dict[str, Any]]:
        parts = [unquote(p) for p in path.strip("/").split("/")]
        if parts == ["healthz"]:
            return 200, {"ok": True}
        if parts == ["v1", "model-alias-changed"]:
            _allow(method, "POST")
            return await self.alias_changed(await _json(receive, AliasChanged))
        if len(parts) == 3 and parts[:2] == ["v1", "runs"] and parts[2]:
            _allow(method, "GET")
            return 200, await self.run_status(parts[2])
        if len(parts) == 4 and parts[:2] == ["v1", "runs"] and parts[3] == "override" and parts[2]:
            _allow(method, "POST")
            return 200, await self.override(parts[2], await _json(receive, OverrideBody))
        raise HttpError(404, f"no route for {path}")

    async def alias_changed(self, event: AliasChanged) -> tuple[int, dict[str, Any]]:
        from workflows import SuiteInput, SuiteWorkflow

        settings = self.settings
        run_id = event.workflow_id()
        tasks = event.tasks or settings.tasks
        if not tasks:
            raise HttpError(422, "tasks: no task path given and the API has no default (--api-tasks)", "tasks")
        if not settings.kubeconfig:
            raise HttpError(409, "the API has no sandbox cluster configured (--kubeconfig)")
        kind = event.agent.kind if event.agent else settings.agent
        if kind not in agent_kinds() and not kind.startswith("python:"):
            raise HttpError(422, f"agent.kind: unknown agent kind {kind!r} (known: {', '.join(agent_kinds())})",
                            "agent.kind")
        status, _ = await workflow_status(self.client, run_id)
        if status is not None:
            return 200, {"run_id": run_id, "created": False, "status_url": f"/v1/runs/{run_id}"}
        agent = AgentSpec(kind=kind, name=event.agent.name if event.agent else None, model=event.model_version,
                          config=event.agent.config if event.agent else {})
        spec = SuiteSpec(suite_id=run_id, name=event.suite or event.alias, task_files=[tasks],
                         trials=event.trials or settings.trials, agent=agent,
                         sandbox=SandboxSettings(kubeconfig=settings.kubeconfig,
                                                 kind=settings.sandbox_kind),  # type: ignore[arg-type]
                         artifacts_root=str(Path(settings.artifacts).resolve()),
                         concurrency=event.concurrency or settings.concurrency, mode=SuiteMode(event.mode),
                         baseline_run_id=event.baseline_run_id)
        suite = SuiteInput(spec=spec, results_url=settings.results_url, decision_window=settings.decision_window,
                           promote_on_pass=settings.promote_on_pass)
        try:
            await self.client.start_workflow(
                SuiteWorkflow.run, suite, id=run_id, task_queue=settings.task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE)
        except WorkflowAlreadyStartedError:  # it ran before and finished: the same webhook again
            return 200, {"run_id": run_id, "created": False, "status_url": f"/v1/runs/{run_id}"}
        log.info("api: gate run %s started for %s -> %s", run_id, event.alias, event.model_version)
        return 202, {"run_id": run_id, "created": True, "status_url": f"/v1/runs/{run_id}"}

    async def run_status(self, run_id: str) -> dict[str, Any]:
        from workflows import SuiteWorkflow

        status, progress = await workflow_status(self.client, run_id)
        body: dict[str, Any] = {"run_id": run_id}
        if status is not None:
            body["status"] = status.name.lower()
            if progress is not None:
                body["progress"] = progress.model_dump(mode="json")
                body["status"] = progress.status.value if progress.status.value != "done" else "completed"
            handle = self.client.get_workflow_handle_for(SuiteWorkflow.run, run_id)
            if status is WorkflowExecutionStatus.COMPLETED:
                outcome = await handle.result()
                body["outcome"] = outcome.model_dump(mode="json")
            elif status is WorkflowExecutionStatus.RUNNING and progress is not None and progress.gate:
                outcome = await handle.query(SuiteWorkflow.outcome, rpc_timeout=ANSWER_WITHIN)
                body["outcome"] = outcome.model_dump(mode="json") if outcome else None
        record = self.store.get(run_id)
        if record is not None:
            body.setdefault("status", record.status.value)
            body["gate"] = record.gate.model_dump(mode="json") if record.gate else None
            body["baseline_run_id"] = record.baseline_run_id
            body["pass_hat_1"] = record.report.pass_hat_1.estimate
        if len(body) == 1:
            raise HttpError(404, f"no run {run_id}")
        return body

    async def override(self, run_id: str, decision: OverrideBody) -> dict[str, Any]:
        request = OverrideRequest(approver=decision.approver, reason=decision.reason, promote=decision.promote)
        try:
            decided = await override(self.client, self.store, run_id, request)
        except RunNotFound as err:
            raise HttpError(404, str(err)) from err
        except DecisionRefused as err:
            raise HttpError(409, str(err)) from err
        except InfraError as err:
            raise HttpError(503, str(err)) from err
        return {"run_id": run_id, "via": decided.via, "outcome": decided.outcome.model_dump(mode="json")}


def _allow(method: str, allowed: str) -> None:
    if method != allowed:
        raise HttpError(405, f"method {method} not allowed here (use {allowed})")


async def _json(receive: Receive, model: type[BaseModel]) -> Any:
    chunks, size = [], 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise HttpError(400, f"request body larger than {MAX_BODY} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    try:
        data = json.loads(b"".join(chunks) or b"null")
    except (ValueError, UnicodeDecodeError) as err:
        raise HttpError(400, f"request body is not valid JSON: {err}") from None
    if not isinstance(data, dict):
        raise HttpError(400, "request body must be a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise _field_error(err) from None


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def serve(app: GateApi, host: str, port: int, stop: Any = None) -> None:
    """Serve ``app`` with uvicorn until ``stop`` (an asyncio.Event) is set or the task is cancelled."""
    import asyncio

    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off",
                                           access_log=False))
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign] - the worker owns the signals
    task = asyncio.ensure_future(server.serve())
    try:
        if stop is not None:
            await stop.wait()
        else:
            await task
    finally:
        server.should_exit = True
        await task


def main(argv: list[str] | None = None) -> int:
    """``python -m worker.api``: the API alone (same settings as the worker: flags and environment)."""
    import asyncio
    import signal

    from ontrial.logging import configure_logging

    from .app import connect
    from .config import api_settings, parse_args

    config = parse_args(argv, api=True)
    configure_logging(json=config.log_json, level=config.log_level)

    async def run() -> None:
        for module in config.agent_modules:
            __import__(module)
        client = await connect(config.temporal_address, config.temporal_namespace)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await serve(GateApi(client, api_settings(config)), config.api_host, config.api_port or 8080, stop)

    asyncio.run(run())
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
