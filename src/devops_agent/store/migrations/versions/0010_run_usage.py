"""Runs keep their model usage: tokens, tool calls and cost, for limits and metrics.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27

Usage was only in each run's ``run_finished`` event. Session and daily usage limits add it up
across runs before every run, and the service reports it per run: a JSON column on ``runs``
(``requests``, ``tool_calls``, ``input_tokens``, ``output_tokens``, ``cost_usd`` …) read without
parsing events. Null for runs that made no model request.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("usage", sa.JSON(), nullable=True))
        batch.create_index("ix_runs_created_at", ["created_at"])


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_index("ix_runs_created_at")
        batch.drop_column("usage")
