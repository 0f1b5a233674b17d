"""Logging and tracing set-up (foundation layer).

Structured logs go to stderr through structlog (JSON when ``json_logs`` is set, readable
otherwise) so that stdout stays clean for reports and ``--json`` output. Tracing uses the
OpenTelemetry API: spans are no-ops until a tracer provider is installed (tests install an
in-memory exporter; a deployment installs an OTLP exporter).
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog
from opentelemetry import trace
from structlog.typing import ExcInfo

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def one_line_exception(sio: TextIO, exc_info: ExcInfo) -> None:
    """An exception logged at a level below debug: its type and message only, and how to see more."""
    exc = exc_info[1]
    sio.write(f"\n{type(exc).__name__}: {exc} (rerun with --debug for the traceback)")


def configure_logging(level: str = "warning", *, json_logs: bool = False) -> None:
    """Send structured logs at ``level`` and above to stderr.

    A logged exception is one line unless ``level`` is debug, which adds a plain traceback. No
    traceback shows local variables (structlog's default with rich installed): they can hold
    secrets and user data."""
    numeric = _LEVELS.get(level, logging.WARNING)
    formatter = structlog.dev.plain_traceback if numeric <= logging.DEBUG else one_line_exception
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if json_logs
        else structlog.dev.ConsoleRenderer(colors=False, exception_formatter=formatter)
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


_ACTIVE: tuple[trace.TracerProvider, trace.Tracer] | None = None


def active_tracer() -> trace.Tracer | None:
    """The package tracer of the installed provider, or ``None`` while none is installed (every
    span would be dropped). For code on every tool call: a no-op span still costs a context switch
    and a proxy hop (3 µs), and a provider installed later is picked up at the next call."""
    global _ACTIVE
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None
    if _ACTIVE is None or _ACTIVE[0] is not provider:
        _ACTIVE = (provider, provider.get_tracer("devops_agent"))
    return _ACTIVE[1]
