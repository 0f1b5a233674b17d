"""Audit log: whether a command ran in the read-only sandbox.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-27

A nullable column on ``audit_log``: ``bwrap`` for a command that ran confined, ``inactive`` for
one rated read-only that ran unconfined because the sandbox was off or unavailable, NULL where
no sandbox applies (other tools, approved commands). A write the sandbox refused is the outcome
``sandbox_denied`` (outcomes are free text in the schema; the store checks them).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("audit_log") as batch:
        batch.add_column(sa.Column("sandbox", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("audit_log") as batch:
        batch.drop_column("sandbox")
