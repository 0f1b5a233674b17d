"""ORM rows to the records callers get (sessions, runs, events, audit entries) and back, shared by
the store's modules.

Like the rest of the store, this must not import from layers above foundation.
"""

from __future__ import annotations

from typing import Any

from devops_agent.store.models import AuditRow, EventRow, RunRow, SessionRow
from devops_agent.store.records import AuditRecord, EventRecord, RunRecord, SessionRecord

AUDIT_FIELDS = (
    "tool",
    "mode",
    "decision",
    "outcome",
    "actor",
    "session_id",
    "run_id",
    "tool_call_id",
    "command",
    "classification",
    "exit_status",
    "detail",
    "created_at",
    "sandbox",
    "user_id",
)


def audit_row(rec: AuditRecord) -> dict[str, Any]:
    """An audit entry as the values of its row."""
    return {k: getattr(rec, k) for k in AUDIT_FIELDS}


def audit_record(row: AuditRow) -> AuditRecord:
    return AuditRecord(**{k: getattr(row, k) for k in AUDIT_FIELDS})


def session_record(row: SessionRow) -> SessionRecord:
    return SessionRecord(
        id=row.id,
        title=row.title,
        mode=row.mode,
        model=row.model,
        status=row.status,
        context_state=dict(row.context_state),
        created_at=row.created_at,
        updated_at=row.updated_at,
        user_id=row.user_id,
    )


def run_record(row: RunRow) -> RunRecord:
    return RunRecord(
        id=row.id,
        session_id=row.session_id,
        status=row.status,
        path=row.path,
        parent_run_id=row.parent_run_id,
        cancel_requested=bool(row.cancel_requested),
        owner=row.owner,
        created_at=row.created_at,
        updated_at=row.updated_at,
        finished_at=row.finished_at,
        user_id=row.user_id,
        request=dict(row.request) if row.request is not None else None,
        usage=row.usage,
    )


def event_record(r: EventRow) -> EventRecord:
    return EventRecord(type=r.type, run_id=r.run_id, seq=r.seq, payload=r.payload, created_at=r.created_at)
