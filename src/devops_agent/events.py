"""The typed ``RunEvent`` stream every interface consumes.

A run (model loop or offline runbook) emits events in order; the CLI renders them, the store
persists them, tests assert on them, and later the WebSocket/SSE endpoints forward them as JSON.
Each event carries ``v`` (schema version), ``session_id``, ``run_id``, a per-run ``seq`` and a UTC
timestamp. Adding an event type or an optional field is compatible; renaming or removing one
bumps :data:`SCHEMA_VERSION`.

This module must not import from the agent, policy or interface layers.
"""

from __future__ import annotations

import typing
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from devops_agent.evidence import Evidence

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
    agent: str | None = None
    """The agent that produced the event: a specialist (``logs``), ``critic``, ``synthesizer``;
    ``None`` for the run's own loop (the orchestrator, or the runbook engine)."""


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
    """Steps the run intends to take (runbook steps, or a model's plan).

    ``steps`` is one line per step, for every reader; a model's plan also carries ``plan`` (its
    goal and structured steps: intent, tools or specialist, expected evidence, ``mutating``),
    its ``revision`` (1 for the first, +1 for each one revised after feedback) and whether the
    run now waits for a person's decision (``awaiting_decision``) or runs it (a lookup in ``auto``).
    """

    type: Literal["plan_proposed"] = "plan_proposed"
    steps: list[str]
    plan: dict[str, Any] | None = None
    revision: int = 0
    awaiting_decision: bool = False
    feedback: str | None = None
    """The feedback this revision answers."""


class PlanResolved(_EventBase):
    """A person's (or the policy's) decision on a proposed plan."""

    type: Literal["plan_resolved"] = "plan_resolved"
    decision: Literal["approved", "edited", "rejected"]
    revision: int
    feedback: str = ""
    approver: str = "user"


PlanStepStatus = Literal["pending", "running", "done", "skipped", "failed"]


class PlanStepEvent(_EventBase):
    """One step of the approved plan changed status."""

    type: Literal["plan_step"] = "plan_step"
    index: int
    """0-based position of the step in the plan."""
    title: str
    status: PlanStepStatus
    tool_call_id: str | None = None
    note: str = ""


class PlanDeviation(_EventBase):
    """What the run did that the approved plan did not say: a call no step names, a step skipped,
    a step started before an earlier one, a re-plan asked by the critic."""

    type: Literal["plan_deviation"] = "plan_deviation"
    kind: Literal["unplanned_call", "skipped_step", "out_of_order", "replan"]
    detail: str
    tool_call_id: str | None = None
    step: int | None = None


class Delegation(_EventBase):
    """A specialist agent started or finished a task the orchestrator (or the council) gave it."""

    type: Literal["delegation"] = "delegation"
    phase: Literal["started", "finished"]
    specialist: str
    task: str
    tool_call_id: str | None = None
    """The orchestrator's call that delegated (``None`` in a council)."""
    status: str | None = None
    duration_ms: float | None = None
    usage: dict[str, Any] | None = None


class CriticReview(_EventBase):
    """What one pass of the critic found: ``deterministic`` checks or the ``model`` critic.

    ``issues`` hold ``finding`` (index), ``title``, ``check`` and ``detail``; ``action`` says what
    follows: ``replan`` (the orchestrator is asked to fix it), ``applied`` (claims removed or
    downgraded), ``accepted`` (nothing to change)."""

    type: Literal["critic_review"] = "critic_review"
    stage: Literal["deterministic", "model"]
    round: int
    issues: list[dict[str, Any]] = Field(default_factory=list)
    missing_evidence: list[str] = Field(default_factory=list)
    action: Literal["replan", "applied", "accepted"]


class Replan(_EventBase):
    """The critic sent the orchestrator back for evidence or fixes (``number`` of ``budget``)."""

    type: Literal["replan"] = "replan"
    number: int
    budget: int
    reason: str


class CouncilResult(_EventBase):
    """A council's members and where they disagree, as the synthesizer (and the checks) found."""

    type: Literal["council"] = "council"
    members: list[str]
    disagreements: list[dict[str, Any]] = Field(default_factory=list)


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
    evidence: Evidence | None = None
    """What the call showed, to draw: a metric series with its anomaly windows, a log template
    table, timeline entries (bounded; masked like the rest of the output)."""


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


class RunResumed(_EventBase):
    """A worker took the run over after the one executing it stopped (``execution = "queue"``).

    Steps that had completed are not done again; the step that was in flight is, so a tool call
    or a model answer that had started may appear twice. ``after_seq`` is the last event stored
    before the takeover."""

    type: Literal["run_resumed"] = "run_resumed"
    worker: str
    after_seq: int
    completed_steps: int = 0


class NotificationSent(_EventBase):
    """The run's result was sent to a sink (Slack, a webhook, e-mail, Jira), or could not be."""

    type: Literal["notification"] = "notification"
    sink: str
    kind: str
    ok: bool
    attempts: int = 1
    error: str | None = None


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


RunStatus = Literal["completed", "failed", "cancelled", "paused", "interrupted"]
"""``interrupted``: stopped at a step boundary by a service shutting down; the run can be resumed."""


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
    | PlanResolved
    | PlanStepEvent
    | PlanDeviation
    | Delegation
    | CriticReview
    | Replan
    | CouncilResult
    | ToolCall
    | ToolResultEvent
    | ApprovalRequested
    | ApprovalResolved
    | ErrorEvent
    | RunResumed
    | NotificationSent
    | ContextCompacted
    | LimitReached
    | RunFinished,
    Field(discriminator="type"),
]
"""Any event of a run; discriminated on ``type``."""

RunEventAdapter: TypeAdapter[RunEvent] = TypeAdapter(RunEvent)

EVENT_TYPES: frozenset[str] = frozenset(
    typing.get_args(cls.model_fields["type"].annotation)[0]
    for cls in typing.get_args(typing.get_args(RunEvent)[0])
)
"""Every ``type`` of the ``RunEvent`` union (a hand list elsewhere once dropped the reasoning,
worker and context events)."""


def event_to_json(event: RunEvent) -> str:
    """Serialize one event to a JSON line."""
    return event.model_dump_json()


def event_from_json(data: str | bytes) -> RunEvent:
    """Parse one event from JSON; raises ``pydantic.ValidationError`` on malformed input."""
    return RunEventAdapter.validate_json(data)
