"""Runs as rows: status, the continuation chain, and a cancel request any process can set.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27

Until now a run existed only as the ``run_id`` of its events, so only the process running it
could see or stop it. A ``runs`` row lets another process (a second CLI, the service, a worker)
follow a run by id, read its status, and ask it to stop (``cancel_requested``).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("path", sa.String(32), nullable=True),
        sa.Column("parent_run_id", sa.String(64), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("owner", sa.String(200), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("finished_at", TS, nullable=True),
        sa.ForeignKeyConstraint(
            ["session_id"], ["sessions.id"], name="fk_runs_session_id_sessions", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
    )
    op.create_index("ix_runs_session_id", "runs", ["session_id"])
    op.create_index("ix_runs_status", "runs", ["status"])
    with op.batch_alter_table("events") as batch:
        batch.create_index("ix_events_run_id_seq", ["run_id", "seq"])


def downgrade() -> None:
    with op.batch_alter_table("events") as batch:
        batch.drop_index("ix_events_run_id_seq")
    op.drop_index("ix_runs_status", table_name="runs")
    op.drop_index("ix_runs_session_id", table_name="runs")
    op.drop_table("runs")
