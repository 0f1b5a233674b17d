"""The plain, immutable records the store hands out and accepts.

Callers above the store see only these dataclasses, never ORM rows, so nothing outside
``devops_agent.store`` depends on SQLAlchemy. This module must not import SQLAlchemy or anything
from the layers above foundation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

MODES: Final = ("ask", "agent")
SESSION_STATUSES: Final = ("idle", "running", "paused", "failed", "completed", "cancelled", "interrupted")
RUN_STATUSES: Final = ("queued", "running", "paused", "failed", "completed", "cancelled", "interrupted")
"""``queued``: waiting for a worker (``execution = "queue"``); it has no events yet."""
RUN_FINAL: Final = ("paused", "failed", "completed", "cancelled", "interrupted")
"""A run in one of these states emits no more events (a paused run continues as a new run; an
interrupted one — stopped at a step boundary by a service shutting down — can be resumed)."""
ROLES: Final = ("viewer", "operator", "admin", "alerts")
"""Roles of service users: ``viewer`` asks (read-only), ``operator`` may use agent mode and approve
mutating calls, ``admin`` also destructive ones and sees every user's sessions, ``alerts`` may
only post alerts."""
BREAKER_STATES: Final = ("closed", "open", "half_open")


def utcnow() -> datetime:
    """The current time as a tz-aware UTC datetime (the only kind the store keeps)."""
    return datetime.now(UTC)


def _require_aware(name: str, value: datetime | None) -> None:
    # A naive datetime is ambiguous (local? UTC?); refusing it here gives a clear error at the
    # call site instead of a silently shifted timestamp in the database.
    if value is not None and value.tzinfo is None:
        raise ValueError(f"{name} must be timezone-aware (use datetime.now(UTC))")


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One conversation: its settings, status and the runtime's context state."""

    id: str
    title: str
    mode: str
    model: str | None
    status: str
    context_state: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    user_id: str | None = None
    """The service user the session belongs to (``None``: made by the CLI)."""


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run: which session, where it stands, and whether someone asked it to stop.

    ``parent_run_id`` names the paused run a continuation answers; ``owner`` the process running it.
    """

    id: str
    session_id: str
    status: str
    path: str | None
    parent_run_id: str | None
    cancel_requested: bool
    owner: str | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    usage: dict[str, Any] | None = None
    """The run's model usage (``run_finished.usage``): tokens, tool calls, cost; None without a model."""
    user_id: str | None = None
    request: dict[str, Any] | None = None
    """What was asked (``prompt``, ``mode``, ``inputs``): what resuming an interrupted run repeats."""

    @property
    def finished(self) -> bool:
        return self.status in RUN_FINAL


@dataclass(frozen=True, slots=True)
class EventRecord:
    """One persisted ``RunEvent``; ``payload`` is the whole event as JSON."""

    type: str
    run_id: str
    seq: int
    payload: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """The outcome of one tool call, for history and telemetry (``session_id`` may be None)."""

    session_id: str | None
    run_id: str
    tool_call_id: str
    tool: str
    args: dict[str, Any]
    status: str
    duration_ms: float | None = None
    error: str | None = None
    truncated: bool = False
    created_at: datetime = field(default_factory=utcnow)
    raw_output: str | None = None
    """The full output when the model saw a summary or a capped copy (secrets already scrubbed)."""

    def __post_init__(self) -> None:
        _require_aware("created_at", self.created_at)


@dataclass(frozen=True, slots=True)
class BreakerRecord:
    """A tool's circuit breaker state, persisted so it survives restarts and is shared."""

    tool: str
    state: str
    failures: int
    opened_at: datetime | None = None
    retry_after_s: float | None = None
    updated_at: datetime = field(default_factory=utcnow)

    def __post_init__(self) -> None:
        if self.state not in BREAKER_STATES:
            raise ValueError(f"breaker state must be one of {BREAKER_STATES}, not {self.state!r}")
        _require_aware("opened_at", self.opened_at)
        _require_aware("updated_at", self.updated_at)


@dataclass(frozen=True, slots=True)
class EventWrite:
    """One run event to persist (the write-side twin of :class:`EventRecord`)."""

    session_id: str
    run_id: str
    seq: int
    type: str
    payload: str
    created_at: datetime = field(default_factory=utcnow)


@dataclass(frozen=True, slots=True)
class MessageWrite:
    """Serialized model messages to append to a session's history, in order."""

    session_id: str
    run_id: str
    payloads: tuple[str, ...]


AUDIT_OUTCOMES = ("executed", "failed", "sandbox_denied", "denied", "rejected", "pending", "halted")


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One entry of the audit log: what was run or refused, in which mode, on whose decision.

    ``decision`` is the policy's verdict (allow, approve, approve_detailed, reject, halt);
    ``outcome`` is what happened (executed, failed, sandbox_denied: it ran in the read-only
    sandbox and tried to write, denied, rejected, pending, halted);
    ``actor`` is who decided: ``policy`` for automatic decisions, else the approver's name;
    ``sandbox`` is ``bwrap`` when it ran confined, ``inactive`` when it was rated read-only but
    the sandbox was off or unavailable, ``None`` where no sandbox applies.
    """

    tool: str
    mode: str
    decision: str
    outcome: str
    actor: str = "policy"
    session_id: str | None = None
    run_id: str | None = None
    tool_call_id: str | None = None
    command: str | None = None
    classification: str | None = None
    exit_status: int | None = None
    detail: str | None = None
    created_at: datetime = field(default_factory=utcnow)
    sandbox: str | None = None
    user_id: str | None = None
    """The service user whose session this is (filled from the session when stored)."""


VAULT_NAMESPACES = ("user_in", "tool_args", "tool_out", "final_out")


@dataclass(frozen=True, slots=True)
class VaultEntry:
    """One placeholder of the privacy vault and the original it stands for (never a secret)."""

    session_id: str
    namespace: str
    entity_type: str
    placeholder: str
    original: str
    created_at: datetime = field(default_factory=utcnow)


MAX_PROJECT_CHARS = 200


@dataclass(frozen=True, slots=True)
class FindingRecord:
    """One finding of an investigation, remembered per project so later investigations can recall it.

    ``evidence`` holds citations, URLs or short excerpts that back the finding; ``source`` says
    what produced it (``triage OPS-123``, ``cli``); ``id`` is ``None`` until the store assigns one.
    """

    project: str
    title: str
    summary: str
    evidence: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    source: str | None = None
    session_id: str | None = None
    created_at: datetime = field(default_factory=utcnow)
    id: int | None = None
    user_id: str | None = None
    """The service user whose session produced it (filled from the session when stored)."""

    def __post_init__(self) -> None:
        _require_aware("created_at", self.created_at)


@dataclass(frozen=True, slots=True)
class UserRecord:
    """A user of the service. The API token itself is never stored, only its SHA-256."""

    id: str
    name: str
    role: str
    created_at: datetime


@dataclass(frozen=True)
class EvalRunRecord:
    """One stored evaluation: the headline figures and the full result (``EvalResult`` as JSON)."""

    id: str
    created_at: datetime
    label: str | None
    target: str
    judge: str | None
    cases_dir: str
    cases: int
    runs: int
    passes: int
    pass_rate: float
    result: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _require_aware("created_at", self.created_at)


@dataclass(frozen=True, slots=True)
class WorkerRecord:
    """A worker process as its heartbeat left it; ``running`` are the runs it executes."""

    id: str
    host: str
    pid: int
    state: str
    running: list[str]
    started_at: datetime
    last_beat: datetime
    recovered_by: str | None = None
