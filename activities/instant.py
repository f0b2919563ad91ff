"""The instant trial path: the six trial-step activities, doing (almost) nothing.

Registered instead of the real steps (``build_worker(..., trial_activities=INSTANT_TRIAL_ACTIVITIES)``),
they let the real TrialWorkflow and SuiteWorkflow run end to end with no cluster and no agent, so what
is measured is orchestration alone: child workflows, activity round trips, history, continue-as-new,
the results store. Used by ``benchmarks/suite_throughput.py`` and the suite history tests; never by
``python -m worker``.

The agent's config decides the verdicts: ``pass_rate`` (default 1.0) passes that share of trials,
chosen by a hash of the trial id, so a run is reproducible. Importing this module also registers the
``instant`` agent kind (it answers at once, with no tool call), so suites naming it pass the CLI's and
the API's agent checks; on the real trial steps it behaves like ``noop`` with a one-line diagnosis.
"""

from __future__ import annotations

import hashlib

from temporalio import activity

from typing import Any

from ontrial.agents import AgentOutput, register_agent
from ontrial.graders import GRADER_VERSION
from ontrial.models.trial import AgentRun, AgentRunStatus, Diagnosis, FaultReport, Grade, SandboxRef, TrialSpec, Usage


class InstantAgent:
    async def setup(self, ctx: Any) -> None:
        return None

    async def invoke(self, alert: dict[str, Any], tools: Any, budgets: Any) -> AgentOutput:
        return AgentOutput(diagnosis=Diagnosis(summary="instant"), text="instant")

    async def teardown(self) -> None:
        return None


register_agent("instant", lambda spec, task: InstantAgent())


def _passes(spec: TrialSpec) -> bool:
    rate = float(spec.agent.config.get("pass_rate", 1.0))
    draw = int(hashlib.sha256(spec.trial_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return draw < rate


@activity.defn(name="create_sandbox")
async def create_sandbox(spec: TrialSpec) -> SandboxRef:
    return SandboxRef(trial_id=spec.trial_id, namespace="instant", agent_kubeconfig_ref="instant://kubeconfig")


@activity.defn(name="inject_fault")
async def inject_fault(spec: TrialSpec, sandbox: SandboxRef) -> FaultReport:
    return FaultReport(applied=["instant"], alert={"name": "Instant", "labels": {"namespace": sandbox.namespace}})


@activity.defn(name="run_agent")
async def run_agent(spec: TrialSpec, sandbox: SandboxRef, fault: FaultReport) -> AgentRun:
    return AgentRun(status=AgentRunStatus.completed, usage=Usage(steps=1, tokens=10, wall_seconds=0.0),
                    diagnosis=Diagnosis(summary="instant"))


@activity.defn(name="collect_artifacts")
async def collect_artifacts(spec: TrialSpec, sandbox: SandboxRef, run: AgentRun) -> dict[str, str]:
    return {}


@activity.defn(name="grade")
async def grade(spec: TrialSpec, sandbox: SandboxRef, run: AgentRun) -> Grade:
    passed = _passes(spec)
    return Grade(passed=passed, mitigation_passed=passed, grader_version=GRADER_VERSION,
                 reason="instant pass" if passed else "instant fail")


@activity.defn(name="teardown")
async def teardown(spec: TrialSpec, sandbox_namespace: str) -> None:
    return None


INSTANT_TRIAL_ACTIVITIES = [create_sandbox, inject_fault, run_agent, collect_artifacts, grade, teardown]
