"""The triage replay rig shared by ``tests/runbooks/test_triage.py`` and ``benchmarks/triage_fanout.py``.

The real Jira and Jenkins tools run through the real tool pipeline against a
:class:`~fixtures_replay.ReplayServer` (pytest-httpserver; ``delay_s`` adds latency per response and
``watch("/")`` gauges how many requests are in flight); :class:`Harness` calls them as a triage run
does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from pydantic import SecretStr

from devops_agent.config import Settings
from devops_agent.config.settings import JenkinsSettings, JiraSettings
from devops_agent.deps import ToolDeps
from devops_agent.events import RunEvent
from devops_agent.policies.breaker import BreakerBoard
from devops_agent.policies.pipeline import RunPolicy, ToolCaller, build_pipeline
from devops_agent.report import Report
from devops_agent.runbooks.triage import run_triage
from devops_agent.tools import jenkins as jenkins_tools
from devops_agent.tools import jira as jira_tools
from devops_agent.tools.base import ToolsetBuilder
from fixtures_replay import FIXTURES, ReplayServer

USER, TOKEN = "mia@example.com", "11e5f0d1c2b3a4958677f0e1d2c3b4a5a6"
API = "/rest/api/2"
DEPLOY, BUILD, NIGHTLY = (
    "/job/payments/job/deploy/412",
    "/job/payments/job/build/1207",
    "/job/checkout/job/nightly/57",
)
TRIAGE = FIXTURES / "triage"


def add_ticket(srv: ReplayServer, key: str, description: str | None = None) -> None:
    issue = json.loads((TRIAGE / "issue_OPS-200.json").read_text())
    issue["key"] = key
    if description is not None:
        issue["fields"]["description"] = description
        issue["fields"]["comment"] = {"comments": [], "total": 0, "maxResults": 0, "startAt": 0}
    body = json.dumps(issue).replace("https://ci.example.com", srv.url)
    srv.add("GET", f"{API}/issue/{key}", body=body.encode(), headers={"Content-Type": "application/json"})
    srv.add("GET", f"{API}/issue/{key}/remotelink", body=[])


def add_build(srv: ReplayServer, path: str, console: str, report: str | None, info: str) -> None:
    log = (FIXTURES / console).read_bytes()
    srv.add("GET", f"{path}/logText/progressiveText", fixture=console, headers={"X-Text-Size": str(len(log))})
    if report is not None:
        srv.add("GET", f"{path}/testReport/api/json", fixture=report)
    srv.add("GET", f"{path}/api/json", fixture=info)


class Harness:
    """Triage as a runbook run calls it: the real jira and jenkins toolsets behind the real tool
    pipeline (ask mode, approvals denied, the analyzers' output cap), called by name."""

    def __init__(self, url: str, more: Sequence[ToolsetBuilder] = ()) -> None:
        self.settings = Settings(
            jira=JiraSettings(url=url, user=USER, token=SecretStr(TOKEN), deployment="server"),
            jenkins=JenkinsSettings(url=url, user=USER, token=SecretStr(TOKEN)),
        )
        builders = [jira_tools.build(self.settings), jenkins_tools.build(self.settings), *more]
        toolsets = [b.to_pydantic_ai() for b in builders]
        policy = RunPolicy(
            mode="ask",
            approvals="deny",
            breakers=BreakerBoard(self.settings.tools.breaker),
            cap_chars=self.settings.tools.analyzer_cap_chars,
            audit_reads=False,
        )
        self.call_tool = ToolCaller(
            build_pipeline(toolsets, self.settings, policy), deps=ToolDeps(self.settings)
        )
        self.events: list[RunEvent] = []

    def run(self, ref: str, **kwargs: Any) -> Report:
        return asyncio.run(run_triage(ref, self.call_tool, self.events.append, **kwargs))


def fan_out_ticket(srv: ReplayServer, key: str, n: int) -> None:
    links = "\n".join(f"* {srv.url}/job/perf/job/api/{i}/" for i in range(1, n + 1))
    add_ticket(srv, key, description=f"Builds of the api job:\n{links}")
    for i in range(1, n + 1):
        add_build(
            srv,
            f"/job/perf/job/api/{i}",
            "jenkins/console_maven_failure.txt",
            "triage/testreport_deploy_412.json",
            "jenkins/build_deploy_412.json",
        )
