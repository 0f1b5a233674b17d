"""Users of the service (API tokens, stored hashed) and the user of each session, run, audit entry
and finding; a run's request, so an interrupted run can be resumed by any process.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28

``devops-agent serve`` is shared by a team: every row a person's request produces names that
person (``user_id``), so one user never sees another's sessions and the audit log says who did
what. The columns are nullable: rows written by the CLI (one person, their own machine) have no
user. No foreign keys to ``users``: the audit trail and findings outlive a removed user.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)
OWNED = ("sessions", "runs", "audit_log", "findings")


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_users"),
        sa.UniqueConstraint("name", name="uq_users_name"),
        sa.UniqueConstraint("token_hash", name="uq_users_token_hash"),
    )
    for table in OWNED:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("user_id", sa.String(64), nullable=True))
            batch.create_index(f"ix_{table}_user_id", ["user_id"])
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("request", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("request")
    for table in OWNED:
        with op.batch_alter_table(table) as batch:
            batch.drop_index(f"ix_{table}_user_id")
            batch.drop_column("user_id")
    op.drop_table("users")
