"""A trial starts the agent on the first firing trigger alert: after the fault, the harness lets
simulated time pass until kubesim's alerting fires the task's rule and hands over its Alertmanager
(v4 webhook) payload — even when the alert fires on a service other than the cause."""

from __future__ import annotations

from pathlib import Path

import pytest

from ontrial import steps
from ontrial.alerts import alert_labels, firing_services
from ontrial.models.trial import AgentSpec, SandboxSettings, TrialSpec

embedded = pytest.importorskip("kubesim.embedded", reason="kubesim is not importable")
TASKS = Path(__file__).resolve().parents[2] / "tasks"


@pytest.fixture(scope="module")
def sim():
    with embedded.start(time_scale=0) as server:
        yield server


async def test_the_agent_gets_the_alertmanager_payload_of_the_symptomatic_service(sim, tmp_path: Path) -> None:
    spec = TrialSpec(suite_id="s", task_id="env-port-typo", task_file=str(TASKS / "env-port-typo" / "task.yaml"),
                     agent=AgentSpec(kind="noop"), sandbox=SandboxSettings(kubeconfig=sim.kubeconfig_path),
                     artifacts_root=str(tmp_path))
    sandbox = await steps.create_sandbox(spec)
    try:
        fault = await steps.inject_fault(spec, sandbox)
    finally:
        await steps.teardown(spec, sandbox.namespace)
    payload = fault.alert
    assert payload["version"] == "4" and payload["status"] == "firing"
    firing = [a for a in payload["alerts"] if a["status"] == "firing"]
    assert firing and all(a["startsAt"] and a["fingerprint"] for a in firing)
    assert alert_labels(payload)["alertname"] == "HighRequestErrorRate"
    assert "gangway" in firing_services(payload)  # the symptom; the cause (fares) is for the agent to find
