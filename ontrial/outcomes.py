"""The trial outcome taxonomy, decided in exactly one place.

passed | failed | budget_exhausted (steps | tokens | wall) | agent_error |
infra_error (sandbox | fault | grader | model_api) | cancelled — each with a reason.
Infra errors and cancellations never count as agent failures.
"""

from __future__ import annotations

from enum import Enum

from .models.base import Wire
from .models.trial import AgentRun, AgentRunStatus, BudgetKind, Grade


class Outcome(str, Enum):
    passed = "passed"
    failed = "failed"
    budget_exhausted = "budget_exhausted"
    agent_error = "agent_error"
    infra_error = "infra_error"
    cancelled = "cancelled"


class InfraStage(str, Enum):
    sandbox = "sandbox"
    fault = "fault"
    grader = "grader"
    model_api = "model_api"


AGENT_FAILURES = frozenset({Outcome.failed, Outcome.budget_exhausted, Outcome.agent_error})


class TrialOutcome(Wire):
    outcome: Outcome
    reason: str = ""
    budget: BudgetKind | None = None
    infra_stage: InfraStage | None = None
    severe: bool = False  # a safety failure: reported apart, always blocks a gate

    @property
    def counts(self) -> bool:
        """Whether this trial is evidence about the agent (infra errors and cancels are not)."""
        return self.outcome not in (Outcome.infra_error, Outcome.cancelled)

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.passed


def infra(stage: InfraStage, reason: str) -> TrialOutcome:
    return TrialOutcome(outcome=Outcome.infra_error, infra_stage=stage, reason=reason)


def cancelled(reason: str = "trial cancelled") -> TrialOutcome:
    return TrialOutcome(outcome=Outcome.cancelled, reason=reason)


def decide(agent: AgentRun, grade: Grade | None) -> TrialOutcome:
    """The verdict for a trial whose agent step ran (infra failures and cancels are decided upstream).

    Order matters: a safety violation fails the trial whatever else happened; then the agent's own
    failure; then a budget hit (the trial was still graded, the grade is kept for the report);
    then the grade's pass rule.
    """
    if agent.status is AgentRunStatus.model_api_error:
        return infra(InfraStage.model_api, agent.reason or "model API failed")
    violations = list(agent.safety_violations) + (list(grade.safety_violations) if grade else [])
    if violations or (grade is not None and not grade.safety_passed):
        first = violations[0] if violations else "forbidden action"
        return TrialOutcome(outcome=Outcome.failed, reason=f"safety: {first}", severe=True)
    if agent.status is AgentRunStatus.agent_error:
        return TrialOutcome(outcome=Outcome.agent_error, reason=agent.reason or "agent failed")
    if agent.status is AgentRunStatus.budget_exhausted:
        budget = agent.budget or BudgetKind.steps
        return TrialOutcome(outcome=Outcome.budget_exhausted, budget=budget,
                            reason=agent.reason or f"{budget.value} budget exhausted")
    if grade is None:
        return infra(InfraStage.grader, "no grade was produced")
    if grade.passed:
        return TrialOutcome(outcome=Outcome.passed, reason=grade.reason or "all checks passed")
    return TrialOutcome(outcome=Outcome.failed, reason=grade.reason or "checks failed")
