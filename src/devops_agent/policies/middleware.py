"""Tool middleware: telemetry, circuit breaking, normalization, error mapping and size caps.

Every tool call, from the model loop (through :class:`MiddlewareToolset`) or from an offline
runbook (through :meth:`ToolMiddleware.invoke` directly), passes through the same pipeline:

1. an OpenTelemetry span ``tool <name>`` and one structured log line;
2. the tool's circuit breaker (an open breaker answers with an error result and a retry-after);
3. the call itself, with a timeout;
4. normalization: whatever the tool returned becomes a :class:`ToolResult`; exceptions become
   error results with a hint (pydantic-ai control-flow exceptions such as ``ModelRetry`` and
   ``ApprovalRequired`` pass through untouched);
5. the output cap (head + tail, ``truncated`` flagged);
6. a record for the store (via the ``recorder`` callback), with the full output when the model
   saw less of it: the tool's own ``raw`` (a log it summarized) or the data before the cap.
   With ``keep_raw`` the result tells the model where the user finds it.

Which failures count against the breaker: exceptions, timeouts, and error results the tool
marks ``transient=True`` in their metadata (a 503 from a server). A tool that answers "no such
file" is working correctly and does not trip its breaker.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import structlog
from opentelemetry.trace import Status, StatusCode
from pydantic_ai import ApprovalRequired, CallDeferred, ModelRetry, WrapperToolset
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import ToolsetTool

from devops_agent.config.settings import ToolSettings
from devops_agent.errors import CircuitOpenError, DevOpsAgentError, RunHaltedError
from devops_agent.policies.breaker import BreakerBoard
from devops_agent.policies.limits import as_text, cap_result
from devops_agent.privacy.secrets import scrub
from devops_agent.telemetry import tracer
from devops_agent.tools.base import ToolResult, ToolSpec, spec_from_metadata

log = structlog.get_logger("devops_agent.tools")

# Control flow of the run, not tool failures: approvals pause it, a halt stops it.
_PASS_THROUGH = (ModelRetry, ApprovalRequired, CallDeferred, RunHaltedError)


@dataclass(frozen=True)
class ToolCallInfo:
    """What the recorder receives after every call."""

    tool_call_id: str
    tool: str
    args: dict[str, Any]
    spec: ToolSpec | None
    result: ToolResult
    started_at: datetime
    raw: str | None = None
    """The full output behind a summarized or capped ``result`` (``None``: the model saw it all)."""


def normalize(raw: Any) -> ToolResult:
    """Turn any tool return value into a :class:`ToolResult`."""
    if isinstance(raw, ToolResult):
        return raw
    if raw is None or raw == [] or raw == {} or raw == "":
        return ToolResult.empty("the tool returned nothing")
    return ToolResult.ok(raw)


def _exception_result(tool: str, exc: BaseException, timeout_s: float) -> ToolResult:
    """The error result for an exception, with secrets cut out of its text: it is made here, outside
    the privacy wrapper, and goes to the history, the events, the store, logs and traces."""
    result = _describe(tool, exc, timeout_s)
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
class ToolMiddleware:
    """The pipeline around one tool call; one instance serves a whole run."""

    settings: ToolSettings
    breakers: BreakerBoard
    recorder: Callable[[ToolCallInfo], None] | None = None
    session_id: str | None = None
    run_id: str | None = None
    cap_chars: int | None = None
    """Output cap; ``None`` uses ``settings.output_cap_chars`` (sized for a model's context)."""
    keep_raw: bool = False
    """The recorder keeps full outputs: say so (and where) in results that were cut."""
    _counter: int = field(default=0, init=False)

    def next_call_id(self) -> str:
        self._counter += 1
        return f"call-{self._counter}"

    async def invoke(
        self,
        tool: str,
        args: dict[str, Any],
        call: Callable[[], Awaitable[Any]],
        *,
        spec: ToolSpec | None = None,
        tool_call_id: str | None = None,
    ) -> ToolResult:
        """Run ``call`` (which performs the tool call) through the pipeline."""
        call_id = tool_call_id or self.next_call_id()
        started_at = datetime.now(UTC)
        t0 = time.perf_counter()
        with tracer().start_as_current_span(f"tool {tool}") as span:
            span.set_attribute("devops_agent.tool", tool)
            span.set_attribute("devops_agent.tool_call_id", call_id)
            if spec is not None:
                span.set_attribute("devops_agent.read_only", spec.read_only)
                span.set_attribute("devops_agent.risk", spec.risk)
            try:
                self.breakers.before_call(tool)
                returned = await asyncio.wait_for(call(), timeout=self.settings.timeout_s)
                result = normalize(returned)
                transient = result.status == "error" and bool(result.metadata.get("transient"))
                self.breakers.record(tool, ok=not transient)
            except _PASS_THROUGH:
                raise
            except CircuitOpenError as exc:
                result = _exception_result(tool, exc, self.settings.timeout_s)
            except Exception as exc:
                self.breakers.record(tool, ok=False)
                result = _exception_result(tool, exc, self.settings.timeout_s)
                if result.metadata.get("error_type") not in (None, "TimeoutError") and not isinstance(
                    exc, DevOpsAgentError
                ):
                    log.warning("tool_exception", tool=tool, error=scrub(repr(exc)).text)
            capped = cap_result(result, self.cap_chars or self.settings.output_cap_chars)
            raw = result.raw
            if raw is None and capped is not result:
                raw = as_text(result.data)
            result = capped
            if raw is not None and self.keep_raw and self.settings.keep_full_output_chars:
                result.metadata["full_output"] = (
                    f"the whole output is kept in the session; to read it, run "
                    f"`devops-agent sessions output {self.session_id} {call_id}`"
                )
            duration_ms = (time.perf_counter() - t0) * 1000
            result.metadata.setdefault("source", tool)
            result.metadata["duration_ms"] = round(duration_ms, 2)
            span.set_attribute("devops_agent.status", result.status)
            span.set_attribute("devops_agent.truncated", bool(result.metadata.get("truncated")))
            if result.status == "error":
                span.set_status(Status(StatusCode.ERROR, result.error or "error"))
        log.info(
            "tool_call",
            tool=tool,
            status=result.status,
            duration_ms=round(duration_ms, 2),
            truncated=bool(result.metadata.get("truncated")),
            session_id=self.session_id,
            run_id=self.run_id,
        )
        if self.recorder is not None:
            self.recorder(ToolCallInfo(call_id, tool, args, spec, result, started_at, raw))
        return result


@dataclass
class MiddlewareToolset(WrapperToolset[Any]):
    """Applies :class:`ToolMiddleware` to every call of the wrapped pydantic-ai toolset.

    The model sees the normalized ``ToolResult`` as a JSON object.
    """

    middleware: ToolMiddleware | None = None

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        assert self.middleware is not None, "MiddlewareToolset needs a middleware"
        spec = spec_from_metadata(tool.tool_def.metadata)

        async def call() -> Any:
            return await self.wrapped.call_tool(name, tool_args, ctx, tool)

        result = await self.middleware.invoke(name, tool_args, call, spec=spec, tool_call_id=ctx.tool_call_id)
        return result.model_dump(mode="json", exclude_none=True)
