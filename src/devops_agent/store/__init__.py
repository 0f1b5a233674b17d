"""Persistence for sessions, runs, message history, run events, tool calls, circuit breakers and
evaluation runs.

SQLAlchemy 2 with Alembic migrations: SQLite in WAL mode by default (one file, several
processes), PostgreSQL when ``database_url`` says so. :class:`Store` is the only entry point; it
hands out the immutable records below and raises :class:`~devops_agent.errors.StoreError` when
the database fails. Nothing outside this package may import its ORM models or SQLAlchemy types,
and this package must not import from the policy, agent or interface layers.
"""

from devops_agent.store.records import (
    AUDIT_OUTCOMES,
    BREAKER_STATES,
    MODES,
    ROLES,
    RUN_FINAL,
    RUN_STATUSES,
    SESSION_STATUSES,
    VAULT_NAMESPACES,
    AuditRecord,
    BreakerRecord,
    EvalRunRecord,
    EventRecord,
    EventWrite,
    MessageWrite,
    RunRecord,
    SessionRecord,
    ToolCallRecord,
    UserRecord,
    VaultEntry,
    WorkerRecord,
)
from devops_agent.store.store import Store

__all__ = [
    "AUDIT_OUTCOMES",
    "AuditRecord",
    "BREAKER_STATES",
    "MODES",
    "ROLES",
    "RUN_FINAL",
    "RUN_STATUSES",
    "SESSION_STATUSES",
    "BreakerRecord",
    "EvalRunRecord",
    "EventRecord",
    "EventWrite",
    "MessageWrite",
    "RunRecord",
    "SessionRecord",
    "Store",
    "ToolCallRecord",
    "UserRecord",
    "VAULT_NAMESPACES",
    "VaultEntry",
    "WorkerRecord",
]
