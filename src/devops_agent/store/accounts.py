"""Store methods for a shared service: users and their tokens, and the per-user queries behind the API.

:class:`AccountsMixin` is part of :class:`~devops_agent.store.Store` (mixed in; kept apart so
the store's core stays readable). A user's API token is never stored: only its SHA-256, which
the service looks up on each request (the token holds 256 random bits, so a fast hash is as safe
as a slow one here, and an indexed equality lookup needs a deterministic one).

Like the rest of the store, this must not import from layers above foundation.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from sqlalchemy import delete, func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session as OrmSession

from devops_agent.errors import NotFoundError, UserError
from devops_agent.store.convert import event_record, run_record, session_record
from devops_agent.store.findings import finding_record
from devops_agent.store.models import EventRow, FindingRow, RunRow, SessionRow, UserRow
from devops_agent.store.records import (
    ROLES,
    EventRecord,
    FindingRecord,
    RunRecord,
    SessionRecord,
    UserRecord,
    utcnow,
)

USERS_HINT = "`devops-agent users list` shows the users"
MAX_USER_NAME = 200


def _user_record(row: UserRow) -> UserRecord:
    return UserRecord(id=row.id, name=row.name, role=row.role, created_at=row.created_at)


class AccountsMixin:
    """Users, and the queries a multi-user service needs (filtered, paged, by owner)."""

    _tx: Callable[..., AbstractContextManager[OrmSession]]

    # -- users ------------------------------------------------------------------------------

    def create_user(self, name: str, role: str, token_hash: str) -> UserRecord:
        """Add a user; ``token_hash`` is the SHA-256 hex of their token. A taken name is a UserError."""
        name = name.strip()
        if not name or len(name) > MAX_USER_NAME or any(c.isspace() or not c.isprintable() for c in name):
            raise UserError(
                f"invalid user name {name[:60]!r}",
                hint=f"use 1 to {MAX_USER_NAME} printable characters without spaces, e.g. alice",
            )
        if role not in ROLES:
            raise UserError(f"invalid role {role!r}", hint=f"use one of: {', '.join(ROLES)}")
        row = UserRow(id=uuid.uuid4().hex, name=name, role=role, token_hash=token_hash, created_at=utcnow())
        with self._tx("write to", write=True) as orm:
            orm.add(row)
            try:
                orm.flush()
            except IntegrityError:
                raise UserError(
                    f"user {name!r} already exists",
                    hint=f"pick another name, or `devops-agent users remove {name}` first",
                ) from None
            return _user_record(row)

    def user_for_token(self, token_hash: str) -> UserRecord | None:
        """The user whose token hashes to ``token_hash``, if any."""
        with self._tx("read from") as orm:
            row = orm.scalar(select(UserRow).where(UserRow.token_hash == token_hash))
            return None if row is None else _user_record(row)

    def get_user(self, name: str) -> UserRecord:
        """The user called ``name``; :class:`NotFoundError` when there is none."""
        with self._tx("read from") as orm:
            row = orm.scalar(select(UserRow).where(UserRow.name == name))
            if row is None:
                raise NotFoundError(f"no user {name!r}", hint=USERS_HINT)
            return _user_record(row)

    def list_users(self) -> list[UserRecord]:
        """Every user, by name."""
        with self._tx("read from") as orm:
            return [_user_record(r) for r in orm.scalars(select(UserRow).order_by(UserRow.name))]

    def delete_user(self, name: str) -> UserRecord:
        """Remove a user (their token stops working at once); their sessions and audit entries stay."""
        with self._tx("write to", write=True) as orm:
            row = orm.scalar(select(UserRow).where(UserRow.name == name))
            if row is None:
                raise NotFoundError(f"no user {name!r}", hint=USERS_HINT)
            gone = _user_record(row)
            orm.execute(delete(UserRow).where(UserRow.id == row.id))
            return gone

    # -- per-user queries -------------------------------------------------------------------

    def find_sessions(
        self,
        *,
        user_id: str | None = None,
        status: str | None = None,
        mode: str | None = None,
        text: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[list[SessionRecord], int]:
        """Sessions newest first, filtered by owner, status, mode and a title substring; and how
        many match in all (for paging)."""
        where: list[Any] = []
        if user_id is not None:
            where.append(SessionRow.user_id == user_id)
        if status is not None:
            where.append(SessionRow.status == status)
        if mode is not None:
            where.append(SessionRow.mode == mode)
        if text:
            # lower() on both sides: LIKE ignores case on SQLite but not on PostgreSQL.
            where.append(func.lower(SessionRow.title).contains(text.lower(), autoescape=True))
        query = (
            select(SessionRow)
            .where(*where)
            .order_by(SessionRow.updated_at.desc(), SessionRow.id.desc())
            .limit(limit)
            .offset(offset)
        )
        count = select(func.count()).select_from(SessionRow).where(*where)
        with self._tx("read from") as orm:
            return [session_record(r) for r in orm.scalars(query)], int(orm.scalar(count) or 0)

    def session_events(
        self, session_id: str, *, run_id: str | None = None, offset: int = 0, limit: int = 500
    ) -> list[EventRecord]:
        """A page of a session's events in the order they were stored (optionally one run's)."""
        query = select(EventRow).where(EventRow.session_id == session_id)
        if run_id is not None:
            query = query.where(EventRow.run_id == run_id)
        query = query.order_by(EventRow.id).offset(offset).limit(limit)
        with self._tx("read from") as orm:
            return [event_record(r) for r in orm.scalars(query)]

    def active_runs(self, user_id: str | None = None) -> list[RunRecord]:
        """Runs still running (of one user, or of everyone), oldest first."""
        query = select(RunRow).where(RunRow.status == "running").order_by(RunRow.created_at)
        if user_id is not None:
            query = query.where(RunRow.user_id == user_id)
        with self._tx("read from") as orm:
            return [run_record(r) for r in orm.scalars(query)]

    def find_findings(
        self, *, user_id: str | None, project: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[FindingRecord]:
        """Findings newest first; with ``user_id``, that user's and those no user owns (the CLI's)."""
        query = select(FindingRow).order_by(FindingRow.created_at.desc(), FindingRow.id.desc())
        if user_id is not None:
            query = query.where(or_(FindingRow.user_id == user_id, FindingRow.user_id.is_(None)))
        if project is not None:
            query = query.where(FindingRow.project == project)
        with self._tx("read from") as orm:
            return [finding_record(r) for r in orm.scalars(query.limit(limit).offset(offset))]
