"""The store's evaluation runs: save one, read one back by id (or prefix), list the latest.

Mixed into :class:`~devops_agent.store.Store` (which provides ``_tx``); kept apart because they
are their own concern and the store module is long enough. An evaluation is written once and
never changed: comparing two of them later must compare what was measured then.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from sqlalchemy import func, select

from devops_agent.errors import NotFoundError, UserError
from devops_agent.store.models import EvalRunRow
from devops_agent.store.records import EvalRunRecord

if TYPE_CHECKING:
    from sqlalchemy.orm import Session as OrmSession

MIN_PREFIX = 6
LATEST = "latest"
_HINT = "`devops-agent eval list` shows the stored evaluations"


class EvalRunStore:
    """Store methods for evaluation runs."""

    if TYPE_CHECKING:

        def _tx(self, action: str, *, write: bool = False) -> AbstractContextManager[OrmSession]: ...

    def save_eval_run(self, record: EvalRunRecord) -> EvalRunRecord:
        """Keep an evaluation; its id must be new (evaluations are never overwritten)."""
        with self._tx("write to", write=True) as orm:
            if orm.get(EvalRunRow, record.id) is not None:
                raise UserError(f"evaluation {record.id} is already stored")
            orm.add(
                EvalRunRow(
                    id=record.id,
                    created_at=record.created_at,
                    label=record.label,
                    target=record.target,
                    judge=record.judge,
                    cases_dir=record.cases_dir,
                    cases=record.cases,
                    runs=record.runs,
                    passes=record.passes,
                    pass_rate=record.pass_rate,
                    result=record.result,
                )
            )
        return record

    def get_eval_run(self, ref: str) -> EvalRunRecord:
        """The evaluation with id ``ref``, a unique prefix of it (6+ characters), ``latest``, or
        ``latest~N`` (the N-th before the latest)."""
        with self._tx("read from") as orm:
            return _record(_find(orm, ref))

    def list_eval_runs(self, limit: int = 20) -> list[EvalRunRecord]:
        """The ``limit`` latest evaluations, newest first, without their full results."""
        query = select(EvalRunRow).order_by(EvalRunRow.created_at.desc(), EvalRunRow.id.desc()).limit(limit)
        with self._tx("read from") as orm:
            return [_record(row, with_result=False) for row in orm.scalars(query)]


def _find(orm: OrmSession, ref: str) -> EvalRunRow:
    if ref == LATEST or ref.startswith(LATEST + "~"):
        back = ref.partition("~")[2]
        if back and not back.isdigit():
            raise UserError(f"{ref!r}: write latest~N with a number N", hint=_HINT)
        query = select(EvalRunRow).order_by(EvalRunRow.created_at.desc(), EvalRunRow.id.desc())
        row = orm.scalars(query.offset(int(back or 0)).limit(1)).first()
        if row is None:
            raise NotFoundError(f"no evaluation {ref}: fewer are stored", hint=_HINT)
        return row
    row = orm.get(EvalRunRow, ref)
    if row is not None:
        return row
    if len(ref) < MIN_PREFIX:
        raise NotFoundError(
            f"no evaluation {ref!r} (an id prefix needs {MIN_PREFIX}+ characters)", hint=_HINT
        )
    prefix = func.substr(EvalRunRow.id, 1, len(ref))
    rows = list(orm.scalars(select(EvalRunRow).where(prefix == ref).limit(2)))
    if len(rows) > 1:
        raise UserError(f"evaluation id prefix {ref!r} matches more than one", hint="give more characters")
    if not rows:
        raise NotFoundError(f"no evaluation {ref!r}", hint=_HINT)
    return rows[0]


def _record(row: EvalRunRow, *, with_result: bool = True) -> EvalRunRecord:
    return EvalRunRecord(
        id=row.id,
        created_at=row.created_at,
        label=row.label,
        target=row.target,
        judge=row.judge,
        cases_dir=row.cases_dir,
        cases=row.cases,
        runs=row.runs,
        passes=row.passes,
        pass_rate=row.pass_rate,
        result=dict(row.result) if with_result else {},
    )
