"""The triage workflow: the ticket, then each linked build in parallel, a critic that reads the full
log where the tail showed no error, then related tickets, KB passages and earlier findings.

Anything not gathered becomes a :class:`~devops_agent.report.Gap`. This module must not import
tools or interfaces (calls go through :class:`~.calls.TriageCalls`), and must not create tasks it
does not await (every fan-out runs inside an ``asyncio.TaskGroup``).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Sequence
from typing import Any

from devops_agent.events import PlanProposed
from devops_agent.policies.retry import TransientRetry
from devops_agent.report import Gap, Report
from devops_agent.results import ToolResult
from devops_agent.runbooks.engine import CallTool, Emit, emit_event
from devops_agent.runbooks.triage.calls import TriageCache, TriageCalls
from devops_agent.runbooks.triage.evidence import (
    Build,
    apply_console,
    critic,
    data_of,
    failed_tests_of,
    label_of,
)
from devops_agent.runbooks.triage.findings import STOP_WORDS, build_report
from devops_agent.runbooks.triage.plan import NAME, find_ticket_ref, plan_steps

_MAX_KB_QUERIES = 3


async def _gather_build(build: Build, calls: TriageCalls, tail_lines: int) -> None:
    async with asyncio.TaskGroup() as group:
        console = group.create_task(
            calls("jenkins_console", {"url_or_job": build.url, "tail_lines": tail_lines, "summarize": False})
        )
        tests = group.create_task(calls("jenkins_test_report", {"url_or_job": build.url}))
    build.console, build.tests = console.result(), tests.result()
    build.failed_tests = failed_tests_of(build.tests)
    apply_console(build, build.console)
    if build.failing or build.result is None:
        # Who and what changed only matters for a failing build (or one whose result is unknown).
        build.info = await calls("jenkins_build", {"url_or_job": build.url})
        result = data_of(build.info).get("result")
        if isinstance(result, str) and result:
            build.result = result


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
    retry = TransientRetry(retry_budget, backoff_s)
    calls = TriageCalls(call_tool, emit, ids, max_parallel, step_budget, retry, cache or TriageCache())
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
        return build_report(ref, None, {}, [], [], [], gaps, calls, started)

    ticket_result = await calls("jira_issue", {"key_or_url": key})
    ticket = data_of(ticket_result)
    if ticket_result.status != "success":
        gaps.append(_gap("ticket", "jira_issue", ticket_result))
    urls = [str(u) for u in ticket.get("jenkins_builds") or [] if u]
    builds = [Build(url, label_of(url)) for url in dict.fromkeys(urls)]
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
    suspects = critic(builds)
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
                apply_console(build, full)
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
    return build_report(ref, key, ticket, builds, related, kb, gaps, calls, started)


async def _related(
    key: str, builds: Sequence[Build], calls: TriageCalls, gaps: list[Gap]
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
            related = [i for i in data_of(found).get("issues") or [] if isinstance(i, dict)]
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


async def _kb(queries: list[str], calls: TriageCalls, gaps: list[Gap]) -> list[dict[str, Any]]:
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
        if word.lower() not in STOP_WORDS and word not in out:
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
