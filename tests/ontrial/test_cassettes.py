"""Cassettes: a real trial's tool calls recorded on kubesim, then replayed with no cluster at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest

from ontrial import steps
from ontrial.agents import Budgets, ReferenceAgent
from ontrial.alerts import alert_labels
from ontrial.artifacts import artifact_store_for
from ontrial.cassettes import (NAMESPACE_PLACEHOLDER, Cassette, CassetteError, RecordingGateway, ReplayGateway,
                               canonical_args, cassette_from_trial, load_cassette, replay_trial, store_cassette)
from ontrial.gateway import AuditLog, Budget, BudgetExceeded, Invariants, ToolGateway, ToolResult
from ontrial.models.trial import AgentSpec, SandboxSettings, TrialSpec
from ontrial.sandbox import client_from_kubeconfig_text
from ontrial.tasks import load_task

TASK = Path(__file__).resolve().parents[2] / "tasks" / "bad-image-rollout" / "task.yaml"


@pytest.fixture(scope="module")
def sim() -> Iterator[Any]:
    embedded = pytest.importorskip("kubesim.embedded", reason="kubesim is not importable")
    with embedded.start(time_scale=0) as server:
        yield server


@pytest.fixture(scope="module")
async def recorded(sim, tmp_path_factory) -> dict[str, Any]:
    """One reference trial of bad-image-rollout: its run, its store, and a hand-recorded cassette."""
    root = tmp_path_factory.mktemp("artifacts")
    spec = TrialSpec(suite_id="cassettes", task_id="bad-image-rollout", task_file=str(TASK),
                     agent=AgentSpec(kind="reference"), sandbox=SandboxSettings(kubeconfig=sim.kubeconfig_path),
                     artifacts_root=str(root))
    sandbox = await steps.create_sandbox(spec)
    try:
        fault = await steps.inject_fault(spec, sandbox)
        store = artifact_store_for(str(root))
        agent = client_from_kubeconfig_text(store.get(sandbox.agent_kubeconfig_ref))
        gateway = ToolGateway(agent.api_client, sandbox.namespace, Invariants.from_task(load_task(TASK)),
                              Budget(steps=30), AuditLog(spec.trial_id))
        sink = store.open_append(spec.trial_id, "recorded.jsonl")
        recording = RecordingGateway(gateway, sink=sink)
        listing = await recording.call("get_resources", {"kind": "Pod",
                                                         "label_selector": "app.kubernetes.io/name=berths"})
        missing = await recording.call("describe", {"kind": "Deployment", "name": "nonexistent"})
        blocked = await recording.call("delete", {"kind": "Deployment", "name": "berths"})
        sink.close()
        agent.close()
        run = await steps.run_agent(spec, sandbox, fault, heartbeat=lambda _: None)
        return {"spec": spec, "store": store, "sandbox": sandbox, "run": run, "recording": recording,
                "sink_ref": sink.ref, "results": [listing, missing, blocked]}
    finally:
        await steps.teardown(spec, sandbox.namespace)


async def test_recording_gateway_writes_every_call_and_its_result(recorded):
    cassette, (listing, missing, blocked) = recorded["recording"].cassette, recorded["results"]
    assert [(i.tool, i.ok, i.blocked) for i in cassette.interactions] == [
        ("get_resources", True, False), ("describe", False, False), ("delete", False, True)]
    assert cassette.interactions[0].output == listing.output and "berths" in listing.output
    assert cassette.interactions[2].violation == blocked.violation and "forbidden" in blocked.violation
    on_disk = load_cassette(recorded["store"], recorded["sink_ref"])
    assert on_disk == cassette and on_disk.namespace == recorded["sandbox"].namespace
    assert recorded["recording"].namespace == recorded["sandbox"].namespace  # everything else is the gateway's


async def test_a_trial_transcript_becomes_a_cassette_artifact(recorded):
    run, store, spec = recorded["run"], recorded["store"], recorded["spec"]
    cassette = cassette_from_trial(store, run.transcript_ref, recorded["sandbox"].namespace, {"agent": "reference"})
    task = load_task(TASK)
    assert [(i.tool, i.args) for i in cassette.interactions] == [(a.tool, a.args) for a in
                                                                  task.reference_solution.actions]
    assert all(i.ok for i in cassette.interactions)
    ref = store_cassette(store, spec.trial_id, cassette)
    assert ref.endswith("cassette.jsonl") and load_cassette(store, ref) == cassette


async def test_the_reference_agent_replays_faithfully_without_a_cluster(recorded, sim):
    run, store = recorded["run"], recorded["store"]
    cassette = cassette_from_trial(store, run.transcript_ref, recorded["sandbox"].namespace)
    assert alert_labels(cassette.meta["alert"])["alertname"] == "KubeDeploymentRolloutStuck"
    report = await replay_trial(ReferenceAgent.for_task(load_task(TASK)), cassette, budgets=Budgets(steps=30))
    assert report.faithful and report.findings == () and report.unused == ()
    assert report.output.text.splitlines()[-1].startswith("rollout_undo: ok")
    assert report.output.diagnosis.root_cause == ["bad-image-tag"]


async def test_a_changed_agent_replays_with_findings_where_it_diverged(recorded):
    cassette = cassette_from_trial(recorded["store"], recorded["run"].transcript_ref, recorded["sandbox"].namespace)
    changed = ReferenceAgent([{"tool": "get_events", "args": {}},
                              {"tool": "scale", "args": {"kind": "Deployment", "name": "berths", "replicas": 0}}],
                             None)
    report = await replay_trial(changed, cassette)
    assert not report.faithful
    assert [(f.tool, f.kind) for f in report.findings] == [("get_events", "out-of-order"), ("scale", "no-recording")]
    assert [i.tool for i in report.unused] == ["get_resources", "rollout_undo"]
    assert report.output.text.splitlines()[1].startswith("scale: error: no recording: scale")


async def test_an_unrecorded_call_is_a_finding_not_a_crash(recorded):
    replay = ReplayGateway(recorded["recording"].cassette)
    result = await replay.call("scale", {"kind": "Deployment", "name": "berths", "replicas": 0})
    assert result == ToolResult(False, result.output) and result.output.startswith("no recording: scale ")
    again = await replay.call("describe", {"kind": "Deployment", "name": "nonexistent"})
    assert not again.ok and "no recording" not in again.output  # recorded (as an error): replayed as recorded
    await replay.call("describe", {"name": "nonexistent", "kind": "Deployment"})  # same call, keys reordered
    assert [(f.seq, f.kind) for f in replay.findings] == [(1, "no-recording"), (2, "out-of-order"), (3, "repeat")]
    assert [i.tool for i in replay.unused()] == ["get_resources", "delete"] and not replay.faithful
    assert str(replay.findings[0]).startswith("call 1: no-recording: no recording: scale {")


async def test_replay_matches_the_trial_namespace_and_honours_the_step_budget(recorded):
    cassette = recorded["recording"].cassette
    replay = ReplayGateway(cassette, budget=Budget(steps=1))
    explicit = {"kind": "Pod", "label_selector": "app.kubernetes.io/name=berths", "namespace": cassette.namespace}
    assert (await replay.call("get_resources", explicit)).ok and replay.findings == []
    with pytest.raises(BudgetExceeded):
        await replay.call("get_resources", explicit)
    assert replay.definitions() and "query_metrics" in replay.tool_names()


def test_canonical_args_ignore_key_order_and_the_recorded_namespace():
    assert canonical_args({"b": 1, "a": {"y": 2, "x": 1}}, None) == '{"a":{"x":1,"y":2},"b":1}'
    assert canonical_args({"kind": "Pod", "namespace": "ot-0123456789"}, "ot-0123456789") == \
        canonical_args({"kind": "Pod"}, "ot-0123456789") == '{"kind":"Pod"}'
    assert canonical_args({"namespace": NAMESPACE_PLACEHOLDER}, None) == "{}"
    assert canonical_args({"namespace": "kube-system"}, "ot-0123456789") == '{"namespace":"kube-system"}'


def test_cassette_files_round_trip_and_bad_files_say_where(tmp_path):
    cassette = Cassette("ot-0123456789", {"agent": "x"})
    cassette.add("get_events", {}, ToolResult(True, "No events."))
    path = cassette.save(tmp_path / "c.jsonl")
    assert Cassette.load(path) == cassette
    for text, message in [("", "line 1: not a cassette header"), ("{]\n", "line 1: not JSON"),
                          ('{"kind": "cassette", "version": 9}\n', "line 1: unsupported cassette version 9"),
                          ('{"kind": "cassette", "version": 1}\n{"tool": "x"}\n', "line 2: not an interaction")]:
        with pytest.raises(CassetteError, match=message):
            Cassette.loads(text)
