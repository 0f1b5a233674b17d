"""The typed ``RunEvent`` stream every interface consumes.

A run (model loop or offline runbook) emits events in order; the CLI renders them, the store
persists them, tests assert on them, and later the WebSocket/SSE endpoints forward them as JSON.
Each event carries ``v`` (schema version), ``session_id``, ``run_id``, a per-run ``seq`` and a UTC
timestamp. Adding an event type or an optional field is compatible; renaming or removing one
bumps :data:`SCHEMA_VERSION`.

This module must not import from the agent, policy or interface layers.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

SCHEMA_VERSION = 1


def _now() -> datetime:
    return datetime.now(UTC)


class _EventBase(BaseModel):
    model_config = ConfigDict(frozen=True)

    v: int = SCHEMA_VERSION
    session_id: str
    run_id: str
    seq: int = 0
    ts: datetime = Field(default_factory=_now)


class RunStarted(_EventBase):
    type: Literal["run_started"] = "run_started"
    prompt: str
    mode: str
    path: Literal["model", "runbook"]
    model: str | None = None
    runbooks: list[str] = Field(default_factory=list)


class Token(_EventBase):
    """A chunk of streamed model text."""

    type: Literal["token"] = "token"
    text: str


class PlanProposed(_EventBase):
    """Steps the run intends to take (runbook steps, or a model's plan)."""

    type: Literal["plan_proposed"] = "plan_proposed"
    steps: list[str]


class ToolCall(_EventBase):
    type: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class ToolResultEvent(_EventBase):
    type: Literal["tool_result"] = "tool_result"
    tool_call_id: str
    tool: str
    status: str
    duration_ms: float | None = None
    truncated: bool = False
    error: str | None = None
    summary: str | None = None


class ApprovalRequested(_EventBase):
    """The run is paused until a person approves or denies this call.

    ``decision`` is ``approve`` or ``approve_detailed`` (destructive: ``impact`` says what changes,
    what could be lost and how to undo, and the approver must type CONFIRM).
    """

    type: Literal["approval_requested"] = "approval_requested"
    tool_call_id: str
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    reason: str = ""
    decision: str = "approve"
    command: str | None = None
    classification: str | None = None
    impact: dict[str, str] | None = None


class ApprovalResolved(_EventBase):
    type: Literal["approval_resolved"] = "approval_resolved"
    tool_call_id: str
    approved: bool
    reason: str = ""
    approver: str = "user"


class ErrorEvent(_EventBase):
    type: Literal["error"] = "error"
    message: str
    hint: str | None = None
    error_type: str | None = None


class ContextCompacted(_EventBase):
    """A model request was fitted into the model's window: what was replaced, tokens before/after.

    ``replaced``: tool calls whose results were sent as one-line summaries; ``folded``: calls of
    older turns folded into one summary of them; ``cut``: the latest results cut to fit. Each full
    result stays in the session (``devops-agent sessions output``)."""

    type: Literal["context_compacted"] = "context_compacted"
    request: int
    tokens_before: int
    tokens_after: int
    limit: int
    window: int
    counter: str
    replaced: list[str] = Field(default_factory=list)
    folded: list[str] = Field(default_factory=list)
    cut: list[str] = Field(default_factory=list)
    summarizer: str | None = None
    duration_ms: float = 0.0


class LimitReached(_EventBase):
    """A usage limit (``limits.run|session|day``) was reached; the run ends with a partial report."""

    type: Literal["limit_reached"] = "limit_reached"
    scope: Literal["run", "session", "day"]
    limit: Literal["requests", "tool_calls", "tokens", "cost_usd"]
    used: float
    ceiling: float


RunStatus = Literal["completed", "failed", "cancelled", "paused"]


class RunFinished(_EventBase):
    type: Literal["run_finished"] = "run_finished"
    status: RunStatus
    output: str | None = None
    report: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None
    """Model runs: ``requests``, ``input_tokens``, ``output_tokens``, ``total_tokens``, ``cost_usd``,
    ``tool_calls``, ``cache_read_tokens``, ``cache_write_tokens``, ``price_source`` and, when more
    than one model worked, ``by_model`` (the same keys per model name)."""


RunEvent = Annotated[
    RunStarted
    | Token
    | PlanProposed
    | ToolCall
    | ToolResultEvent
    | ApprovalRequested
    | ApprovalResolved
    | ErrorEvent
    | ContextCompacted
    | LimitReached
    | RunFinished,
    Field(discriminator="type"),
]
"""Any event of a run; discriminated on ``type``."""

RunEventAdapter: TypeAdapter[RunEvent] = TypeAdapter(RunEvent)


def event_to_json(event: RunEvent) -> str:
    """Serialize one event to a JSON line."""
    return event.model_dump_json()


def event_from_json(data: str | bytes) -> RunEvent:
    """Parse one event from JSON; raises ``pydantic.ValidationError`` on malformed input."""
    return RunEventAdapter.validate_json(data)
