"""The model usage of runs: written when a run finishes, added up for limits and metrics.

Each run's ``usage`` (``requests``, ``tool_calls``, ``input_tokens``, ``output_tokens``,
``cost_usd`` …, as its ``run_finished`` event carries it) is a JSON column of ``runs``
(migration 0010), so a session's or a day's usage is one query, not a parse of every event;
:func:`run_usage_of` is where the service reads one run's. Part of the store package: it may use
the store's private transaction helper and ORM rows, and nothing above the foundation.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select, update

from devops_agent.store.models import RunRow
from devops_agent.store.store import Store


def save_run_usage(store: Store, run_id: str, usage: dict[str, Any]) -> None:
    """Record a run's model usage."""
    with store._tx("write to", write=True) as orm:
        orm.execute(update(RunRow).where(RunRow.id == run_id).values(usage=usage))


def run_usage_of(store: Store, run_id: str) -> dict[str, Any] | None:
    """One run's usage (None: no model request, or no such run)."""
    with store._tx("read from") as orm:
        value = orm.scalar(select(RunRow.usage).where(RunRow.id == run_id))
    return value if isinstance(value, dict) else None


def run_usages(
    store: Store, *, session_id: str | None = None, since: datetime | None = None
) -> list[dict[str, Any]]:
    """The usage of a session's runs, or of every run created since ``since`` (daily limits),
    oldest first; runs without usage are left out."""
    query = select(RunRow.usage).where(RunRow.usage.is_not(None)).order_by(RunRow.created_at)
    if session_id is not None:
        query = query.where(RunRow.session_id == session_id)
    if since is not None:
        query = query.where(RunRow.created_at >= since)
    with store._tx("read from") as orm:
        return [u for u in orm.scalars(query) if isinstance(u, dict)]
