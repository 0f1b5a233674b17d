"""Privacy vault: placeholder → original per session and namespace.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22

Rows belong to a session (deleting the session purges them); secrets are never stored here.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "vault",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("namespace", sa.String(16), nullable=False),
        sa.Column("entity_type", sa.String(32), nullable=False),
        sa.Column("placeholder", sa.String(64), nullable=False),
        sa.Column("original", sa.Text(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_vault"),
        sa.ForeignKeyConstraint(
            ["session_id"], ["sessions.id"], name="fk_vault_session_id_sessions", ondelete="CASCADE"
        ),
        sa.UniqueConstraint(
            "session_id", "namespace", "placeholder", name="uq_vault_session_id_namespace_placeholder"
        ),
    )
    op.create_index("ix_vault_session_id", "vault", ["session_id"])
    op.create_index("ix_vault_created_at", "vault", ["created_at"])


def downgrade() -> None:
    op.drop_table("vault")
