"""Evaluation runs: the headline figures of each ``devops-agent eval run`` and its whole result.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27

An evaluation (issue 29) is kept so that two can be compared later (``devops-agent eval
compare A B``): its target model, judge, cases folder and pass rate as columns to list and sort
by, and the full result (per case: verdicts, the judge's reasoning, replayed calls, events) as
JSON. Numbered 0010 because 0009 is taken on another branch; whoever merges links
``down_revision`` to the revision before it.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "eval_runs",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("label", sa.Text(), nullable=True),
        sa.Column("target", sa.String(200), nullable=False),
        sa.Column("judge", sa.String(200), nullable=True),
        sa.Column("cases_dir", sa.Text(), nullable=False),
        sa.Column("cases", sa.Integer(), nullable=False),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("passes", sa.Integer(), nullable=False),
        sa.Column("pass_rate", sa.Double(), nullable=False),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_eval_runs"),
    )
    op.create_index("ix_eval_runs_created_at", "eval_runs", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_eval_runs_created_at", table_name="eval_runs")
    op.drop_table("eval_runs")
