"""The prometheus toolset assembled: every tool of this package on one :class:`Server`, the
health check ``doctor`` runs, and the entry point that registers both."""

from __future__ import annotations

from typing import Any

import httpx

from devops_agent.config import Settings
from devops_agent.config.settings import PrometheusSettings
from devops_agent.tools.base import ToolsetBuilder
from devops_agent.tools.prometheus.anomalies import add_anomaly_tools
from devops_agent.tools.prometheus.catalog import add_catalog_tools
from devops_agent.tools.prometheus.client import NAME, PromClient, PromConfig, PromError, url_problem
from devops_agent.tools.prometheus.queries import add_query_tools
from devops_agent.tools.prometheus.server import Server
from devops_agent.tools.prometheus.slo import add_slo_tools
from devops_agent.tools.registry import ToolRegistry

DESCRIPTION = (
    "Query Prometheus: PromQL (instant and summarized range), series, labels, targets, alerts, rules"
)
DOCTOR_TIMEOUT_S = 3.0


def build(settings: Settings) -> ToolsetBuilder:
    """The prometheus toolset for the server at ``settings.prometheus.url``."""
    return build_for(PromConfig.from_settings(settings))


def build_for(config: PromConfig, transport: httpx.BaseTransport | None = None) -> ToolsetBuilder:
    """The prometheus toolset for ``config``; ``transport`` replaces the network (tests, proxies)."""
    ts = ToolsetBuilder(NAME, DESCRIPTION)
    server = Server(config, transport)
    add_query_tools(ts, server)
    add_anomaly_tools(ts, server)
    add_slo_tools(ts, server)
    add_catalog_tools(ts, server)
    return ts


def check(settings: Settings | Any, timeout_s: float = DOCTOR_TIMEOUT_S) -> tuple[bool, str]:
    """Health check for ``devops-agent doctor``: does ``prometheus.url`` answer its build-info API?"""
    config = PromConfig.from_settings(settings)
    problem = url_problem(config.url)
    if problem is not None:
        return False, problem
    client = PromClient(PromConfig(config.url, min(config.timeout_s, timeout_s), config.max_points))
    try:
        data, _warnings = client.get("status/buildinfo")
    except PromError as exc:
        return False, f"configured, not reachable: {exc.message}"
    version = data.get("version") if isinstance(data, dict) else None
    return True, f"{config.url} (Prometheus {version or 'version unknown'})"


def configured(settings: Settings) -> bool:
    """Whether doctor checks the server: a ``prometheus.url`` other than the default, toolset on."""
    return settings.prometheus.url != PrometheusSettings().url and NAME not in settings.tools.disabled


def register(registry: ToolRegistry) -> None:
    """Entry point of the ``devops_agent.toolsets`` group: the toolset and its health check, which
    only warns when it fails (the toolset is on by default; the agent works without it)."""
    registry.add_toolset(NAME, build, DESCRIPTION)
    registry.add_check(NAME, check, configured=configured, required=False)
