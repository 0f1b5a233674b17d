"""OpenTelemetry traces over OTLP, when the standard ``OTEL_EXPORTER_OTLP_*`` variables say where.

One trace per run: the service opens a ``run`` span around starting it, so the run's task (which
copies the context it was created in) makes its tool spans — the pipeline's telemetry wrapper
opens one per call — children of that span. The exporter is OTLP over HTTP/protobuf (it reads
the endpoint, headers and timeouts from the environment itself).
"""

from __future__ import annotations

import os

import structlog
from opentelemetry import trace

log = structlog.get_logger(__name__)
ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def configure_tracing() -> object | None:
    """Install an OTLP exporting tracer provider when an endpoint is set; returns it (to shut down)."""
    if not any(os.environ.get(v) for v in ENDPOINT_VARS):
        return None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    protocol = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get(
        "OTEL_EXPORTER_OTLP_PROTOCOL"
    )
    if protocol and protocol != "http/protobuf":
        log.warning("otlp_protocol_unsupported", protocol=protocol, using="http/protobuf")
    service = os.environ.get("OTEL_SERVICE_NAME") or "devops-agent"
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return provider


def shutdown_tracing(provider: object | None) -> None:
    """Flush and stop the provider :func:`configure_tracing` installed."""
    shutdown = getattr(provider, "shutdown", None)
    if callable(shutdown):
        shutdown()
