"""Logging and tracing set-up (foundation layer).

Structured logs go to stderr through structlog (JSON when ``json_logs`` is set, readable
otherwise) so that stdout stays clean for reports and ``--json`` output. Tracing uses the
OpenTelemetry API: spans are no-ops until a tracer provider is installed (tests install an
in-memory exporter; a deployment installs an OTLP exporter).
"""

from __future__ import annotations

import logging
import sys

import structlog
from opentelemetry import trace

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def configure_logging(level: str = "warning", *, json_logs: bool = False) -> None:
    """Send structured logs at ``level`` and above to stderr."""
    numeric = _LEVELS.get(level, logging.WARNING)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json_logs else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def tracer() -> trace.Tracer:
    """The package tracer; spans are recorded only when a provider is installed."""
    return trace.get_tracer("devops_agent")
