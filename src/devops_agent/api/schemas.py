"""Request and response bodies of the REST API (pydantic models, published in ``/openapi.json``).

Events are the package's own ``RunEvent`` models, never a copy of them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from devops_agent.events import RunEvent
from devops_agent.store import RunRecord, SessionRecord

Mode = Literal["ask", "agent"]
ALERTS_KEY = "alert_notifications"
"""Where an alert's session keeps the notifications it received (firing, re-sent, resolved)."""


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SessionCreate(_In):
    title: str = Field(min_length=1, max_length=200)
    mode: Mode | None = Field(None, description="default: the server's configured mode (viewers: ask)")


class SessionPatch(_In):
    title: str | None = Field(None, min_length=1, max_length=200)
    mode: Mode | None = None


class SessionOut(BaseModel):
    id: str
    title: str
    mode: str
    model: str | None
    status: str
    user_id: str | None
    created_at: datetime
    updated_at: datetime
    pending_approvals: int = Field(description="tool calls waiting for approval")
    alerts: list[dict[str, Any]] = Field(
        default_factory=list, description="alert notifications this session received (alert investigations)"
    )

    @classmethod
    def of(cls, rec: SessionRecord) -> SessionOut:
        return cls(
            id=rec.id,
            title=rec.title,
            mode=rec.mode,
            model=rec.model,
            status=rec.status,
            user_id=rec.user_id,
            created_at=rec.created_at,
            updated_at=rec.updated_at,
            pending_approvals=len(rec.context_state.get("pending_approvals") or {}),
            alerts=list(rec.context_state.get(ALERTS_KEY) or []),
        )


class SessionPage(BaseModel):
    items: list[SessionOut]
    total: int
    next_offset: int | None = Field(description="offset of the next page; null on the last one")


class RunInputs(_In):
    """What the run looks at, as the CLI's options (paths are on the server, within files.roots)."""

    logs: list[str] = Field(default_factory=list, max_length=50)
    repo: str | None = None
    since: str | None = Field(None, description="start of the window: 2h, 30m, 1d, an ISO time")
    query: str | None = Field(None, description="PromQL of the metric that looks wrong")
    pod: str | None = None
    namespace: str | None = None
    selector: str | None = None
    deployment: str | None = None
    ticket: str | None = Field(None, description="a Jira key to triage")
    alert: dict[str, Any] | None = Field(
        None, description="an Alertmanager webhook payload to investigate (as `investigate --alert`)"
    )
    alert_index: int | None = Field(
        None, ge=1, description="which alert of the payload, from 1 (default: the first firing one)"
    )


class RunCreate(_In):
    question: str | None = Field(
        None, min_length=1, max_length=20_000, description="what to investigate (optional with inputs.alert)"
    )
    session_id: str | None = Field(None, description="continue this session (POST /v1/runs only)")
    mode: Mode | None = None
    model: str | None = Field(None, description="must be the server's model when given")
    runbooks: list[str] | None = Field(
        None, max_length=20, description="run these runbooks instead of choosing"
    )
    inputs: RunInputs = Field(default_factory=RunInputs)


class RunOut(BaseModel):
    id: str
    session_id: str
    status: str
    path: str | None
    parent_run_id: str | None
    cancel_requested: bool
    user_id: str | None
    created_at: datetime
    finished_at: datetime | None
    resumable: bool = Field(description="interrupted by a shutdown: POST /v1/runs/{id}/resume continues it")

    @classmethod
    def of(cls, rec: RunRecord) -> RunOut:
        return cls(
            id=rec.id,
            session_id=rec.session_id,
            status=rec.status,
            path=rec.path,
            parent_run_id=rec.parent_run_id,
            cancel_requested=rec.cancel_requested,
            user_id=rec.user_id,
            created_at=rec.created_at,
            finished_at=rec.finished_at,
            resumable=rec.status == "interrupted" and rec.request is not None,
        )


class RunAccepted(BaseModel):
    session_id: str
    run_id: str
    status: str = "running"
    events: str = Field(description="where to follow it (JSON pages, or SSE with Accept: text/event-stream)")


class CancelOut(BaseModel):
    run_id: str
    cancelled: bool = Field(description="false when the run had already finished")


class EventPage(BaseModel):
    events: list[RunEvent]
    next_after_seq: int | None = Field(None, description="run events: pass as after_seq for the next page")
    next_offset: int | None = Field(None, description="session events: pass as offset for the next page")
    finished: bool = Field(False, description="run events: the run has finished and this page ends it")


class ReportOut(BaseModel):
    run_id: str
    status: str
    output: str | None
    report: dict[str, Any] | None
    usage: dict[str, Any] | None


class KeptOutput(BaseModel):
    tool_call_id: str
    tool: str
    chars: int


class ToolOutput(BaseModel):
    session_id: str
    tool_call_id: str
    output: str


class PendingCall(BaseModel):
    """A tool call waiting for approval, as the approver must see it."""

    session_id: str
    tool_call_id: str
    tool: str
    args: dict[str, Any]
    decision: str = Field(description="approve, or approve_detailed for a destructive call (needs CONFIRM)")
    reason: str = ""
    command: str | None = None
    classification: str | None = None
    impact: dict[str, str] | None = Field(None, description="what changes, what could be lost, how to undo")


class ApprovalAnswer(_In):
    decision: Literal["approve", "deny"]
    call_ids: list[str] | None = Field(
        None, description="the pending calls you answer; must be all of them (default: all)"
    )
    reason: str = Field("", max_length=2000, description="why; the model sees it on a denial")
    confirm: str | None = Field(None, description="CONFIRM, to approve a destructive call")


class PlanAnswer(_In):
    decision: Literal["approve", "edit", "reject"]
    text: str = Field(
        "",
        max_length=4000,
        description="edit: what to change (required; the model proposes a revised plan); "
        "reject: why (optional)",
    )


class PendingPlan(BaseModel):
    """A plan waiting for a decision, as the person deciding must see it."""

    session_id: str
    revision: int = Field(description="1 for the first proposal, +1 for each revision after an edit")
    goal: str
    steps: list[dict[str, Any]] = Field(
        description="in order: title, intent, tools, specialist, expected_evidence, mutating"
    )
    mutating: bool = Field(description="whether any step changes things (each still asks when it runs)")


class Me(BaseModel):
    id: str | None
    name: str
    role: str
    active_runs: int
