"""The rules for human decisions on a run: who may override a gate, and which run may become a baseline.

Pure checks, shared by the suite workflow's Update validator and the store-side CLI / HTTP paths, so
both refuse the same things with the same words.
"""

from __future__ import annotations

from ..models.suite import GateResult, GateVerdict, RunStatus


class DecisionRefused(ValueError):
    """An override or promotion the run's gate does not allow; the message says why."""


def check_who_and_why(approver: str, reason: str) -> None:
    if not approver.strip():
        raise DecisionRefused("approver: name who takes the decision")
    if not reason.strip():
        raise DecisionRefused("reason: say why")


def check_override(run_id: str, gate: GateResult | None, approver: str, reason: str) -> None:
    """Only a failed gate, not yet overridden, by a named approver with a reason."""
    if gate is None or gate.verdict is not GateVerdict.failed:
        verdict = gate.verdict.value if gate else "not computed"
        raise DecisionRefused(f"run {run_id}: gate is {verdict!r}; only a failed gate can be overridden")
    if gate.override is not None:
        raise DecisionRefused(f"run {run_id}: already overridden by {gate.override.approver}")
    check_who_and_why(approver, reason)


def check_promotion(run_id: str, gate: GateResult | None, status: RunStatus, approver: str, reason: str) -> None:
    """Only a complete run whose gate passed (or reports only, or was overridden)."""
    check_who_and_why(approver, reason)
    if status is not RunStatus.completed:
        raise DecisionRefused(f"run {run_id} is {status.value}; only a complete run can become a baseline")
    effective = gate.effective if gate else GateVerdict.report_only
    if effective not in (GateVerdict.passed, GateVerdict.report_only):
        raise DecisionRefused(f"run {run_id}: gate is {effective.value!r}; only a passing run or an accepted "
                              "override can become the baseline")
