"""Overriding a failed gate, wherever the run is: through its workflow if it waits, else in the store.

A suite whose gate failed may wait for a decision (``SuiteInput.decision_window``). While it waits, the
override is sent as the workflow's Update, so the running suite validates it, records it and completes
with the overridden verdict. A run whose workflow is gone (finished, window over, or run without a
window) is overridden in the results store directly, under the same rules (``ontrial.suite.decisions``).
A run that is still running its trials cannot be overridden yet.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowUpdateFailedError
from temporalio.service import RPCError, RPCStatusCode

from ontrial.errors import InfraError
from ontrial.models.suite import Override, OverrideRequest, SuiteOutcome
from ontrial.results import ResultsStore
from ontrial.suite.decisions import DecisionRefused, check_who_and_why
from ontrial.suite.runs import override_run


ANSWER_WITHIN = timedelta(seconds=10)  # a query unanswered this long: no worker serves the run right now
DECIDE_WITHIN = timedelta(seconds=60)


@dataclass(frozen=True)
class Decided:
    outcome: SuiteOutcome
    via: str  # "update" (the waiting workflow recorded it) | "store"


async def workflow_status(client: Client, run_id: str):  # noqa: ANN201 - (status, progress) or (None, None)
    """The run's workflow status and, while it runs, its progress; (None, None) if there is no such workflow."""
    from workflows import SuiteWorkflow

    handle = client.get_workflow_handle(run_id)
    try:
        description = await handle.describe()
    except RPCError as err:
        if err.status is RPCStatusCode.NOT_FOUND:
            return None, None
        raise
    if description.status is not WorkflowExecutionStatus.RUNNING:
        return description.status, None
    try:
        return description.status, await handle.query(SuiteWorkflow.progress, rpc_timeout=ANSWER_WITHIN)
    except Exception:  # noqa: BLE001 - not a suite workflow, or no worker to answer right now
        return description.status, None


async def override(client: Client | None, store: ResultsStore, run_id: str, request: OverrideRequest) -> Decided:
    """Override ``run_id``'s failed gate; raises DecisionRefused (with the reason) or ``RunNotFound``."""
    from workflows import SuiteWorkflow
    from workflows.suite_models import SuiteStatus

    if client is not None:
        status, progress = await workflow_status(client, run_id)
        if status is WorkflowExecutionStatus.RUNNING:
            if progress is None or progress.status is not SuiteStatus.awaiting_decision:
                where = progress.status.value if progress else "running"
                raise DecisionRefused(f"run {run_id} is {where}: its gate can be overridden once it has failed")
            try:
                outcome = await client.get_workflow_handle(run_id).execute_update(
                    SuiteWorkflow.override, request, rpc_timeout=DECIDE_WITHIN)
            except WorkflowUpdateFailedError as err:
                cause = err.cause
                raise DecisionRefused(getattr(cause, "message", None) or str(cause or err)) from err
            except RPCError as err:
                raise InfraError(f"run {run_id}: no worker took the decision ({err.message})") from err
            return Decided(outcome, "update")
    check_who_and_why(request.approver, request.reason)
    decision = Override(approver=request.approver.strip(), reason=request.reason.strip())
    outcome = await asyncio.to_thread(override_run, store, run_id, decision, promote=request.promote)
    return Decided(outcome, "store")
