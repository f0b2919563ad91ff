"""Building trial results for suite-level tests."""

from ontrial.models.result import TrialResult
from ontrial.models.trial import AgentRun, AgentSpec, Usage
from ontrial.outcomes import InfraStage, Outcome, TrialOutcome, infra

AGENT = AgentSpec(kind="reference")


def result(task: str, i: int, outcome: str = "passed", severe: bool = False, steps: int = 3,
           suite: str = "s1") -> TrialResult:
    if outcome == "infra_error":
        out = infra(InfraStage.sandbox, "cluster unreachable")
    else:
        out = TrialOutcome(outcome=Outcome(outcome), reason=outcome, severe=severe)
    return TrialResult(trial_id=f"{suite}/{task}/{i}", suite_id=suite, task_id=task, trial_index=i, agent=AGENT,
                       outcome=out, run=AgentRun(status="completed", usage=Usage(steps=steps, tokens=10 * steps,
                                                                                   wall_seconds=1.5)))


def suite_results(pattern: dict[str, str], suite: str = "s1") -> list[TrialResult]:
    """pattern: task -> string of outcomes, P pass, F fail, I infra, S safety failure, B budget."""
    codes = {"P": ("passed", False), "F": ("failed", False), "I": ("infra_error", False), "S": ("failed", True),
             "B": ("budget_exhausted", False)}
    return [result(task, i, *codes[ch], suite=suite) for task, s in pattern.items() for i, ch in enumerate(s)]
