"""Incident triage as an offline workflow: Jira ticket → linked Jenkins builds → a triage report.

The generic runbook engine runs a static list of steps; triage has to fan out over the builds a
ticket links, look at what came back, and ask again (a full console log when the tail held no
error signature). :func:`run_triage` does that with the same ``call_tool`` (the session's tool
middleware), the same events and the same :class:`Report`, and :func:`render_triage_markdown`
renders it with every triage section present even when the evidence is partial.

Calls are memoized per run (an identical ``(tool, args)`` runs once), bounded (``max_parallel``
in flight), retried with exponential backoff when a result says ``transient=True`` (bounded by a
retry budget), and counted against ``step_budget``. Anything not gathered becomes a :class:`Gap`;
a finding is never invented for evidence that is missing.

This module must not import tools' clients, policies or interfaces, and must not create tasks it
does not await (every fan-out runs inside an ``asyncio.TaskGroup``).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from devops_agent.analysis import group_lines
from devops_agent.analysis.ci_urls import parse_job_or_url
from devops_agent.events import PlanProposed, ToolCall, ToolResultEvent
from devops_agent.report import Finding, Gap, Report, Severity, rank_findings
from devops_agent.results import ToolResult
from devops_agent.runbooks.engine import CallTool, Emit, call_guarded, emit_event, result_summary

NAME = "triage"
TITLE = "Incident triage of a Jira ticket"
DESCRIPTION = (
    "The ticket, the Jenkins builds it links (console tail and test report of each, in parallel), "
    "their error signatures, the full console of a failing build whose tail shows none, related "
    "tickets, knowledge-base passages and earlier findings. A workflow, not a YAML runbook: it runs "
    "alone, with `devops-agent triage KEY`, `--runbook triage`, or a Jira key in the question when "
    "Jira is configured."
)
SECTIONS = (
    "Summary",
    "Failing builds",
    "Root-cause hypotheses",
    "Related tickets and KB articles",
    "Next steps and owners",
    "What could not be gathered",
)
"""The report's section headings, in order; all are rendered even when empty."""

Confidence = Literal["high", "medium", "low"]

# A Jira issue key: a project key (a capital letter, then 1-9 capitals, digits or underscores: the
# shape Jira allows) and an issue number without a leading zero, standing as a word. Lowercase
# words of that shape (``db-7``, ``api-2``, ``utf-8``) are host and version names, not tickets,
# unless ``jira.projects`` names the project; so are these standards' names in capitals.
_KEY = re.compile(r"(?<![A-Za-z0-9_-])([A-Z][A-Z0-9_]{1,9}-[1-9]\d{0,8})(?![\w-])")
_ANY_CASE_KEY = re.compile(_KEY.pattern, re.IGNORECASE)
_STANDARDS = frozenset(
    {"UTF", "UCS", "SHA", "MD", "ISO", "IEC", "RFC", "CVE", "CWE", "TLS", "AES", "RSA", "HTTP"}
)
_URL = re.compile(r"https?://\S+")
_FINISHED = re.compile(r"^Finished: ([A-Z_]+)\s*$", re.M)
_FAILED_RESULTS = {"FAILURE", "UNSTABLE", "ABORTED"}
_EXCEPTION = re.compile(r"\b[\w.$]*(?:Exception|Error)\b")
_TEST_MARK = re.compile(r"^FAILED\s|<<< (?:FAILURE|ERROR)!|\s»\s|^E\s+|^ERROR\s+\S+::")
_BOILERPLATE = re.compile(
    r"^(?:\[ERROR\]\s*(?:->.*|Errors:?|Failures:?|Tests run:.*|Please refer to.*|To see the full stack.*"
    r"|Re-run Maven.*|For more information.*|\[Help \d+\].*)?|Finished: \w+|BUILD FAILURE"
    r"|ERROR: script returned exit code \d+|Build step .* marked build as failure"
    r"|\d+ failed(?:, \d+ \w+)* in .*|=+ .* =+)\s*$",
    re.I,
)
_WORD = re.compile(r"[a-z]{4,}")
_STOP = frozenset(
    {"error", "exception", "failed", "failure", "test", "tests", "java", "after", "with", "from"}
)
_CATEGORIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"timed? ?out|timeout", re.I), "a timeout talking to a dependency"),
    (
        re.compile(r"connection refused|unknownhost|no route to host|\b50[234]\b|bad gateway", re.I),
        "a dependency that is down or unreachable",
    ),
    (re.compile(r"outofmemory|out of memory|oomkilled|heap space", re.I), "memory exhaustion"),
    (
        re.compile(
            r"cannot find symbol|compilation|syntaxerror|modulenotfound|importerror|no such file", re.I
        ),
        "a code or dependency change that breaks the build",
    ),
    (re.compile(r"assert", re.I), "a behaviour change caught by a test assertion"),
)
_MAX_SIGNATURE_LINES = 6
_MAX_KB_QUERIES = 3
_MAX_BACKOFF_S = 5.0


# -- input ------------------------------------------------------------------------------------


def find_ticket_ref(text: str, *, projects: Sequence[str] = (), any_case: bool = False) -> str | None:
    """The first Jira issue key in ``text``: a bare key, a ``/browse/KEY`` URL or ``?selectedIssue=``.

    A bare key must be in capitals (``OPS-123``), unless ``any_case`` (the text is a ticket
    reference the user gave as such) or its project is one of ``projects`` (``jira.projects``:
    then only those projects' keys count, in any case). Jenkins URLs in the same text are skipped
    (a job named ``APP-2`` is not a ticket).
    """
    wanted = {p.upper() for p in projects}
    for match in _URL.finditer(text):
        parts = urlsplit(match.group(0).rstrip(".,;:!?)("))
        selected = parse_qs(parts.query).get("selectedIssue")
        if selected and _KEY.fullmatch(selected[0].upper()):
            return selected[0].upper()
        segs = [s for s in parts.path.split("/") if s]
        for i, seg in enumerate(segs[:-1]):
            if seg in ("browse", "issue") and _KEY.fullmatch(segs[i + 1].upper()):
                return segs[i + 1].upper()
    without_urls = _URL.sub(" ", text)
    rx = _ANY_CASE_KEY if any_case or wanted else _KEY
    for found in rx.finditer(without_urls):
        key = found.group(1).upper()
        project = key.rsplit("-", 1)[0]
        if (project in wanted) if wanted else (project not in _STANDARDS):
            return key
    return None


# -- calls: memoized, bounded, retried, budgeted -------------------------------------------------


@dataclass
class TriageCache:
    """Results of successful or empty calls, keyed by ``(tool, args)``; keep one per session.

    Errors are never cached, so a later run asks again. The caller decides the lifetime (a
    session's): build logs and test reports of a finished build do not change, tickets may.
    """

    results: dict[str, ToolResult] = field(default_factory=dict)


@dataclass
class _Calls:
    """Every tool call of one triage run goes through here."""

    call_tool: CallTool
    emit: Emit
    ids: tuple[str, str]
    max_parallel: int
    step_budget: int
    retry_budget: int
    backoff_s: float
    cache: TriageCache = field(default_factory=TriageCache)
    sem: asyncio.Semaphore = field(init=False)
    memo: dict[str, asyncio.Future[ToolResult]] = field(default_factory=dict)
    steps: int = 0
    retries: int = 0
    memo_hits: int = 0
    over_budget: int = 0

    def __post_init__(self) -> None:
        self.sem = asyncio.Semaphore(self.max_parallel)

    async def __call__(self, tool: str, args: dict[str, Any]) -> ToolResult:
        key = tool + json.dumps(args, sort_keys=True, default=str)
        cached = self.cache.results.get(key)
        pending = self.memo.get(key)
        if cached is not None or pending is not None:
            self.memo_hits += 1
            return cached if cached is not None else await pending  # type: ignore[misc]
        future: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
        self.memo[key] = future
        try:
            result = await self._run(tool, args)
            future.set_result(result)
        finally:
            if not future.done():
                future.cancel()  # the run is being cancelled: waiters on this call are too
        if result.status in ("success", "no_data"):
            self.cache.results[key] = result
        return result

    async def _run(self, tool: str, args: dict[str, Any]) -> ToolResult:
        if self.steps >= self.step_budget:
            self.over_budget += 1
            return ToolResult.fail(
                f"step budget of {self.step_budget} tool calls used up before this call",
                "raise the step budget, or triage fewer builds at once",
                budget=True,
            )
        self.steps += 1
        attempt = 0
        while True:
            result = await self._once(tool, args, attempt)
            transient = result.status == "error" and bool(result.metadata.get("transient"))
            if not transient or self.retries >= self.retry_budget:
                return result
            after = result.metadata.get("retry_after_s")
            delay = float(after) if isinstance(after, int | float) else self.backoff_s * 2**attempt
            self.retries += 1
            attempt += 1
            await asyncio.sleep(min(delay, _MAX_BACKOFF_S))  # outside the semaphore: others go on

    async def _once(self, tool: str, args: dict[str, Any], attempt: int) -> ToolResult:
        session_id, run_id = self.ids
        call_id = f"tr_{uuid.uuid4().hex[:12]}"
        async with self.sem:
            await emit_event(
                self.emit,
                ToolCall(session_id=session_id, run_id=run_id, tool_call_id=call_id, tool=tool, args=args),
            )
            started = time.perf_counter()
            result = await call_guarded(self.call_tool, tool, args)
            measured = (time.perf_counter() - started) * 1000
        summary = result_summary(result) + (f" (retry {attempt})" if attempt else "")
        await emit_event(
            self.emit,
            ToolResultEvent(
                session_id=session_id,
                run_id=run_id,
                tool_call_id=call_id,
                tool=tool,
                status=result.status,
                duration_ms=round(float(result.metadata.get("duration_ms") or measured), 1),
                truncated=bool(result.metadata.get("truncated", False)),
                error=result.error,
                summary=summary,
            ),
        )
        return result


# -- evidence ---------------------------------------------------------------------------------


@dataclass
class Signature:
    """The error a build failed with: its message shape and the log lines that show it."""

    shape: str
    lines: list[str]


@dataclass
class _Build:
    url: str
    label: str
    result: str | None = None
    console: ToolResult | None = None
    full_console: bool = False
    tests: ToolResult | None = None
    info: ToolResult | None = None
    signature: Signature | None = None
    failed_tests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failing(self) -> bool:
        return self.result in _FAILED_RESULTS or bool(self.failed_tests)


def _label(url: str) -> str:
    ref = parse_job_or_url(url)
    if ref is None:
        return url
    return f"{ref.job} #{ref.build}" if ref.build is not None else ref.job


def _data(result: ToolResult | None) -> dict[str, Any]:
    if result is None or result.status != "success" or not isinstance(result.data, dict):
        return {}
    return result.data


def _score(shape: str) -> int:
    score = 0
    if _EXCEPTION.search(shape):
        score += 4
    if shape.startswith("FAILED "):  # pytest's short summary names the test and the error
        score += 3
    if _TEST_MARK.search(shape):
        score += 3
    if "assert" in shape.lower() or "failed to execute goal" in shape.lower():
        score += 1
    return score


def error_signature(text: str) -> Signature | None:
    """The most telling error of a console log, or ``None`` when it holds none.

    Error records are grouped by message shape (:func:`~devops_agent.analysis.group_lines`, which
    folds stack traces into the line that starts them); Jenkins and Maven boilerplate (``Finished:
    FAILURE``, ``[Help 1]``, exit codes) is dropped, exceptions and failed-test markers rank
    first. The quoted lines are the best groups' example lines, in log order.
    """
    lines = text.splitlines()
    summary = group_lines((("console", line) for line in lines), errors_only=False, max_groups=2000)
    ranked: list[tuple[int, int, str, str]] = []
    for group in summary.groups:
        example = group.examples[0] if group.examples else group.shape
        first = example.splitlines()[0] if example else ""
        if not first.strip() or _BOILERPLATE.match(first.strip()):
            continue
        score = _score(example)
        if score or (group.level or "").upper() in ("ERROR", "FATAL", "SEVERE", "CRITICAL"):
            # the record's first line and, where one was folded in, its exception line
            shown = "\n".join(line.rstrip() for line in example.splitlines()[:2])
            ranked.append((score, -_position(lines, first), group.shape, shown))
    if not ranked:
        return None
    ranked.sort(reverse=True)
    best = [r for r in ranked if r[0] > 0] or ranked[:1]
    quoted = sorted(best[:_MAX_SIGNATURE_LINES], key=lambda r: -r[1])
    shown_lines = [line for r in quoted for line in r[3].splitlines()]
    return Signature(shape=ranked[0][2], lines=shown_lines[:_MAX_SIGNATURE_LINES])


def _position(lines: Sequence[str], line: str) -> int:
    stripped = line.rstrip()
    for i, candidate in enumerate(lines):
        if candidate.rstrip() == stripped:
            return i
    return len(lines)


def _failed_tests(result: ToolResult | None) -> list[dict[str, Any]]:
    cases = _data(result).get("failed_cases")
    return [c for c in cases if isinstance(c, dict)] if isinstance(cases, list) else []


def _test_name(case: dict[str, Any]) -> str:
    return ".".join(str(p) for p in (case.get("class"), case.get("name")) if p)


def _apply_console(build: _Build, result: ToolResult) -> None:
    text = str(_data(result).get("text") or "")
    if build.result is None and (finished := _FINISHED.findall(text)):
        build.result = finished[-1]
    signature = error_signature(text) if text else None
    if signature is not None:
        build.signature = signature


# -- the workflow -------------------------------------------------------------------------------


async def _gather_build(build: _Build, calls: _Calls, tail_lines: int) -> None:
    async with asyncio.TaskGroup() as group:
        console = group.create_task(
            calls("jenkins_console", {"url_or_job": build.url, "tail_lines": tail_lines, "summarize": False})
        )
        tests = group.create_task(calls("jenkins_test_report", {"url_or_job": build.url}))
    build.console, build.tests = console.result(), tests.result()
    build.failed_tests = _failed_tests(build.tests)
    _apply_console(build, build.console)
    if build.failing or build.result is None:
        # Who and what changed only matters for a failing build (or one whose result is unknown).
        build.info = await calls("jenkins_build", {"url_or_job": build.url})
        result = _data(build.info).get("result")
        if isinstance(result, str) and result:
            build.result = result


def _critic(builds: Sequence[_Build]) -> list[_Build]:
    """Failing builds whose evidence lacks an error signature and whose full log was not read yet."""
    return [
        b
        for b in builds
        if b.failing
        and b.signature is None
        and not b.full_console
        and b.console is not None
        and b.console.status == "success"
    ]


def triage_guidance() -> str:
    """The triage runbook as instructions for a model run about a ticket.

    It names tools and steps only, never the ticket or anything from it: instructions bypass the
    privacy guard's history processing, and the user's message already carries the reference.
    """
    sections = "\n".join(f"## {s}" for s in SECTIONS)
    return f"""\
This request is about an incident ticket. Triage it like the offline triage runbook does:
1. jira_issue for the ticket named in the user's message: status, assignee, comments, links and
   the CI builds it mentions (`builds`).
2. For every linked Jenkins build, call jenkins_console (the tail) and jenkins_test_report in the
   same turn, and jenkins_build for failing builds (culprits, changes). Do not fetch a build twice.
3. Critic: for a failing build whose console tail shows no error, read jenkins_console with
   full=true before concluding anything about it.
4. Take the error signature of each failure (the exception or failing assertion line) and search
   related tickets (jira_search with text ~ "..."), the knowledge base (search_kb) and the
   findings of earlier investigations (search_memory).
5. Answer with a Markdown report with exactly these sections, each present even when empty:
{sections}
   Quote the log lines that show each failure; give every root-cause hypothesis its evidence and a
   confidence (high, medium, low); cite KB articles by their path:line citation; list under the last
   section every call that failed and why. Never invent a finding for evidence you could not get.
6. When the evidence supports a root cause, save it with add_finding (title: the signature and the
   cause; summary: what fixed it or what to check) so later investigations can recall it."""


def plan_steps(ticket: str = "KEY", tail_lines: int = 200) -> list[str]:
    """The workflow's steps as its plan shows them (``runbooks show triage`` too)."""
    return [
        f"{NAME}/ticket: jira_issue(key_or_url={json.dumps(ticket)})",
        f"{NAME}/builds: for each linked build, jenkins_console(tail_lines={tail_lines}) and "
        "jenkins_test_report in parallel; jenkins_build for failing builds",
        f"{NAME}/critic: jenkins_console(full=true) for a failing build whose tail has no error signature",
        f"{NAME}/related: jira_search, search_kb and search_memory with the error signatures",
    ]


async def run_triage(
    ref: str,
    call_tool: CallTool,
    emit: Emit,
    *,
    max_parallel: int = 8,
    step_budget: int = 30,
    retry_budget: int = 4,
    backoff_s: float = 0.2,
    tail_lines: int = 200,
    cache: TriageCache | None = None,
    session_id: str = "local",
    run_id: str = "local",
) -> Report:
    """Triage the Jira ticket in ``ref`` (a key, a URL, or free text holding one); always a report.

    Fetches the ticket, then for each linked Jenkins build its console tail and test report in
    parallel (at most ``max_parallel`` calls in flight), the build's culprits when it failed,
    a full console where the critic finds no error signature in the tail, related tickets and
    knowledge-base articles for the signatures. At most ``step_budget`` distinct tool calls are
    made; transient failures are retried with exponential backoff from ``backoff_s``, at most
    ``retry_budget`` retries in all. Identical calls run once per run, and once per ``cache``
    (pass the session's :class:`TriageCache` to share results between runs). Events carry
    ``session_id``/``run_id`` and ``seq=0``.
    """
    if max_parallel < 1 or step_budget < 1:
        raise ValueError("max_parallel and step_budget must be at least 1")
    started = time.perf_counter()
    ids = (session_id, run_id)
    calls = _Calls(
        call_tool, emit, ids, max_parallel, step_budget, retry_budget, backoff_s, cache or TriageCache()
    )
    gaps: list[Gap] = []
    key = find_ticket_ref(ref, any_case=True)  # ``ref`` is what was given to triage
    plan = plan_steps(key or ref, tail_lines)
    await emit_event(emit, PlanProposed(session_id=session_id, run_id=run_id, steps=plan))
    if key is None:
        gaps.append(
            Gap(
                step=f"{NAME}/ticket",
                tool="jira_issue",
                reason=f"no Jira issue key or URL in {ref[:80]!r}",
                hint="give a key like OPS-123 or a /browse/ URL",
            )
        )
        return _build_report(ref, None, {}, [], [], [], gaps, calls, started)

    ticket_result = await calls("jira_issue", {"key_or_url": key})
    ticket = _data(ticket_result)
    if ticket_result.status != "success":
        gaps.append(_gap("ticket", "jira_issue", ticket_result))
    urls = [str(u) for u in ticket.get("jenkins_builds") or [] if u]
    builds = [_Build(url, _label(url)) for url in dict.fromkeys(urls)]
    if ticket and not builds:
        gaps.append(
            Gap(
                step=f"{NAME}/builds",
                tool="jira_issue",
                reason=f"{key} links no Jenkins build (description, comments and remote links were read)",
                hint="paste the failing build's URL into the ticket, or run jenkins_last_build on the job",
            )
        )

    async with asyncio.TaskGroup() as group:
        for build in builds:
            group.create_task(_gather_build(build, calls, tail_lines))

    # Critic: a failing build must show why it failed; if the tail does not, read the whole log.
    suspects = _critic(builds)
    if suspects:
        steps = [
            f"{NAME}/critic: jenkins_console(url_or_job={json.dumps(b.url)}, full=true)" for b in suspects
        ]
        await emit_event(emit, PlanProposed(session_id=session_id, run_id=run_id, steps=steps))
        async with asyncio.TaskGroup() as group:
            tasks = [
                (
                    b,
                    group.create_task(
                        calls("jenkins_console", {"url_or_job": b.url, "full": True, "summarize": False})
                    ),
                )
                for b in suspects
            ]
        for build, task in tasks:
            build.full_console = True
            full = task.result()
            if full.status == "success":
                _apply_console(build, full)
            else:
                gaps.append(_gap(f"critic {build.label}", "jenkins_console", full))

    for build in builds:
        for tool, result in (
            ("jenkins_console", build.console),
            ("jenkins_test_report", build.tests),
            ("jenkins_build", build.info),
        ):
            if result is not None and result.status not in ("success", "no_data"):
                gaps.append(_gap(f"build {build.label}", tool, result))
        console_read = build.console is not None and build.console.status == "success"
        if build.failing and build.signature is None and console_read:
            gaps.append(
                Gap(
                    step=f"{NAME}/critic {build.label}",
                    tool="jenkins_console",
                    reason="the build failed but no error signature was found in its console log",
                    hint="read the log around the first failing stage; the cause may be in a downstream job",
                )
            )

    related, kb = await _related(key, builds, calls, gaps)
    return _build_report(ref, key, ticket, builds, related, kb, gaps, calls, started)


async def _related(
    key: str, builds: Sequence[_Build], calls: _Calls, gaps: list[Gap]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Tickets mentioning the top signature and KB passages for each signature; missing KB is a gap."""
    shapes = list(dict.fromkeys(b.signature.shape for b in builds if b.failing and b.signature))
    if not shapes:
        return [], []
    words = _query_words(shapes[0])
    related: list[dict[str, Any]] = []
    if words:
        jql = f'text ~ "{" ".join(words[:6])}" AND key != {key} ORDER BY updated DESC'
        found = await calls("jira_search", {"jql": jql, "limit": 5})
        if found.status == "success":
            related = [i for i in _data(found).get("issues") or [] if isinstance(i, dict)]
        elif found.status == "error":
            gaps.append(_gap("related", "jira_search", found))
    queries = [" ".join(_query_words(s, keep_case=True)) or s for s in shapes[:_MAX_KB_QUERIES]]
    kb = await _kb(queries, calls, gaps)
    # Findings of earlier investigations ("have we seen this before, and what fixed it?").
    seen = await calls("search_memory", {"query": queries[0], "limit": 3})
    if seen.status == "success" and isinstance(seen.data, list):
        kb += [dict(f, query=queries[0], memory=True) for f in seen.data if isinstance(f, dict)]
    elif seen.status == "error" and not (seen.error or "").startswith("unknown tool"):
        gaps.append(_gap("memory", "search_memory", seen))
    return related, kb


async def _kb(queries: list[str], calls: _Calls, gaps: list[Gap]) -> list[dict[str, Any]]:
    """KB passages for each query; a missing knowledge base is one gap."""
    first = await calls("search_kb", {"query": queries[0]})
    if _kb_missing(first):
        gaps.append(
            Gap(
                step=f"{NAME}/kb",
                tool="search_kb",
                reason="knowledge base not configured",
                hint="enable the knowledge toolset and index runbooks/postmortems (index_directory)",
            )
        )
        return []
    results = [first]
    if len(queries) > 1:
        async with asyncio.TaskGroup() as group:
            rest = [group.create_task(calls("search_kb", {"query": q})) for q in queries[1:]]
        results += [t.result() for t in rest]
    kb: list[dict[str, Any]] = []
    for query, result in zip(queries, results, strict=True):
        if result.status == "error":
            gaps.append(_gap("kb", "search_kb", result))
        elif result.status == "success" and isinstance(result.data, list):
            kb += [dict(hit, query=query) for hit in result.data if isinstance(hit, dict)]
    return kb


def _kb_missing(result: ToolResult) -> bool:
    if result.status == "error":
        return (result.error or "").startswith("unknown tool")
    return result.status == "no_data" and "collection is empty" in (result.hint or "")


def _query_words(shape: str, *, keep_case: bool = False) -> list[str]:
    text = re.sub(r"<[A-Z]+>", " ", shape)
    out: list[str] = []
    for token in re.findall(r"[A-Za-z][A-Za-z.]{3,}", text):
        word = token.split(".")[-1] if "." in token else token
        if word.lower() not in _STOP and word not in out:
            out.append(word if keep_case else word.lower())
    return out[:8]


def _gap(step: str, tool: str, result: ToolResult) -> Gap:
    if result.status == "approval_required":
        reason = "needs approval; offline triage only runs what the current mode allows"
    else:
        reason = result.error or "the tool failed without a message"
    if result.metadata.get("transient"):
        reason += " (transient; retries used up)"
    return Gap(step=f"{NAME}/{step}", tool=tool, reason=reason, hint=result.hint)


# -- aggregation --------------------------------------------------------------------------------


def _build_finding(build: _Build) -> Finding:
    info = _data(build.info)
    tests = [
        f"{_test_name(c)}: {' '.join(str(c.get('error') or c.get('status') or '').split())[:200]}"
        for c in build.failed_tests
    ]
    sig = build.signature
    title = f"{build.label} {build.result or 'FAILED'}: " + (
        sig.shape[:120] if sig else "no error signature found"
    )
    parts = [f"Build {build.url} finished {build.result or 'with an unknown result'}."]
    if tests:
        parts.append(f"Failing tests ({len(tests)}): " + "; ".join(tests[:5]) + ".")
    elif build.tests is not None and build.tests.status == "no_data":
        parts.append("No test report was recorded.")
    if sig is not None:
        parts.append(
            f"Error signature: `{sig.shape}`" + (" (from the full console)." if build.full_console else ".")
        )
    if culprits := [str(c) for c in info.get("culprits") or [] if c]:
        parts.append("Culprits: " + ", ".join(culprits) + ".")
    evidence = list(sig.lines) if sig else []
    evidence += [f"FAILED {t}" for t in tests[:5] if f"FAILED {t}" not in evidence]
    tools = ["jenkins_console", "jenkins_test_report"] + (["jenkins_build"] if build.info else [])
    return Finding(
        severity="high",
        title=title,
        detail=" ".join(parts),
        evidence=evidence,
        source=f"{NAME}/failing-build: {', '.join(tools)} ({build.label})",
        next_steps=[f"Open {build.url}console at the first quoted line"],
    )


def _commit_match(build: _Build, words: set[str]) -> dict[str, Any] | None:
    for commit in _data(build.info).get("commits") or []:
        if isinstance(commit, dict):
            message = str(commit.get("message") or "").lower()
            if words & _stems(message):
                return commit
    return None


def _stems(text: str) -> set[str]:
    # "timed out" and "timeout" should meet: compare 4-letter stems of the words.
    return {w[:4] for w in _WORD.findall(text.lower()) if w not in _STOP}


def _hypotheses(builds: Sequence[_Build]) -> list[tuple[Confidence, Finding]]:
    by_shape: dict[str, list[_Build]] = {}
    for build in builds:
        if build.failing and build.signature is not None:
            by_shape.setdefault(build.signature.shape, []).append(build)
    out: list[tuple[Confidence, Finding]] = []
    for shape, members in sorted(by_shape.items(), key=lambda kv: -len(kv[1])):
        sample = members[0]
        assert sample.signature is not None
        text = " ".join([shape, *sample.signature.lines, *(str(c.get("error")) for c in sample.failed_tests)])
        category = next((name for pattern, name in _CATEGORIES if pattern.search(text)), None)
        evidence = [f"{b.label}: {b.signature.lines[0]}" for b in members if b.signature]
        evidence += [f"failing test {_test_name(c)}" for b in members for c in b.failed_tests[:3]]
        score = 1 + bool(category) + (len(members) > 1)
        commit = next((c for b in members if (c := _commit_match(b, _stems(text)))), None)
        why = []
        if commit is not None:
            score += 1
            evidence.append(
                f"commit {str(commit.get('commit') or '')[:10]} by {commit.get('author')}: "
                f"{commit.get('message')}"
            )
            why.append("a commit in the build touches the same thing")
        if len(members) > 1:
            why.append(f"{len(members)} builds fail with the same signature")
        if any(b.failed_tests for b in members):
            why.append("the test report agrees with the console")
        confidence: Confidence = "high" if score >= 3 else "medium" if score == 2 else "low"
        cause = category or "the step that logged this error"
        title = f"{cause[0].upper()}{cause[1:]}: {shape[:100]}"
        detail = f"Confidence: {confidence}." + (f" Because {'; '.join(why)}." if why else "")
        severity: Severity = confidence
        out.append(
            (
                confidence,
                Finding(
                    severity=severity,
                    title=title,
                    detail=detail,
                    evidence=evidence,
                    source=f"{NAME}/hypothesis: " + ", ".join(b.label for b in members),
                ),
            )
        )
    return out


def _related_findings(
    ticket: dict[str, Any], related: list[dict[str, Any]], kb: list[dict[str, Any]]
) -> list[Finding]:
    out: list[Finding] = []
    for link in ticket.get("issue_links") or []:
        if isinstance(link, dict) and link.get("key"):
            out.append(
                Finding(
                    severity="info",
                    title=f"{link['key']} ({link.get('relation') or 'linked'}): {link.get('summary') or ''}",
                    detail=f"Status: {link.get('status') or 'unknown'}.",
                    source=f"{NAME}/related: jira_issue",
                )
            )
    seen = {f.title.split(" ")[0] for f in out}
    for issue in related:
        if issue.get("key") and issue["key"] not in seen:
            seen.add(issue["key"])
            out.append(
                Finding(
                    severity="info",
                    title=f"{issue['key']} (mentions the error): {issue.get('summary') or ''}".strip(),
                    detail=f"Status: {issue.get('status') or '?'}; assignee {issue.get('assignee') or '-'}.",
                    source=f"{NAME}/related: jira_search",
                )
            )
    for hit in kb:
        if hit.get("memory"):
            out.append(
                Finding(
                    severity="info",
                    title=f"Seen before: {hit.get('title') or '?'} (finding {hit.get('id')})",
                    detail=f"Recorded {str(hit.get('created_at') or '?')[:10]}: {hit.get('summary') or ''}",
                    evidence=[str(e) for e in hit.get("evidence") or []][:3],
                    source=f"{NAME}/related: search_memory",
                )
            )
            continue
        out.append(
            Finding(
                severity="info",
                title=f"KB: {hit.get('citation') or hit.get('path') or '?'}",
                detail=f"Matched the query {hit.get('query')!r}.",
                evidence=[" ".join(str(hit.get("text") or "").split())[:300]],
                source=f"{NAME}/related: search_kb",
            )
        )
    return out


def _owners(key: str | None, ticket: dict[str, Any], builds: Sequence[_Build]) -> list[str]:
    owners = []
    if ticket:
        owners.append(
            f"Owner: {ticket.get('assignee') or 'nobody'} (assignee of {key}); "
            f"reporter {ticket.get('reporter') or '?'}"
        )
    for build in builds:
        culprits = [str(c) for c in _data(build.info).get("culprits") or [] if c]
        if build.failing and culprits:
            owners.append(
                f"Culprits of {build.label}: {', '.join(culprits)} (authors of the changes in that build)"
            )
    return owners


def _next_steps(builds: Sequence[_Build], hypotheses: list[tuple[Confidence, Finding]]) -> list[str]:
    steps = []
    for build in builds:
        if not build.failing:
            continue
        for case in build.failed_tests[:2]:
            steps.append(f"Reproduce {_test_name(case)} locally at the commit of {build.label}")
        commit = next(iter(_data(build.info).get("commits") or []), None)
        if isinstance(commit, dict) and commit.get("author"):
            steps.append(
                f"Ask {commit['author']} about commit {str(commit.get('commit') or '')[:10]} "
                f"({commit.get('message')}) in {build.label}; revert it if the hypothesis holds"
            )
    if hypotheses:
        steps.append(f"Check the top hypothesis first: {hypotheses[0][1].title}")
    steps.append(
        "Post the summary and the quoted lines as a comment on the ticket (jira_add_comment, needs approval)"
    )
    return list(dict.fromkeys(steps))


def _summary(
    key: str | None, ticket: dict[str, Any], builds: Sequence[_Build], gaps: int, top: Finding | None
) -> str:
    if not ticket:
        head = f"Could not read ticket {key}." if key else "No ticket to triage."
    else:
        state = f"{ticket.get('status') or '?'}, {ticket.get('priority') or '?'}"
        head = f"{key} ({state}): {ticket.get('summary') or ''}."
    failing = [b for b in builds if b.failing]
    unknown = [b for b in builds if b.result is None and not b.failing]
    if ticket:
        text = f"{head} {len(builds)} linked Jenkins build{'s' if len(builds) != 1 else ''}"
        text += f", {len(failing)} failing" + (f", {len(unknown)} unknown" if unknown else "") + "."
    else:  # the builds are those the ticket links: with no ticket, nothing is known about them
        text = f"{head} Its linked builds are not known, so nothing was triaged."
    if top is not None:
        text += f" Most likely: {top.title} ({top.detail.split('.')[0].lower()})."
    if gaps:
        text += f" {gaps} item{'s' if gaps != 1 else ''} could not be gathered; see the last section."
    return " ".join(text.split())


def _build_report(
    ref: str,
    key: str | None,
    ticket: dict[str, Any],
    builds: Sequence[_Build],
    related: list[dict[str, Any]],
    kb: list[dict[str, Any]],
    gaps: list[Gap],
    calls: _Calls,
    started: float,
) -> Report:
    hypotheses = _hypotheses(builds)
    order = {"high": 0, "medium": 1, "low": 2}
    hypotheses.sort(key=lambda h: order[h[0]])
    findings = [_build_finding(b) for b in builds if b.failing]
    findings += [f for _, f in hypotheses] + _related_findings(ticket, related, kb)
    top = hypotheses[0][1] if hypotheses else None
    stats: dict[str, Any] = {
        "ticket": key,
        "ticket_read": bool(ticket),
        "builds": [
            {"url": b.url, "label": b.label, "result": b.result, "failing": b.failing} for b in builds
        ],
        "tool_calls": calls.steps,
        "memoized": calls.memo_hits,
        "retries": calls.retries,
        "over_budget": calls.over_budget,
        "max_parallel": calls.max_parallel,
        "step_budget": calls.step_budget,
        "duration_ms": round((time.perf_counter() - started) * 1000, 1),
    }
    return Report(
        title=f"Triage of {key}" if key else "Triage",
        question=ref,
        summary=_summary(key, ticket, builds, len(gaps), top),
        findings=findings,
        next_steps=_owners(key, ticket, builds) + _next_steps(builds, hypotheses),
        gaps=gaps,
        runbooks=[NAME],
        stats=stats,
    )


# -- rendering ----------------------------------------------------------------------------------


def section_of(finding: Finding) -> str:
    """Which triage section a finding belongs to: ``failing-build``, ``hypothesis`` or ``related``."""
    match = re.match(rf"{NAME}/([\w-]+):", finding.source)
    return match.group(1) if match else "related"


def _fence(lines: list[str]) -> list[str]:
    longest = max((len(m) for line in lines for m in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}text", *lines, fence, ""]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _no_failing_build(stats: dict[str, Any]) -> str:
    """What "no failing build" means here: only an all-clear when every linked build was read."""
    builds = [b for b in stats.get("builds") or [] if isinstance(b, dict)]
    if not stats.get("ticket_read", True):
        return (
            "Not known: the ticket could not be read, so the builds it links are unknown "
            "(see What could not be gathered)."
        )
    if not builds:
        return "Not known: the ticket links no Jenkins build (see What could not be gathered)."
    unread = [b for b in builds if b.get("result") is None]
    if unread:
        return (
            f"No failing build was seen, but the result of {len(unread)} of the {len(builds)} linked "
            "builds is not known (see What could not be gathered)."
        )
    return f"No failing build among the {len(builds)} linked builds."


def render_triage_markdown(report: Report) -> str:
    """A triage report as Markdown with every section of :data:`SECTIONS`, each said empty when it is."""
    out = [f"# {_one_line(report.title)}", ""]
    if report.question:
        out += [f"**Ticket:** {_one_line(report.question)}", ""]
    out += [f"## {SECTIONS[0]}", "", report.summary or "Nothing was gathered.", ""]
    groups: dict[str, list[Finding]] = {"failing-build": [], "hypothesis": [], "related": []}
    for finding in rank_findings(report.findings):
        groups.setdefault(section_of(finding), []).append(finding)

    out += [f"## {SECTIONS[1]}", ""]
    if not groups["failing-build"]:
        out += [_no_failing_build(report.stats), ""]
    for f in groups["failing-build"]:
        out += [f"### {_one_line(f.title)}", "", f.detail, ""]
        out += _fence(f.evidence) if f.evidence else []
        out += [f"*Source: {f.source}*", ""]

    out += [f"## {SECTIONS[2]}", ""]
    if not groups["hypothesis"]:
        out += ["No hypothesis: no error signature was gathered.", ""]
    for i, f in enumerate(groups["hypothesis"], 1):
        out += [f"{i}. **{_one_line(f.title)}** — {f.detail}", ""]
        out += [f"   - {_one_line(e)}" for e in f.evidence] + [""]

    out += [f"## {SECTIONS[3]}", ""]
    if not groups["related"]:
        out += ["None found.", ""]
    for f in groups["related"]:
        line = f"- **{_one_line(f.title)}** — {_one_line(f.detail)}"
        out += [line + (f" > {_one_line(f.evidence[0])}" if f.evidence else "")]
    out += [""] if groups["related"] else []

    out += [f"## {SECTIONS[4]}", ""]
    if report.next_steps:
        out += [f"{i}. {step}" for i, step in enumerate(report.next_steps, 1)] + [""]
    else:
        out += ["None suggested.", ""]

    out += [f"## {SECTIONS[5]}", ""]
    if report.gaps:
        for gap in report.gaps:
            line = f"- **{gap.step}** (`{gap.tool}`): {_one_line(gap.reason)}"
            out.append(line + (f" — {_one_line(gap.hint)}" if gap.hint else ""))
        out.append("")
    else:
        out += ["Nothing — every step succeeded.", ""]
    stats = report.stats
    footer = f"triage · {stats.get('tool_calls', 0)} tool calls, {stats.get('memoized', 0)} memoized, "
    footer += f"{stats.get('retries', 0)} retries · generated {report.generated_at:%Y-%m-%d %H:%M:%S %Z}"
    out += ["---", "", f"*{footer.strip()}*", ""]
    return "\n".join(out)
