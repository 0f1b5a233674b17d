"""The ``context`` toolset: ``query_result`` asks precise questions of a kept tool result.

A model reads large results as summaries (the digest wrapper) and older results as one-line
summaries (the token budget); the session keeps the full outputs. This tool answers a question
about one of them — a jq filter, a grep, or a short Python snippet — in the query sandbox
(:mod:`devops_agent.tools.sandbox_query`: no network, read-only, no new processes, CPU, memory,
time and output limits). It reads the kept output of the run in this process first, then the
store (the full output, else the result as the session stored it). This module must not import
policies, agent or interface code.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import RunContext

from devops_agent.config import Settings
from devops_agent.deps import ToolDeps
from devops_agent.tools.base import ToolResult, ToolsetBuilder, tool
from devops_agent.tools.kept import KEPT, stored_result
from devops_agent.tools.registry import ToolRegistry
from devops_agent.tools.sandbox import Sandbox
from devops_agent.tools.sandbox_query import QueryLimits, QueryRefused, run_query

NAME = "context"
DESCRIPTION = "Ask precise questions (jq, grep, Python) of a large tool result kept in the session"
MAX_CODE_CHARS = 4_000


def kept_text(deps: ToolDeps, call_id: str) -> str | None:
    """The full output kept for ``call_id`` of the run's session, wherever it is yet."""
    if deps.session_id is None:
        return None
    text = KEPT.recall(deps.session_id, call_id)
    if text is None and deps.store is not None:
        text = deps.store.tool_output(deps.session_id, call_id)
    if text is None and deps.store is not None:
        text = stored_result(deps.store, deps.session_id, call_id)
    return text


@tool(category="context", read_only=True)
def query_result(
    ctx: RunContext[ToolDeps],
    call_id: str,
    jq: str | None = None,
    grep: str | None = None,
    python: str | None = None,
    ignore_case: bool = False,
    context_lines: int = 0,
    max_matches: int = 100,
) -> ToolResult:
    """Ask a precise question of the full result of an earlier tool call (one seen as a summary).

    Give exactly one of: ``jq`` (a jq filter over the result: JSON as it is, text as an array of
    lines), ``grep`` (a Python regular expression matched per line; ``ignore_case``,
    ``context_lines`` 0-3, ``max_matches``), or ``python`` (a short snippet run in a sandbox with
    ``data`` (parsed JSON, or the list of lines), ``text`` and ``lines``; print, or set
    ``result``). Answers are capped; no network or files are reachable from the snippet.
    """
    given = {k: v for k, v in {"jq": jq, "grep": grep, "python": python}.items() if v}
    if len(given) != 1:
        return ToolResult.fail(
            "give exactly one of jq, grep or python",
            'e.g. query_result(call_id="…", grep="OutOfMemory", context_lines=1)',
        )
    ((mode, query),) = given.items()
    if len(query) > MAX_CODE_CHARS:
        return ToolResult.fail(
            f"the {mode} query is longer than {MAX_CODE_CHARS} characters", "ask a shorter one"
        )
    text = kept_text(ctx.deps, call_id)
    if text is None:
        return ToolResult.fail(
            f"no kept result for tool call {call_id!r} in this session",
            "use the call id a summary names (its hint says query_result(call_id=…))",
        )
    request: dict[str, Any] = {"mode": mode, "query": query, "data": text}
    if mode == "grep":
        request |= {
            "ignore_case": ignore_case,
            "context": max(0, min(context_lines, 3)),
            "max_matches": max(1, min(max_matches, 500)),
        }
    settings = ctx.deps.settings
    limits = QueryLimits(max_chars=max(2_000, settings.tools.output_cap_chars - 1_000))
    try:
        answer = run_query(Sandbox.from_settings(settings), request, limits)
    except QueryRefused as exc:
        return ToolResult.fail(str(exc), "use jq or grep instead, or install bubblewrap (scripts/sandbox.sh)")
    if not answer.get("ok"):
        return ToolResult.fail(
            f"{mode} query failed: {answer.get('error')}",
            "check the query; narrow it if it was too slow or large",
        )
    return ToolResult.ok(
        answer.get("result"), call_id=call_id, mode=mode, answer_truncated=bool(answer.get("truncated"))
    )


def build(settings: Settings) -> ToolsetBuilder:
    return ToolsetBuilder(NAME, DESCRIPTION).add(query_result)


def register(registry: ToolRegistry) -> None:
    """Entry point of the ``devops_agent.toolsets`` group."""
    registry.add_toolset(NAME, build, DESCRIPTION)
