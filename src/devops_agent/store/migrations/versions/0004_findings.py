"""Findings memory: what an investigation concluded, kept per project for later investigations.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23

No foreign key to sessions on purpose: a finding outlives the session that produced it (deleting
a conversation must not make the agent forget what it learned). ``evidence`` and ``tags`` are
JSON lists of strings.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "findings",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("project", sa.String(200), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("evidence", sa.JSON(), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("session_id", sa.String(64), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_findings"),
    )
    op.create_index("ix_findings_project_created_at", "findings", ["project", "created_at"])
    op.create_index("ix_findings_session_id", "findings", ["session_id"])


def downgrade() -> None:
    op.drop_table("findings")
