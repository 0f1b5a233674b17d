"""The store's side of durable workers: step checkpoints, worker heartbeats, de-duplication keys.

Mixed into :class:`~devops_agent.store.Store` (which provides ``_tx`` and ``backend``); kept apart
because it is its own concern and the store module is long enough. Only ``execution = "queue"``
uses these tables; a single process with SQLite never writes them.

* **Checkpoints** — what one completed step of a run returned (a tool call's result, a sent
  notification), under a key that names the step by what it is, not by its position, so a worker
  that recovers the run gets the recorded result back instead of doing the step again. The first
  write of a key wins; a second (two workers racing on one run) is ignored and the winner's value
  returned, so both continue with the same result.
* **Workers** — each worker's heartbeat and the runs it executes; a worker whose heartbeat
  stopped is claimed by exactly one survivor (:meth:`DurableStore.claim_dead_workers`).
* **Run keys** — the run an alert group or a schedule's firing last started.

This module interprets no payload (checkpoint values are opaque text) and imports nothing above
the foundation.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite

from devops_agent.store.models import MessageRow, RunCheckpointRow, RunKeyRow, RunRow, WorkerRow
from devops_agent.store.records import WorkerRecord, utcnow

# A worker declared dead: ``dead`` until a survivor has handed its runs back, then ``recovered``.
GONE_STATES = ("dead", "recovered")

if TYPE_CHECKING:
    from sqlalchemy.orm import Session as OrmSession


class DurableStore:
    """Store methods for durable workers."""

    if TYPE_CHECKING:

        def _tx(self, action: str, *, write: bool = False) -> AbstractContextManager[OrmSession]: ...

        @property
        def backend(self) -> str: ...

    def _insert(self, table: type[object]) -> postgresql.Insert | sqlite.Insert:
        dialect_insert = postgresql.insert if self.backend == "postgresql" else sqlite.insert
        return dialect_insert(table)

    # -- checkpoints ------------------------------------------------------------------------

    def checkpoints(self, run_id: str) -> dict[str, str]:
        """Every checkpoint of a run, by key."""
        query = select(RunCheckpointRow.key, RunCheckpointRow.value).where(RunCheckpointRow.run_id == run_id)
        with self._tx("read from") as orm:
            return {row.key: row.value for row in orm.execute(query)}

    def put_checkpoint(self, run_id: str, key: str, value: str, *, worker: str | None = None) -> str:
        """Record a completed step; returns the value that holds (the first one written wins)."""
        stmt = (
            self._insert(RunCheckpointRow)
            .values(run_id=run_id, key=key, value=value, worker=worker, created_at=utcnow())
            .on_conflict_do_nothing(index_elements=["run_id", "key"])
            # RETURNING, not rowcount: psycopg reports no usable count for a skipped insert.
            .returning(RunCheckpointRow.key)
        )
        with self._tx("write to", write=True) as orm:
            if orm.connection().execute(stmt).scalar() is not None:
                return value
            held = orm.scalar(
                select(RunCheckpointRow.value).where(
                    RunCheckpointRow.run_id == run_id, RunCheckpointRow.key == key
                )
            )
            return held if held is not None else value

    def count_checkpoints(self, run_ids: Sequence[str] | None = None) -> int:
        """How many steps are checkpointed (of these runs, or of all)."""
        query = select(func.count()).select_from(RunCheckpointRow)
        if run_ids is not None:
            query = query.where(RunCheckpointRow.run_id.in_(list(run_ids)))
        with self._tx("read from") as orm:
            return orm.scalar(query) or 0

    # -- a run resumed by another worker ----------------------------------------------------

    def forget_run_messages(self, run_id: str) -> int:
        """Delete the messages a run stored before its worker died; the recovered run stores them
        again as it replays (its history must start where the run started)."""
        with self._tx("write to", write=True) as orm:
            return (
                orm.connection().execute(delete(MessageRow).where(MessageRow.run_id == run_id)).rowcount or 0
            )

    def claim_run(self, run_id: str, owner: str) -> None:
        """Mark a run as executing on ``owner`` (a queued run starts; a recovered one changes hands)."""
        values = {"owner": owner, "updated_at": utcnow(), "status": "running", "finished_at": None}
        with self._tx("write to", write=True) as orm:
            orm.execute(update(RunRow).where(RunRow.id == run_id).values(**values))

    def queued_runs(self) -> tuple[int, datetime | None]:
        """How many runs wait for a worker, and when the oldest of them was queued."""
        query = select(func.count(), func.min(RunRow.created_at)).where(RunRow.status == "queued")
        with self._tx("read from") as orm:
            count, oldest = orm.execute(query).one()
            return int(count or 0), oldest

    # -- workers ----------------------------------------------------------------------------

    def worker_beat(self, worker: WorkerRecord, *, register: bool = False) -> None:
        """Insert or refresh a worker's heartbeat (its state and the runs it executes).

        A heartbeat never brings back a worker declared dead (a stalled worker that read "alive"
        just before it was claimed would otherwise undo the claim and run beside the new owner of
        its runs; its next beat then finds itself dead and exits). ``register`` is the first beat of
        a new process, which may reuse an id (``worker --id``): it replaces whatever the row held."""
        values = {
            "id": worker.id,
            "host": worker.host,
            "pid": worker.pid,
            "state": worker.state,
            "running": list(worker.running),
            "started_at": worker.started_at,
            "last_beat": worker.last_beat,
            "recovered_by": None,
        }
        stmt = self._insert(WorkerRow).values(values)
        columns = ("state", "running", "last_beat", "host", "pid") + (
            ("started_at", "recovered_by") if register else ()
        )
        stmt = stmt.on_conflict_do_update(
            index_elements=["id"],
            set_={k: stmt.excluded[k] for k in columns},
            where=None if register else WorkerRow.state.not_in(GONE_STATES),
        )
        with self._tx("write to", write=True) as orm:
            orm.execute(stmt)

    def list_workers(self, *, include_gone: bool = False) -> list[WorkerRecord]:
        """Workers, newest heartbeat first; stopped and dead ones only with ``include_gone``."""
        query = select(WorkerRow).order_by(WorkerRow.last_beat.desc())
        if not include_gone:
            query = query.where(WorkerRow.state == "alive")
        with self._tx("read from") as orm:
            return [_worker_record(r) for r in orm.scalars(query)]

    def claim_dead_workers(self, silent_since: datetime, claimant: str) -> list[str]:
        """Workers alive by their state but silent since ``silent_since``: mark each dead and
        recovered by ``claimant``. Each is claimed by exactly one caller (a conditional update)."""
        with self._tx("read from") as orm:
            ids = list(
                orm.scalars(
                    select(WorkerRow.id).where(
                        WorkerRow.state == "alive",
                        WorkerRow.last_beat < silent_since,
                        WorkerRow.id != claimant,
                    )
                )
            )
        claimed: list[str] = []
        for worker_id in ids:
            stmt = (
                update(WorkerRow)
                .where(
                    WorkerRow.id == worker_id, WorkerRow.state == "alive", WorkerRow.last_beat < silent_since
                )
                .values(state="dead", recovered_by=claimant)
            )
            with self._tx("write to", write=True) as orm:
                if orm.connection().execute(stmt).rowcount:
                    claimed.append(worker_id)
        return claimed

    def adopt_unfinished_claims(self, claimant: str) -> list[str]:
        """Dead workers whose runs are not handed back yet and whose claimant is ``claimant`` or no
        longer alive (killed between its claim and the hand-back, stopped by an error, itself dead):
        each becomes ``claimant``'s (a conditional update: one adopter). Includes what
        ``claimant`` has just claimed."""
        # A dead row always names its claimant: claim_dead_workers sets both in one update.
        alive = select(WorkerRow.id).where(WorkerRow.state == "alive", WorkerRow.id != claimant)
        query = select(WorkerRow.id, WorkerRow.recovered_by).where(
            WorkerRow.state == "dead",
            or_(WorkerRow.recovered_by == claimant, WorkerRow.recovered_by.not_in(alive)),
        )
        with self._tx("read from") as orm:
            rows = list(orm.execute(query))
        adopted: list[str] = []
        for worker_id, previous in rows:
            if previous == claimant:
                adopted.append(worker_id)
                continue
            stmt = (
                update(WorkerRow)
                .where(
                    WorkerRow.id == worker_id, WorkerRow.state == "dead", WorkerRow.recovered_by == previous
                )
                .values(recovered_by=claimant)
            )
            with self._tx("write to", write=True) as orm:
                if orm.connection().execute(stmt).rowcount:
                    adopted.append(worker_id)
        return adopted

    def finish_claims(self, worker_ids: list[str]) -> None:
        """The runs of these dead workers are back on the queue: nobody needs to hand them back again."""
        if worker_ids:
            stmt = (
                update(WorkerRow)
                .where(WorkerRow.id.in_(worker_ids), WorkerRow.state == "dead")
                .values(state="recovered")
            )
            with self._tx("write to", write=True) as orm:
                orm.execute(stmt)

    # -- de-duplication keys ----------------------------------------------------------------

    def run_for_key(self, key: str, since: datetime) -> str | None:
        """The run ``key`` started at or after ``since``, if any."""
        query = select(RunKeyRow.run_id).where(RunKeyRow.key == key, RunKeyRow.created_at >= since)
        with self._tx("read from") as orm:
            return orm.scalar(query)

    def remember_key(self, key: str, run_id: str) -> None:
        """``key`` started ``run_id`` now."""
        stmt = self._insert(RunKeyRow).values(key=key, run_id=run_id, created_at=utcnow())
        stmt = stmt.on_conflict_do_update(
            index_elements=["key"],
            set_={"run_id": stmt.excluded.run_id, "created_at": stmt.excluded.created_at},
        )
        with self._tx("write to", write=True) as orm:
            orm.execute(stmt)


def _worker_record(row: WorkerRow) -> WorkerRecord:
    return WorkerRecord(
        id=row.id,
        host=row.host,
        pid=row.pid,
        state=row.state,
        running=list(row.running or []),
        started_at=row.started_at,
        last_beat=row.last_beat,
        recovered_by=row.recovered_by,
    )
