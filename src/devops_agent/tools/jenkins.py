"""The ``jenkins`` toolset: builds, console logs, test reports and last builds of Jenkins jobs, and
triggering a build, through ``python-jenkins``.

Jobs and builds are named by a job name (``team/api``) or any Jenkins URL (classic, nested
folders, Blue Ocean; parsed by :mod:`devops_agent.analysis.ci_urls`). Credentials come from
``settings.jenkins`` (``url``, ``user``, ``token`` as ``SecretStr``) and are only ever sent to that
server: a URL on another host is refused rather than followed with our token. Requests go through
the client's ``jenkins_request`` so its auth, crumb and session handling are used, while the
status codes stay visible for mapping: 401/403 → auth hint, 404 → "no such job/build", 429 →
transient with ``retry_after_s``, 5xx and timeouts → transient. Console logs are streamed and
capped (``console_max_bytes``), never read whole into memory. This module must not change
anything on the server except in ``jenkins_trigger_build`` (read_only=False, through approval).
"""

from __future__ import annotations

import re
from collections import deque
from contextlib import closing
from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field
from pydantic_ai import RunContext

from devops_agent.analysis.ci_urls import BuildRef, parse_job_or_url
from devops_agent.analysis.logsummary import summarize_log
from devops_agent.config import Settings
from devops_agent.config.settings import JenkinsSettings
from devops_agent.deps import ToolDeps
from devops_agent.tools.base import ToolResult
from devops_agent.tools.evidence import summary_evidence
from devops_agent.tools.http_status import ErrorTable, Rule, bad_base_url, retry_after_seconds
from devops_agent.tools.integration import Integration, ToolFailure

NAME = "jenkins"
DESCRIPTION = "Read Jenkins builds, console logs and test reports; trigger builds"

MAX_FAILED_CASES = 50
STACK_MAX_LINES = 30
STACK_MAX_CHARS = 3000
CHUNK = 64 * 1024
_WHICH = {
    "failed": "lastFailedBuild",
    "successful": "lastSuccessfulBuild",
    "completed": "lastCompletedBuild",
    "any": "lastBuild",
}
_NOT_CONFIGURED = (
    "set jenkins.url/jenkins.user/jenkins.token (DEVOPS_AGENT_JENKINS__URL, DEVOPS_AGENT_JENKINS__USER, "
    "DEVOPS_AGENT_JENKINS__TOKEN) in devops-agent.toml or the environment"
)
_AUTH_HINT = (
    "check jenkins.user and jenkins.token (an API token from <jenkins>/user/<you>/configure); "
    "the account may also lack permission on this job"
)
_STATUS_IN_MESSAGE = re.compile(r"\[(\d{3})\]")
ERRORS = ErrorTable(
    "Jenkins",
    timeout_hint="retry later or raise jenkins.timeout_s",
    unreachable_hint="check jenkins.url and the network path to it",
    rules={
        401: Rule("Jenkins refused the request (401)", _AUTH_HINT),
        403: Rule("Jenkins refused the request (403)", _AUTH_HINT),
        404: Rule(
            "no such {what} (404)",
            "check the job name (folders separated by '/') and the build number; "
            "jenkins_last_build finds builds",
        ),
    },
    fallback=Rule("Jenkins request failed{said}"),
)


class Jenkins(Integration[JenkinsSettings]):
    """The Jenkins server of ``settings.jenkins``, through ``python-jenkins``."""

    name = NAME
    description = DESCRIPTION
    extra = "jenkins"
    package = "python-jenkins"
    modules = ("jenkins",)

    def section(self, settings: Settings) -> JenkinsSettings:
        return settings.jenkins

    def configured(self, settings: Settings) -> bool:
        return bool(settings.jenkins.url)

    def unusable(self, section: JenkinsSettings) -> ToolResult | None:
        if not (section.url and section.user and section.token and section.token.get_secret_value()):
            return ToolResult.fail("Jenkins is not configured", _NOT_CONFIGURED)
        return bad_base_url("jenkins.url", base_url(section), "DEVOPS_AGENT_JENKINS__URL")

    def connect(self, section: JenkinsSettings, **options: Any) -> Any:
        token = section.token.get_secret_value() if section.token else ""  # unusable() said it is set
        return self.client_module().Jenkins(
            base_url(section), username=section.user, password=token, timeout=section.timeout_s
        )

    def close(self, client: Any) -> None:
        client._session.close()  # python-jenkins has no public close; its pool would leak sockets

    def client_errors(self) -> tuple[type[Exception], ...]:
        import requests

        return (self.client_module().JenkinsException, requests.RequestException)

    def map_error(
        self, exc: Exception, what: str, section: JenkinsSettings, client: Any = None, **context: Any
    ) -> ToolResult:
        """A ``python-jenkins``/``requests`` exception as a failed result."""
        import requests

        jenkins = self.client_module()
        status: int | None = None
        retry_after: float | None = None
        if isinstance(exc, jenkins.NotFoundException):
            status = 404
        elif isinstance(exc, jenkins.TimeoutException | requests.Timeout):
            return ERRORS.timeout()
        elif isinstance(exc, requests.HTTPError) and exc.response is not None:
            status = exc.response.status_code
            retry_after = retry_after_seconds(exc.response.headers.get("Retry-After"))
        elif isinstance(exc, requests.ConnectionError):
            return ERRORS.unreachable()
        elif isinstance(exc, jenkins.JenkinsException):
            # python-jenkins folds 401/403/500 into a message "... failed [401]: Unauthorized".
            found = _STATUS_IN_MESSAGE.search(str(exc))
            status = int(found.group(1)) if found else None
        # The exception's text is the client's wording, not the server's: only a status the table
        # has no words for is explained with it.
        known = status is not None and (status in ERRORS.rules or status == 429 or status >= 500)
        first = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        return ERRORS.result(status, what=what, detail="" if known else first, retry_after=retry_after)

    def probe(self, client: Any, section: JenkinsSettings) -> str:
        """``GET /api/json`` with our credentials: the version and mode."""
        import requests

        url = base_url(section)
        resp = client.jenkins_request(requests.Request("GET", url + "api/json"), add_crumb=False)
        return f"{url} (version {resp.headers.get('X-Jenkins') or 'unknown'}, mode {resp.json().get('mode')})"


JENKINS = Jenkins()
"""The integration: settings, client, errors, health check; its tools are declared below."""


def base_url(section: JenkinsSettings) -> str:
    """``jenkins.url`` with one trailing slash, as job paths are appended to it."""
    return (section.url or "").rstrip("/") + "/"


def _iso(ms: Any) -> str | None:
    if not isinstance(ms, int | float) or not ms:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat()


def _actions(info: dict[str, Any], key: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for action in info.get("actions") or []:
        if isinstance(action, dict):
            out.extend(action.get(key) or [])
    return out


def _commits(info: dict[str, Any]) -> list[dict[str, Any]]:
    sets = info.get("changeSets") or ([info["changeSet"]] if info.get("changeSet") else [])
    commits = []
    for change_set in sets:
        for item in change_set.get("items") or []:
            commits.append(
                {
                    "commit": item.get("commitId") or item.get("id"),
                    "author": (item.get("author") or {}).get("fullName"),
                    "message": (item.get("msg") or item.get("comment") or "").strip(),
                    "timestamp": _iso(item.get("timestamp")),
                    "paths": (item.get("affectedPaths") or [])[:20],
                }
            )
    return commits


def build_summary(info: dict[str, Any]) -> dict[str, Any]:
    """The parts of a build's ``api/json`` that matter for triage."""
    return {
        "job": info.get("fullDisplayName"),
        "number": info.get("number"),
        "url": info.get("url"),
        "result": info.get("result") or ("RUNNING" if info.get("building") else None),
        "building": bool(info.get("building")),
        "timestamp": _iso(info.get("timestamp")),
        "duration_s": round((info.get("duration") or 0) / 1000, 1),
        "estimated_duration_s": round((info.get("estimatedDuration") or 0) / 1000, 1),
        "built_on": info.get("builtOn") or None,
        "causes": [c.get("shortDescription") for c in _actions(info, "causes")],
        # Password parameters come back without a value; keep it that way.
        "parameters": {p.get("name"): p.get("value") for p in _actions(info, "parameters")},
        "commits": _commits(info),
        "culprits": [c.get("fullName") for c in info.get("culprits") or []],
    }


def _stack_excerpt(trace: str | None) -> str | None:
    if not trace:
        return None
    lines = trace.splitlines()
    text = "\n".join(lines[:STACK_MAX_LINES])[:STACK_MAX_CHARS]
    return text + ("\n…" if len(lines) > STACK_MAX_LINES or len(text) == STACK_MAX_CHARS else "")


def _target(section: JenkinsSettings, url_or_job: str, number: int | str | None) -> BuildRef:
    """The build a tool's arguments name, on the configured server (anything else: ToolFailure)."""
    ref = parse_job_or_url(url_or_job)
    if ref is None:
        raise ToolFailure(
            ToolResult.fail(
                f"{url_or_job!r} is not a Jenkins job name or URL",
                "pass a job name like 'team/api' or a build URL like https://ci/job/team/job/api/42/",
            )
        )
    if ref.base_url and _origin(ref.base_url) != _origin(base_url(section)):
        raise ToolFailure(
            ToolResult.fail(
                f"{ref.base_url} is not the configured Jenkins ({base_url(section)})",
                "only the server in jenkins.url is queried (its token is not sent elsewhere)",
            )
        )
    build_no = number if number is not None else ref.build
    return BuildRef(base_url(section), ref.job, build_no)


def _get(server: Any, path: str, params: dict[str, Any] | None = None, stream: bool = False) -> Any:
    import requests

    req = requests.Request("GET", server.server + path, params=params or {})
    return server.jenkins_request(req, add_crumb=False, stream=stream or None)


def _build_info(server: Any, ref: BuildRef) -> dict[str, Any]:
    info: dict[str, Any] = _get(server, f"{ref.job_path}{ref.build or 'lastBuild'}/api/json").json()
    return info


def _read_from(server: Any, path: str, offset: int, cap: int) -> dict[str, Any]:
    """Up to ``cap`` bytes of the log from byte ``offset`` (progressive: ``next_start`` goes on)."""
    with closing(_get(server, path, {"start": offset}, stream=True)) as resp:
        buf = bytearray()
        for chunk in resp.iter_content(CHUNK):
            buf += chunk
            if len(buf) > cap:
                break
        building = resp.headers.get("X-More-Data", "").lower() == "true"
        end = _text_size(resp)
    body = bytes(buf[:cap])
    truncated = len(buf) > cap
    # Offsets count the log file's bytes, and the plain text leaves out Jenkins' console
    # notes (hyperlinks, Pipeline step markers: hundreds of bytes each): once the whole answer
    # is read, X-Text-Size says where it ended. Cut short, the file offset of the cut is
    # unknown; offset + len(body) is not past it, so the next call may repeat a little text
    # but never skips any.
    return {
        "text": body.decode("utf-8", errors="replace"),
        "start": offset,
        "next_start": end if end is not None and not truncated else offset + len(body),
        "truncated": truncated,
        "building": building,
    }


def _read_tail(server: Any, path: str, tail_lines: int, window: int) -> dict[str, Any]:
    """The last ``tail_lines`` lines, reading at most the last ``window`` bytes of the log.

    Jenkins sends the log size (``X-Text-Size``) before the text, so a long log is closed
    unread and asked for again from ``size - window``.
    """
    resp = _get(server, path, {"start": 0}, stream=True)
    size = _text_size(resp)
    offset = 0
    if size is not None and size > window:
        resp.close()
        offset = size - window
        resp = _get(server, path, {"start": offset}, stream=True)
    lines: deque[bytes] = deque(maxlen=tail_lines)
    partial, seen, read = b"", 0, 0
    with closing(resp):
        building = resp.headers.get("X-More-Data", "").lower() == "true"
        for chunk in resp.iter_content(CHUNK):
            read += len(chunk)
            parts = (partial + chunk).split(b"\n")
            partial = parts.pop()[-window:]  # a log without newlines must not grow unbounded
            lines.extend(parts)
            seen += len(parts)
    if partial:
        lines.append(partial)
        seen += 1
    if offset and seen > 1 and len(lines) == seen:
        lines.popleft()  # the window starts inside a line (kept when it is all there is)
        seen -= 1
    end = _text_size(resp)
    total = size if size is not None else read
    return {
        "text": "\n".join(ln.decode("utf-8", errors="replace").rstrip("\r") for ln in lines),
        "lines": len(lines),
        "total_lines": None if offset else seen,
        "total_bytes": total,
        "truncated": bool(offset) or seen > len(lines),
        "building": building,
        "next_start": end if end is not None else offset + read,
    }


@JENKINS.tool(category="ci", read_only=True)
def jenkins_build(ctx: RunContext[ToolDeps], url_or_job: str, number: int | None = None) -> ToolResult:
    """Show one Jenkins build: result, duration, start time, causes, parameters, commits, URL.

    Args:
        url_or_job: a build or job URL (classic, folder or Blue Ocean) or a job name such as "team/api".
        number: the build number; default: the number in the URL, else the last build.
    """

    def run(server: Any, section: JenkinsSettings) -> ToolResult:
        info = _build_info(server, _target(section, url_or_job, number))
        return ToolResult.ok(build_summary(info), source="jenkins build")

    return JENKINS.call(ctx.deps.settings, "job or build", run)


@JENKINS.tool(category="ci", read_only=True)
def jenkins_console(
    ctx: RunContext[ToolDeps],
    url_or_job: str,
    number: int | None = None,
    tail_lines: Annotated[int, Field(ge=1, le=5000)] = 200,
    full: bool = False,
    start: Annotated[int, Field(ge=0)] = 0,
    summarize: bool = True,
) -> ToolResult:
    """Read a build's console log: by default its last lines (where failures usually are).

    With full=True it returns the log from byte offset `start`, capped at the configured size;
    `next_start` continues from where it stopped (also for a build that is still running).

    Args:
        url_or_job: a build URL (classic, folder or Blue Ocean, /console pages too) or a job name.
        number: the build number; default: the number in the URL, else the last build.
        tail_lines: how many of the last lines to return when full is false (1-5000).
        full: return the log from `start` instead of the tail (capped; `truncated` says so).
        start: byte offset to read from when full is true: the previous call's next_start (an
            offset in Jenkins' log file, which holds console notes the text leaves out).
        summarize: a log of more than 400 lines comes back as error signatures, templates and
            its last lines instead of `text` (the full log is kept for the user).
    """

    def run(server: Any, section: JenkinsSettings) -> ToolResult:
        ref = _target(section, url_or_job, number)
        path = f"{ref.job_path}{ref.build or 'lastBuild'}/logText/progressiveText"
        if full:
            data = _read_from(server, path, start, section.console_max_bytes)
        else:
            data = _read_tail(server, path, tail_lines, section.console_max_bytes)
        if not data["text"] and not (full and start > 0):
            return ToolResult.empty("the console log is empty (the build may not have started yet)")
        summary = summarize_log(data["text"], ref.url) if summarize else None
        if summary is None:
            return ToolResult.ok({"url": ref.url, **data}, source="jenkins console")
        text = data.pop("text")
        return (
            ToolResult.ok({"url": ref.url, **data, **summary}, source="jenkins console")
            .with_raw(text)
            .with_evidence(summary_evidence(summary))
        )

    return JENKINS.call(ctx.deps.settings, "job or build", run)


@JENKINS.tool(category="ci", read_only=True)
def jenkins_test_report(
    ctx: RunContext[ToolDeps],
    url_or_job: str,
    number: int | None = None,
    max_failures: Annotated[int, Field(ge=1, le=MAX_FAILED_CASES)] = 20,
) -> ToolResult:
    """Summarize a build's test report: counts, and each failed test with its error and stack trace start.

    Args:
        url_or_job: a build URL (classic, folder or Blue Ocean, /testReport pages too) or a job name.
        number: the build number; default: the number in the URL, else the last build.
        max_failures: most failed test cases to list (1-50).
    """

    def run(server: Any, section: JenkinsSettings) -> ToolResult:
        jenkins = JENKINS.client_module()
        ref = _target(section, url_or_job, number)
        try:
            report: dict[str, Any] = _get(
                server, f"{ref.job_path}{ref.build or 'lastBuild'}/testReport/api/json"
            ).json()
        except jenkins.NotFoundException:
            _build_info(server, ref)  # 404 here too means the build itself does not exist
            return ToolResult.empty(f"{ref.url} has no test report (no tests were recorded)")
        failed = []
        for suite in report.get("suites") or []:
            for case in suite.get("cases") or []:
                if case.get("status") in ("FAILED", "REGRESSION"):
                    failed.append(
                        {
                            "class": case.get("className"),
                            "name": case.get("name"),
                            "status": case.get("status"),
                            "age": case.get("age"),
                            "duration_s": case.get("duration"),
                            "error": case.get("errorDetails"),
                            "stack_trace": _stack_excerpt(case.get("errorStackTrace")),
                        }
                    )
        data = {
            "url": ref.url,
            "failed": report.get("failCount", len(failed)),
            "passed": report.get("passCount"),
            "skipped": report.get("skipCount"),
            "duration_s": report.get("duration"),
            "failed_cases": failed[:max_failures],
            "failed_cases_truncated": len(failed) > max_failures,
        }
        return ToolResult.ok(data, source="jenkins testReport")

    return JENKINS.call(ctx.deps.settings, "job or build", run)


@JENKINS.tool(category="ci", read_only=True)
def jenkins_last_build(
    ctx: RunContext[ToolDeps], job: str, which: Literal["failed", "successful", "completed", "any"] = "failed"
) -> ToolResult:
    """Find a job's last failed, successful, completed or latest build and summarize it.

    Use it to compare the last failure with the last success (what changed in between).

    Args:
        job: a job name such as "team/api" or the job's URL.
        which: "failed", "successful", "completed" or "any" (the latest build, maybe still running).
    """
    selector = _WHICH.get(which)
    if selector is None:
        return ToolResult.fail(f"unknown which={which!r}", "use failed, successful, completed or any")

    def run(server: Any, section: JenkinsSettings) -> ToolResult:
        ref = _target(section, job, None)
        info = _get(server, f"{ref.job_path}api/json", {"tree": f"fullName,{selector}[number,url]"}).json()
        last = info.get(selector)
        if not last:
            return ToolResult.empty(f"{ref.job} has no {which} build")
        summary = build_summary(_build_info(server, BuildRef(ref.base_url, ref.job, last["number"])))
        return ToolResult.ok(summary, source=f"jenkins {selector}")

    return JENKINS.call(ctx.deps.settings, "job", run)


@JENKINS.tool(category="ci", read_only=False, risk="sensitive")
def jenkins_trigger_build(
    ctx: RunContext[ToolDeps], job: str, parameters: dict[str, str] | None = None
) -> ToolResult:
    """Start a build of a Jenkins job (with parameters for a parameterized job); returns the queue item.

    Args:
        job: a job name such as "team/api" or the job's URL.
        parameters: build parameters by name, e.g. {"BRANCH": "main"}; omit for a job without parameters.
    """

    def run(server: Any, section: JenkinsSettings) -> ToolResult:
        ref = _target(section, job, None)
        queue_id = server.build_job(ref.job, dict(parameters) if parameters else None)
        return ToolResult.ok(
            {
                "job": ref.job,
                "queue_item": queue_id,
                "queue_url": f"{base_url(section)}queue/item/{queue_id}/",
                "parameters": parameters or {},
            },
            source="jenkins build trigger",
        )

    return JENKINS.call(ctx.deps.settings, "job", run)


def _text_size(resp: Any) -> int | None:
    """``X-Text-Size`` of a ``progressiveText`` answer: the log file offset its text ends at."""
    value = str(resp.headers.get("X-Text-Size", "")).strip()
    return int(value) if value.isdigit() else None


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


build = JENKINS.build
check = JENKINS.check
register = JENKINS.register
