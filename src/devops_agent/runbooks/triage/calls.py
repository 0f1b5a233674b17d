"""Every tool call of one triage run: memoized, bounded, retried, budgeted, and reported as events.

An identical ``(tool, args)`` runs once per run (and once per :class:`TriageCache`, which a
session keeps); at most ``max_parallel`` calls are in flight; a transient failure is retried by
the run's :class:`~devops_agent.policies.retry.TransientRetry` (each attempt its own
``tool_call``/``tool_result`` events); at most ``step_budget`` distinct calls are made.

This module must not import tools or interfaces: calls go through the ``call_tool`` it is given.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from devops_agent.events import ToolCall, ToolResultEvent
from devops_agent.policies.retry import TransientRetry
from devops_agent.results import ToolResult
from devops_agent.runbooks.engine import CallTool, Emit, call_guarded, emit_event, result_summary


@dataclass
class TriageCache:
    """Results of successful or empty calls, keyed by ``(tool, args)``; keep one per session.

    Errors are never cached, so a later run asks again. The caller decides the lifetime (a
    session's): build logs and test reports of a finished build do not change, tickets may.
    """

    results: dict[str, ToolResult] = field(default_factory=dict)


@dataclass
class TriageCalls:
    """Every tool call of one triage run goes through here (call it as ``await calls(tool, args)``)."""

    call_tool: CallTool
    emit: Emit
    ids: tuple[str, str]
    max_parallel: int
    step_budget: int
    retry: TransientRetry
    cache: TriageCache = field(default_factory=TriageCache)
    sem: asyncio.Semaphore = field(init=False)
    memo: dict[str, asyncio.Future[ToolResult]] = field(default_factory=dict)
    steps: int = 0
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
        # each attempt takes the semaphore on its own: a retry's wait does not hold up the others
        return await self.retry.run(lambda attempt: self._once(tool, args, attempt))

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
                evidence=result.evidence,
            ),
        )
        return result
