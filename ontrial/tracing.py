"""OpenTelemetry tracing for Temporal clients and workers (optional).

With tracing on, every trial is one trace: StartWorkflow, RunWorkflow, and a StartActivity /
RunActivity span per step. Spans go to the exporter named by ``exporter``: "console" prints them
(handy locally), "none" keeps the provider without exporting (tests). Production deployments set
their own global TracerProvider before calling ``tracing_interceptors(install_provider=False)``.
"""

from __future__ import annotations

from typing import Literal

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
from temporalio.client import Interceptor
from temporalio.contrib.opentelemetry import TracingInterceptor

Exporter = Literal["console", "none"]


def install_tracer_provider(service_name: str, exporter: Exporter = "console") -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    if exporter == "console":
        provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
    trace.set_tracer_provider(provider)
    return provider


def tracing_interceptors(enabled: bool, *, service_name: str = "ontrial-worker", exporter: Exporter = "console",
                         install_provider: bool = True) -> list[Interceptor]:
    """Client interceptors to pass to ``Client.connect`` (workers inherit them); [] when disabled."""
    if not enabled:
        return []
    if install_provider:
        install_tracer_provider(service_name, exporter)
    return [TracingInterceptor()]
