"""With tracing on, a trial is one trace: workflow and activity spans share a trace id."""

from __future__ import annotations

import uuid
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import Client

from ontrial.models.trial import AgentSpec, SandboxSettings, TrialSpec
from ontrial.tracing import tracing_interceptors
from worker.app import build_worker
from workflows import TrialInput, TrialWorkflow

TASK = Path(__file__).resolve().parents[1] / "workflows" / "fixtures" / "tasks" / "web-bad-image" / "task.yaml"


async def test_a_traced_trial_is_one_trace(temporal_env, trial_cluster, tmp_path):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    interceptors = tracing_interceptors(True, install_provider=False)
    config = temporal_env.client.config()
    client = Client(**{**config, "interceptors": interceptors})
    queue = f"traced-{uuid.uuid4().hex[:6]}"
    spec = TrialSpec(suite_id=f"traced-{uuid.uuid4().hex[:6]}", task_id="web-bad-image", task_file=str(TASK),
                     agent=AgentSpec(kind="noop"), sandbox=SandboxSettings(kubeconfig=trial_cluster.kubeconfig_path),
                     artifacts_root=str(tmp_path))
    async with build_worker(client, queue):
        await client.execute_workflow(TrialWorkflow.run, TrialInput(spec=spec), id=spec.trial_id, task_queue=queue)
    spans = exporter.get_finished_spans()
    names = {span.name for span in spans}
    assert {"StartWorkflow:TrialWorkflow", "RunWorkflow:TrialWorkflow", "RunActivity:run_agent",
            "RunActivity:teardown"} <= names, names
    assert len({span.context.trace_id for span in spans if "TrialWorkflow" in span.name or "Activity" in span.name}) == 1
