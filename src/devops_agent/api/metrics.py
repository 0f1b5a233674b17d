"""Prometheus metrics of the service, in a registry of its own (``/metrics``).

Counters and histograms are fed by :class:`~devops_agent.api.tracker.RunTracker` from each run's
``RunEvent`` stream (what the run did, as every client sees it); breaker states and pending
approvals are read from the store at scrape time, so they include other processes' work.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from devops_agent.agent.approvals import PENDING_KEY
from devops_agent.events import RunEvent, RunFinished, RunStarted, ToolResultEvent
from devops_agent.store import Store

BREAKER_VALUE = {"closed": 0.0, "half_open": 1.0, "open": 2.0}
RUN_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800)
TOOL_BUCKETS = (0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class _StoreCollector(Collector):
    """Breaker states and pending approvals, read from the store when scraped."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[GaugeMetricFamily]:
        breakers = GaugeMetricFamily(
            "devops_agent_breaker_state",
            "Circuit breaker per tool: 0 closed, 1 half-open, 2 open",
            labels=["tool"],
        )
        pending = GaugeMetricFamily(
            "devops_agent_approvals_pending", "Tool calls waiting for a person's approval"
        )
        try:
            for b in self.store.load_breakers():
                breakers.add_metric([b.tool], BREAKER_VALUE.get(b.state, 0.0))
            paused, _total = self.store.find_sessions(status="paused", limit=10_000)
            pending.add_metric([], float(sum(len(s.context_state.get(PENDING_KEY) or {}) for s in paused)))
        except Exception:  # noqa: BLE001 - a scrape must answer even when the store does not
            return
        yield breakers
        yield pending


class Metrics:
    """The service's metrics."""

    def __init__(self, store: Store) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.runs_started = Counter("devops_agent_runs_started", "Runs started", ["path"], registry=r)
        self.runs_finished = Counter(
            "devops_agent_runs_finished", "Runs finished, by status", ["path", "status"], registry=r
        )
        self.run_duration = Histogram(
            "devops_agent_run_duration_seconds", "Run duration", ["path"], buckets=RUN_BUCKETS, registry=r
        )
        self.tool_calls = Counter(
            "devops_agent_tool_calls", "Tool calls, by tool and status", ["tool", "status"], registry=r
        )
        self.tool_latency = Histogram(
            "devops_agent_tool_latency_seconds",
            "Tool call latency",
            ["tool"],
            buckets=TOOL_BUCKETS,
            registry=r,
        )
        self.model_tokens = Counter(
            "devops_agent_model_tokens", "Model tokens used, input or output", ["kind"], registry=r
        )
        self.ws_clients = Gauge("devops_agent_ws_clients", "Connected WebSocket clients", registry=r)
        self.requests = Counter(
            "devops_agent_http_requests",
            "HTTP requests, by method and status",
            ["method", "status"],
            registry=r,
        )
        r.register(_StoreCollector(store))

    def observe(self, event: RunEvent, path: str) -> None:
        """Count what one event of a run says."""
        if isinstance(event, RunStarted):
            self.runs_started.labels(event.path).inc()
        elif isinstance(event, ToolResultEvent):
            self.tool_calls.labels(event.tool, event.status).inc()
            if event.duration_ms is not None:
                self.tool_latency.labels(event.tool).observe(event.duration_ms / 1000)
        elif isinstance(event, RunFinished):
            self.runs_finished.labels(path, event.status).inc()
            usage = event.usage or {}
            for kind in ("input", "output"):
                if usage.get(f"{kind}_tokens"):
                    self.model_tokens.labels(kind).inc(float(usage[f"{kind}_tokens"]))

    def render(self) -> bytes:
        """The exposition text of every metric."""
        return generate_latest(self.registry)
