"""A deleted finding's id is never given to another finding.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27

On SQLite an ``INTEGER PRIMARY KEY`` without ``AUTOINCREMENT`` takes one more than the largest id
in the table, so deleting the newest finding handed its id to the next one: "#12" in an old note,
a report or a shell history then named another finding (``memory delete 12`` twice removed two).
SQLite cannot add ``AUTOINCREMENT`` to a table, so the table is rebuilt with it (rows, ids and
indexes kept). PostgreSQL's sequence never reuses a value: nothing to do there.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    with op.batch_alter_table("findings", recreate="always", table_kwargs={"sqlite_autoincrement": True}):
        pass


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    with op.batch_alter_table("findings", recreate="always", table_kwargs={"sqlite_autoincrement": False}):
        pass
