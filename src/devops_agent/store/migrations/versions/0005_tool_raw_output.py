"""Keep the full output of a tool call whose result the model saw summarized or capped.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23

A nullable column on ``tool_calls``: most calls keep nothing; a console log summarized into
error signatures keeps the log itself (secrets scrubbed) for ``devops-agent sessions output``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("tool_calls") as batch:
        batch.add_column(sa.Column("raw_output", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tool_calls") as batch:
        batch.drop_column("raw_output")
