"""The innermost wrapper: a tool's return value or exception becomes a :class:`ToolResult`.

Tools return data, a ``ToolResult``, or raise. Inside this wrapper everything is a result: data is
wrapped, "nothing" becomes ``no_data``, a timeout or an exception becomes an error result with a
hint the model can act on. pydantic-ai's control-flow exceptions (``ModelRetry``,
``ApprovalRequired``, ``CallDeferred``) and a safety halt pass through untouched: they are the
run's control flow, not tool failures.

Error texts are made here, inside the privacy wrapper, so they are masked like any output; secrets
are still cut out first because the texts also reach logs and traces.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import structlog
from pydantic_ai import ApprovalRequired, CallDeferred, ModelRetry, WrapperToolset
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import ToolsetTool

from devops_agent.errors import CircuitOpenError, DevOpsAgentError, RunHaltedError
from devops_agent.secrets.scrubber import scrub
from devops_agent.tools.base import ToolResult
from devops_agent.tools.content import readable

log = structlog.get_logger("devops_agent.tools")

PASS_THROUGH = (ModelRetry, ApprovalRequired, CallDeferred, RunHaltedError)
"""Control flow of the run, not tool failures: approvals pause it, a halt stops it."""


def normalize(raw: Any) -> ToolResult:
    """Turn any tool return value into a :class:`ToolResult`. A raw value (a foreign toolset's: an
    MCP server's result) has its binary parts decoded when they are text and described otherwise:
    bytes reach no reader, with or without the privacy guard."""
    if isinstance(raw, ToolResult):
        return raw
    if raw is None or raw == [] or raw == {} or raw == "":
        return ToolResult.empty("the tool returned nothing")
    return ToolResult.ok(readable(raw))


def exception_result(tool: str, exc: BaseException, timeout_s: float) -> ToolResult:
    """The error result for an exception, with secrets cut out of its text.

    Its ``error_type`` names the exception: the breaker counts such results as the tool's failures.
    """
    result = _describe(tool, exc, timeout_s)
    result.metadata.setdefault("error_type", type(exc).__name__)
    if result.error:
        result.error = scrub(result.error).text
    if result.hint:
        result.hint = scrub(result.hint).text
    return result


def _describe(tool: str, exc: BaseException, timeout_s: float) -> ToolResult:
    if isinstance(exc, CircuitOpenError):
        return ToolResult.fail(exc.message, exc.hint, breaker="open", retry_after_s=exc.retry_after_s)
    if isinstance(exc, DevOpsAgentError):
        return ToolResult.fail(exc.message, exc.hint, error_type=type(exc).__name__)
    if isinstance(exc, TimeoutError):
        return ToolResult.fail(
            f"{tool} timed out after {timeout_s:.0f}s",
            "narrow the query (a shorter time window, a smaller path, a lower limit) and retry",
            error_type="TimeoutError",
        )
    if isinstance(exc, PermissionError):
        return ToolResult.fail(
            f"permission denied: {exc}", "the agent's user cannot read this; try another path or source"
        )
    if isinstance(exc, FileNotFoundError):
        return ToolResult.fail(f"not found: {exc}", "check the path; list the parent directory first")
    return ToolResult.fail(
        f"{type(exc).__name__}: {exc}",
        "the tool failed unexpectedly; try different arguments or another tool",
        error_type=type(exc).__name__,
    )


@dataclass
class NormalizeToolset(WrapperToolset[Any]):
    """Bounds each call by ``timeout_s`` and turns whatever the tool did into a ``ToolResult``."""

    timeout_s: float = 60.0

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> ToolResult:
        try:
            returned = await asyncio.wait_for(super().call_tool(name, tool_args, ctx, tool), self.timeout_s)
        except PASS_THROUGH:
            raise
        except Exception as exc:
            result = exception_result(name, exc, self.timeout_s)
            if not isinstance(exc, DevOpsAgentError | TimeoutError | PermissionError | FileNotFoundError):
                log.warning("tool_exception", tool=name, error=scrub(repr(exc)).text)
            return result
        return normalize(returned)
