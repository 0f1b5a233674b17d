"""ORM tables of the store (SQLAlchemy 2 typed declarative), portable across SQLite and PostgreSQL.

These classes describe the schema the migrations build; they are the store's private
representation. Nothing outside ``devops_agent.store`` may import them (callers get the records
of :mod:`devops_agent.store.records`). A change here needs a new, hand-written revision under
``migrations/versions``; ``tests/test_store.py`` fails when the two disagree.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    Dialect,
    Double,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class UTCDateTime(TypeDecorator[datetime]):
    """A datetime stored as UTC and always read back tz-aware UTC.

    PostgreSQL keeps ``timestamptz`` natively; SQLite has no time zones, so values are converted
    to UTC and stored naive, and the zone is re-attached on the way out.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("the store keeps only timezone-aware datetimes")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# SQLite only auto-increments a column declared exactly INTEGER PRIMARY KEY; PostgreSQL gets a
# 64-bit key because events (streamed tokens) can be numerous.
BigId = BigInteger().with_variant(Integer(), "sqlite")

# Named constraints let future migrations alter them by name (SQLite batch mode needs this).
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    # float is explicit because SQLAlchemy 2.0 and 2.1 map it differently (Float vs Double).
    type_annotation_map = {datetime: UTCDateTime(), dict[str, Any]: JSON(), float: Double()}


class SessionRow(Base):
    __tablename__ = "sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    title: Mapped[str] = mapped_column(Text)
    mode: Mapped[str] = mapped_column(String(16))
    model: Mapped[str | None] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16), default="idle")
    context_state: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime] = mapped_column(index=True)
    user_id: Mapped[str | None] = mapped_column(String(64), index=True)


class RunRow(Base):
    """One run of a session: its status, and the cancel request any process may set."""

    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    session_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("sessions.id", ondelete="CASCADE"), index=True
    )
    status: Mapped[str] = mapped_column(String(16), index=True)
    path: Mapped[str | None] = mapped_column(String(32))
    parent_run_id: Mapped[str | None] = mapped_column(String(64))
    cancel_requested: Mapped[bool] = mapped_column(default=False)
    owner: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(index=True)
    updated_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    usage: Mapped[dict[str, Any] | None]
    user_id: Mapped[str | None] = mapped_column(String(64), index=True)
    # What was asked (prompt, mode, inputs): an interrupted run is resumed from it, by any process.
    request: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class MessageRow(Base):
    __tablename__ = "messages"
    # The unique index leads with session_id, so it also serves lookups by session.
    __table_args__ = (UniqueConstraint("session_id", "seq"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(String(64), ForeignKey("sessions.id", ondelete="CASCADE"))
    run_id: Mapped[str] = mapped_column(String(64))
    seq: Mapped[int] = mapped_column(Integer)
    payload: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]


class EventRow(Base):
    __tablename__ = "events"
    __table_args__ = (
        Index("ix_events_session_id_run_id", "session_id", "run_id"),
        Index("ix_events_run_id_seq", "run_id", "seq"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(String(64), ForeignKey("sessions.id", ondelete="CASCADE"))
    run_id: Mapped[str] = mapped_column(String(64))
    seq: Mapped[int] = mapped_column(Integer)
    type: Mapped[str] = mapped_column(String(64), index=True)
    payload: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]


class ToolCallRow(Base):
    __tablename__ = "tool_calls"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    session_id: Mapped[str | None] = mapped_column(
        String(64), ForeignKey("sessions.id", ondelete="CASCADE"), index=True
    )
    run_id: Mapped[str] = mapped_column(String(64))
    tool_call_id: Mapped[str] = mapped_column(String(200))
    tool: Mapped[str] = mapped_column(String(200), index=True)
    args: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(String(32))
    duration_ms: Mapped[float | None]
    error: Mapped[str | None] = mapped_column(Text)
    truncated: Mapped[bool]
    created_at: Mapped[datetime]
    # Large, and only read on request (``Store.tool_output``): not loaded with the row.
    raw_output: Mapped[str | None] = mapped_column(Text, deferred=True)


class BreakerRow(Base):
    __tablename__ = "tool_breakers"

    tool: Mapped[str] = mapped_column(String(200), primary_key=True)
    state: Mapped[str] = mapped_column(String(16))
    failures: Mapped[int]
    opened_at: Mapped[datetime | None]
    retry_after_s: Mapped[float | None]
    updated_at: Mapped[datetime]


class AuditRow(Base):
    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    created_at: Mapped[datetime] = mapped_column(index=True)
    # No foreign key: the audit trail outlives the sessions it describes.
    session_id: Mapped[str | None] = mapped_column(String(64), index=True)
    run_id: Mapped[str | None] = mapped_column(String(64))
    tool_call_id: Mapped[str | None] = mapped_column(String(200))
    tool: Mapped[str] = mapped_column(String(200))
    command: Mapped[str | None] = mapped_column(Text)
    mode: Mapped[str] = mapped_column(String(16))
    classification: Mapped[str | None] = mapped_column(String(32))
    decision: Mapped[str] = mapped_column(String(32))
    outcome: Mapped[str] = mapped_column(String(32), index=True)
    actor: Mapped[str] = mapped_column(String(200))
    exit_status: Mapped[int | None]
    detail: Mapped[str | None] = mapped_column(Text)
    sandbox: Mapped[str | None] = mapped_column(String(16))
    user_id: Mapped[str | None] = mapped_column(String(64), index=True)


class VaultRow(Base):
    __tablename__ = "vault"
    __table_args__ = (UniqueConstraint("session_id", "namespace", "placeholder"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(
        String(64), ForeignKey("sessions.id", ondelete="CASCADE"), index=True
    )
    namespace: Mapped[str] = mapped_column(String(16))
    entity_type: Mapped[str] = mapped_column(String(32))
    placeholder: Mapped[str] = mapped_column(String(64))
    original: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(index=True)


class FindingRow(Base):
    __tablename__ = "findings"
    # AUTOINCREMENT on SQLite (PostgreSQL's sequence never reuses ids anyway): without it the id of
    # the newest finding, once deleted, is handed to the next one, and "#12" names another finding.
    __table_args__ = (
        Index("ix_findings_project_created_at", "project", "created_at"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    project: Mapped[str] = mapped_column(String(200))
    title: Mapped[str] = mapped_column(Text)
    summary: Mapped[str] = mapped_column(Text)
    evidence: Mapped[list[str]] = mapped_column(JSON)
    tags: Mapped[list[str]] = mapped_column(JSON)
    source: Mapped[str | None] = mapped_column(Text)
    # No foreign key: a finding outlives the session that produced it.
    session_id: Mapped[str | None] = mapped_column(String(64), index=True)
    created_at: Mapped[datetime]
    user_id: Mapped[str | None] = mapped_column(String(64), index=True)


class UserRow(Base):
    """A user of the service: a name, a role and the SHA-256 of their API token (never the token)."""

    __tablename__ = "users"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime]


class EvalRunRow(Base):
    """One evaluation run (``devops-agent eval run``): its headline figures, and the whole result
    as JSON (per case: verdicts, judge reasoning, calls, events) for ``eval compare``."""

    __tablename__ = "eval_runs"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(index=True)
    label: Mapped[str | None] = mapped_column(Text)
    target: Mapped[str] = mapped_column(String(200))
    judge: Mapped[str | None] = mapped_column(String(200))
    cases_dir: Mapped[str] = mapped_column(Text)
    cases: Mapped[int] = mapped_column(Integer)
    runs: Mapped[int] = mapped_column(Integer)
    passes: Mapped[int] = mapped_column(Integer)
    pass_rate: Mapped[float]
    result: Mapped[dict[str, Any]] = mapped_column(JSON)


class RunCheckpointRow(Base):
    """What one completed step of a durable run returned, keyed by the step's identity."""

    __tablename__ = "run_checkpoints"

    run_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    worker: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime]


class WorkerRow(Base):
    """A worker process: its heartbeat and the runs it executes."""

    __tablename__ = "workers"

    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    host: Mapped[str] = mapped_column(String(200))
    pid: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16))
    running: Mapped[list[str]] = mapped_column(JSON)
    started_at: Mapped[datetime]
    last_beat: Mapped[datetime]
    recovered_by: Mapped[str | None] = mapped_column(String(200))


class RunKeyRow(Base):
    """The run a de-duplication key (an alert group, a schedule's firing) last started."""

    __tablename__ = "run_keys"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    run_id: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
