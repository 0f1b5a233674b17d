"""The triage replay rig shared by ``tests/test_triage.py`` and ``benchmarks/triage_fanout.py``.

The real Jira and Jenkins tools run through the real tool middleware against
:class:`SlowReplay`, a replay server that can add latency per response and gauges how many
requests are in flight; :class:`Harness` is the session's offline ``call_tool`` in miniature.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import SecretStr

from devops_agent.agent.report import Report
from devops_agent.config import Settings
from devops_agent.config.settings import JenkinsSettings, JiraSettings
from devops_agent.events import RunEvent
from devops_agent.policies.breaker import BreakerBoard
from devops_agent.policies.middleware import ToolMiddleware
from devops_agent.runbooks.triage import run_triage
from devops_agent.tools import jenkins as jenkins_tools
from devops_agent.tools import jira as jira_tools
from devops_agent.tools.base import ToolResult
from replay.server import FIXTURES, Recorded, ReplayServer, Reply

USER, TOKEN = "mia@example.com", "11e5f0d1c2b3a4958677f0e1d2c3b4a5a6"
API = "/rest/api/2"
DEPLOY, BUILD, NIGHTLY = (
    "/job/payments/job/deploy/412",
    "/job/payments/job/build/1207",
    "/job/checkout/job/nightly/57",
)
TRIAGE = FIXTURES / "triage"


class SlowReplay(ReplayServer):
    """The replay server with a per-response delay and a gauge of requests in flight."""

    def __init__(self) -> None:
        super().__init__()
        self.delay_s = 0.0
        self.in_flight = 0
        self.peak = 0
        self._gauge = threading.Lock()

    def _reply_for(self, rec: Recorded) -> Reply:
        with self._gauge:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            time.sleep(self.delay_s)
            return super()._reply_for(rec)
        finally:
            with self._gauge:
                self.in_flight -= 1

    def count(self, path: str) -> int:
        return len([r for r in self.requests if r.path == path])


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
    """The session's offline ``call_tool`` in miniature: catalog → middleware → tool in a thread."""

    def __init__(self, url: str) -> None:
        self.settings = Settings(
            jira=JiraSettings(url=url, user=USER, token=SecretStr(TOKEN), deployment="server"),
            jenkins=JenkinsSettings(url=url, user=USER, token=SecretStr(TOKEN)),
        )
        self.entries = {
            **jira_tools.build(self.settings).entries,
            **jenkins_tools.build(self.settings).entries,
        }
        self.middleware = ToolMiddleware(
            self.settings.tools,
            BreakerBoard(self.settings.tools.breaker),
            cap_chars=self.settings.tools.analyzer_cap_chars,
        )
        self.events: list[RunEvent] = []
        # The default executor has min(32, cpu + 4) threads: too few to see a cap of 8 on 2 cores.
        self.pool = ThreadPoolExecutor(max_workers=16)

    async def call_tool(self, name: str, args: dict[str, Any]) -> ToolResult:
        entry = self.entries.get(name)
        if entry is None:
            return ToolResult.fail(f"unknown tool {name!r}", "`devops-agent tools list` shows the tools")
        loop = asyncio.get_running_loop()

        async def call() -> Any:
            return await loop.run_in_executor(self.pool, functools.partial(entry.function, **args))

        return await self.middleware.invoke(name, args, call, spec=entry.spec)

    def run(self, ref: str, **kwargs: Any) -> Report:
        try:
            return asyncio.run(run_triage(ref, self.call_tool, self.events.append, **kwargs))
        finally:
            self.pool.shutdown(wait=True)


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
