"""Durable workers: keyed checkpoints of a run's steps, worker heartbeats, dedupe keys of queued runs.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28

With ``execution = "queue"`` (issue 28) runs execute on worker processes that may be killed at
any moment. ``run_checkpoints`` keeps what each completed step of a run returned (a tool call, a
notification), keyed by the step's identity rather than its position, so a worker that recovers
the run returns the recorded result instead of calling the tool again. ``workers`` holds each
worker's heartbeat and the runs it executes (for ``/v1/workers`` and for noticing a dead one).
``run_keys`` remembers which run a de-duplication key (an alert group, a schedule's firing)
started, so a repeat within the window joins that run instead of starting another.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "run_checkpoints",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("worker", sa.String(200), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("run_id", "key", name="pk_run_checkpoints"),
    )
    op.create_table(
        "workers",
        sa.Column("id", sa.String(200), nullable=False),
        sa.Column("host", sa.String(200), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("running", sa.JSON(), nullable=False),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("last_beat", TS, nullable=False),
        sa.Column("recovered_by", sa.String(200), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_workers"),
    )
    op.create_table(
        "run_keys",
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_run_keys"),
    )


def downgrade() -> None:
    op.drop_table("run_keys")
    op.drop_table("workers")
    op.drop_table("run_checkpoints")
