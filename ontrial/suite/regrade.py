"""Re-grading a finished trial from what was kept, without re-running the agent or the sandbox.

What it can do: apply the *current* task file (ground truth, aliases, pass rule) and the *current* grader
to the recorded evidence — the agent's diagnosis and usage (in the trial result), its audit log (an
artifact) and the outcome-check results recorded when the trial was graded. That is what a grader fix
or a corrected ground truth needs.

What it cannot do: re-evaluate outcome checks. The sandbox is gone after teardown, so checks that were
added or changed since the run have no result (they are named in the note, and count as not passed), and
a trial that never reached grading (infra error, cancelled) cannot be re-graded — re-run it instead.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from pydantic import Field

from ..artifacts import artifact_store_for, read_jsonl
from ..errors import InfraError
from ..graders import grade
from ..models.base import Wire
from ..models.result import TrialResult
from ..models.trial import CheckResult, Grade
from ..outcomes import TrialOutcome, decide
from ..tasks import load_task


class RegradeRequest(Wire):
    results_url: str
    run_id: str
    trial_id: str
    task_file: str = Field(description="the task file to grade against (the run's, or an updated one)")


class RegradeInput(Wire):
    """RegradeWorkflow's argument: the trials to re-grade."""

    requests: list[RegradeRequest]


class RegradedTrial(Wire):
    trial_id: str
    before: TrialOutcome
    after: TrialOutcome
    grade: Grade | None = None
    regraded: bool = False
    note: str = ""


def regrade(result: TrialResult, task_file: str, artifacts_root: str | None = None) -> RegradedTrial:
    """The trial's verdict under the current task file and grader (see the module docstring for limits)."""
    keep = RegradedTrial(trial_id=result.trial_id, before=result.outcome, after=result.outcome, grade=result.grade)
    if result.run is None:
        return keep.model_copy(update={"note": "the agent never ran: nothing to re-grade (re-run the trial)"})
    if result.grade is None:
        return keep.model_copy(update={"note": "no outcome-check results were recorded (grading never finished); "
                                               "the sandbox is gone, so re-run the trial"})
    task = load_task(task_file)
    recorded = {check.name: check for check in result.grade.checks}
    wanted = [check.name for check in task.checks.outcome]
    checks = [recorded.get(name) or CheckResult(name=name, passed=False, detail="not evaluated when the trial ran")
              for name in wanted]
    missing = [name for name in wanted if name not in recorded]
    audit = []
    if result.run.audit_ref:
        root = artifacts_root or _root_of(result.run.audit_ref)
        try:
            audit = read_jsonl(artifact_store_for(root), result.run.audit_ref)
        except (InfraError, ValueError) as err:
            return keep.model_copy(update={"note": f"audit log unreadable ({err}): not re-graded"})
    new_grade = grade(task, result.run, checks, audit)
    notes = [f"checks added since the run, not evaluated: {', '.join(missing)}"] if missing else []
    return RegradedTrial(trial_id=result.trial_id, before=result.outcome, after=decide(result.run, new_grade),
                         grade=new_grade, regraded=True, note="; ".join(notes))


def _root_of(ref: str) -> str:
    """The artifact store root holding a ``file://`` ref (refs point into ``<root>/<trial dir>/...``)."""
    path = Path(unquote(urlparse(ref).path))
    for parent in path.parents:
        if parent.name.startswith("t-"):
            return str(parent.parent)
    return str(path.parent)
