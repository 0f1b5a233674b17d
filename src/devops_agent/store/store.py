"""The :class:`Store`: sessions, message history, run events, tool calls and breaker state.

A synchronous facade over SQLAlchemy; each method is one short transaction, so a Store may be
shared by threads (asyncio callers use ``asyncio.to_thread``) and by processes on one database.
It returns and accepts only the records of :mod:`devops_agent.store.records` and raises only
:class:`~devops_agent.errors.DevOpsAgentError` subclasses. It must not interpret payloads (message
and event JSON are opaque text here) nor import from layers above foundation.
"""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session as OrmSession

from devops_agent.errors import DevOpsAgentError, NotFoundError, RunFencedError, UserError
from devops_agent.store import engine as _engine
from devops_agent.store.accounts import AccountsMixin
from devops_agent.store.convert import audit_record, audit_row
from devops_agent.store.convert import event_record as _event_record
from devops_agent.store.convert import run_record as _run_record
from devops_agent.store.convert import session_record as _session_record
from devops_agent.store.durable import DurableStore
from devops_agent.store.eval_runs import EvalRunStore
from devops_agent.store.findings import check_finding as _check_finding
from devops_agent.store.findings import finding_not_found as _finding_not_found
from devops_agent.store.findings import finding_record as _finding_record
from devops_agent.store.models import (
    AuditRow,
    BreakerRow,
    EventRow,
    FindingRow,
    MessageRow,
    RunRow,
    SessionRow,
    ToolCallRow,
    VaultRow,
)
from devops_agent.store.records import (
    AUDIT_OUTCOMES,
    MODES,
    RUN_FINAL,
    RUN_STATUSES,
    SESSION_STATUSES,
    VAULT_NAMESPACES,
    AuditRecord,
    BreakerRecord,
    EventRecord,
    EventWrite,
    FindingRecord,
    MessageWrite,
    RunRecord,
    SessionRecord,
    ToolCallRecord,
    VaultEntry,
    utcnow,
)

if TYPE_CHECKING:
    from devops_agent.config.settings import Settings

MIN_PREFIX = 6
SESSIONS_HINT = "`devops-agent sessions list` shows the known sessions"


class Store(AccountsMixin, EvalRunStore, DurableStore):
    """The persistent store. Opening it migrates the database to the latest schema.

    ``url`` is a SQLAlchemy URL: ``sqlite:///path`` (the default kind; ``sqlite://`` is an
    in-memory database for tests) or ``postgresql://user:password@host/db``.
    """

    def __init__(self, url: str) -> None:
        self._url = _engine.normalize_url(url)
        self._engine = _engine.create_store_engine(self._url)
        try:
            _engine.upgrade_to_head(self._engine, self._url)
        except BaseException:
            self._engine.dispose()
            raise
        self._writer = _engine.writer(self._engine)
        self._closed = False
        # In-memory SQLite is one shared connection: overlapping transactions from threads would
        # collide on it, so calls take turns. Real databases need no lock here.
        single = _engine.is_single_connection(self._engine)
        self._serial: AbstractContextManager[Any] = threading.Lock() if single else nullcontext()
        # A SQLite file lets one writer in at a time; the others wait at most the busy timeout,
        # then fail ("database is locked"). This process's writers queue here instead: a busy
        # service (a hundred runs, each writing from a worker thread) saw writes fail after 5 s.
        # Other processes still share the file through SQLite's lock and busy timeout.
        sqlite_file = self._url.get_backend_name() == "sqlite" and not single
        self._write_serial: AbstractContextManager[Any] = threading.RLock() if sqlite_file else nullcontext()
        # Sessions' owners for audit rows: set at creation and never changed, so looked up once.
        self._owners: dict[str, str | None] = {}

    @classmethod
    def from_settings(cls, settings: Settings) -> Store:
        """Open the store ``settings`` point at (SQLite in the data dir unless database_url is set)."""
        return cls(settings.resolved_database_url())

    @property
    def url_for_display(self) -> str:
        """The database URL with its password masked, safe for logs and ``config show``."""
        return _engine.display_url(self._url)

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._url.get_backend_name()

    def schema_status(self) -> tuple[str | None, str]:
        """``(current, newest)`` migration revisions: the database's, and this package's newest."""
        try:
            return _engine.schema_revisions(self._engine)
        except SQLAlchemyError as exc:
            raise _engine.map_error(exc, self._url, "read from") from exc

    def close(self) -> None:
        """Close every pooled connection. The store cannot be used afterwards."""
        self._closed = True
        self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @contextmanager
    def _tx(self, action: str, *, write: bool = False) -> Iterator[OrmSession]:
        if self._closed:
            raise RuntimeError("this Store is closed")
        try:
            with (
                self._serial,
                self._write_serial if write else nullcontext(),
                OrmSession(self._writer if write else self._engine) as orm,
                orm.begin(),
            ):
                yield orm
        except DevOpsAgentError:
            raise
        except SQLAlchemyError as exc:
            raise _engine.map_error(exc, self._url, action) from exc

    # -- sessions ---------------------------------------------------------------------------

    def create_session(
        self,
        *,
        title: str,
        mode: str,
        model: str | None,
        session_id: str | None = None,
        user_id: str | None = None,
    ) -> SessionRecord:
        """Create a session (status ``idle``) of ``user_id``; ``session_id`` defaults to a random uuid hex."""
        _check_choice("mode", mode, MODES)
        now = utcnow()
        row = SessionRow(
            id=session_id or uuid.uuid4().hex,
            title=title,
            mode=mode,
            model=model,
            status="idle",
            context_state={},
            created_at=now,
            updated_at=now,
            user_id=user_id,
        )
        with self._tx("write to", write=True) as orm:
            orm.add(row)
            try:
                orm.flush()
            except IntegrityError:
                raise UserError(f"session {row.id!r} already exists", session_id=row.id) from None
            return _session_record(row)

    def get_session(self, session_id: str) -> SessionRecord:
        """The session with this id, or with this unique id prefix of at least 6 characters."""
        with self._tx("read from") as orm:
            return _session_record(_resolve(orm, session_id))

    def list_sessions(self, limit: int = 50) -> list[SessionRecord]:
        """The ``limit`` most recently updated sessions, newest first."""
        query = select(SessionRow).order_by(SessionRow.updated_at.desc(), SessionRow.id.desc()).limit(limit)
        with self._tx("read from") as orm:
            return [_session_record(row) for row in orm.scalars(query)]

    def update_session(
        self,
        session_id: str,
        *,
        title: str | None = None,
        mode: str | None = None,
        model: str | None = None,
        status: str | None = None,
        context_state: dict[str, Any] | None = None,
    ) -> SessionRecord:
        """Change the given fields (None leaves a field as it is) and bump ``updated_at``."""
        if mode is not None:
            _check_choice("mode", mode, MODES)
        if status is not None:
            _check_choice("status", status, SESSION_STATUSES)
        with self._tx("write to", write=True) as orm:
            row = _resolve(orm, session_id)
            changes = {"title": title, "mode": mode, "model": model, "status": status}
            for name, value in changes.items():
                if value is not None:
                    setattr(row, name, value)
            if context_state is not None:
                row.context_state = dict(context_state)
            row.updated_at = utcnow()
            orm.flush()
            return _session_record(row)

    def delete_session(self, session_id: str) -> None:
        """Delete a session with its messages, events and tool calls."""
        with self._tx("write to", write=True) as orm:
            row = _resolve(orm, session_id)
            # The database cascades to child rows (ON DELETE CASCADE); no ORM loading needed.
            orm.execute(delete(SessionRow).where(SessionRow.id == row.id))

    # -- runs -------------------------------------------------------------------------------

    def create_run(
        self,
        session_id: str,
        run_id: str,
        *,
        path: str | None = None,
        parent_run_id: str | None = None,
        owner: str | None = None,
        user_id: str | None = None,
        request: dict[str, Any] | None = None,
        status: str = "running",
    ) -> RunRecord:
        """Record that run ``run_id`` of a session started (``running``), or waits for a worker
        (``queued``); ``request`` is what was asked, kept so that an interrupted run can be resumed."""
        _check_choice("status", status, RUN_STATUSES)
        now = utcnow()
        row = RunRow(
            id=run_id,
            session_id=session_id,
            status=status,
            path=path,
            parent_run_id=parent_run_id,
            cancel_requested=False,
            owner=owner,
            created_at=now,
            updated_at=now,
            finished_at=None,
            user_id=user_id,
            request=request,
        )
        with self._tx("write to", write=True) as orm:
            orm.add(row)
            _flush_or_not_found(orm, session_id)
            return _run_record(row)

    def get_run(self, run_id: str) -> RunRecord:
        """The run with this id; :class:`NotFoundError` when there is none."""
        with self._tx("read from") as orm:
            row = orm.get(RunRow, run_id)
            if row is None:
                raise NotFoundError(
                    f"no run {run_id!r}",
                    hint="`devops-agent sessions show ID --events` lists a session's runs",
                )
            return _run_record(row)

    def list_runs(self, session_id: str) -> list[RunRecord]:
        """A session's runs, oldest first."""
        query = select(RunRow).where(RunRow.session_id == session_id).order_by(RunRow.created_at, RunRow.id)
        with self._tx("read from") as orm:
            return [_run_record(r) for r in orm.scalars(query)]

    def update_run(self, run_id: str, *, status: str | None = None, path: str | None = None) -> None:
        """Change a run's status (a final one stamps ``finished_at``) or path."""
        if status is not None:
            _check_choice("status", status, RUN_STATUSES)
        now = utcnow()
        values: dict[str, Any] = {"updated_at": now}
        if status is not None:
            values["status"] = status
            values["finished_at"] = now if status in RUN_FINAL else None
        if path is not None:
            values["path"] = path
        with self._tx("write to", write=True) as orm:
            orm.execute(update(RunRow).where(RunRow.id == run_id).values(**values))

    def request_cancel(self, run_id: str) -> bool:
        """Ask a run to stop, from any process; ``False`` when it had already finished.

        :class:`NotFoundError` when there is no such run."""
        with self._tx("write to", write=True) as orm:
            row = orm.get(RunRow, run_id)
            if row is None:
                raise NotFoundError(f"no run {run_id!r}")
            if row.status in RUN_FINAL:
                return False
            row.cancel_requested = True
            row.updated_at = utcnow()
            return True

    def cancel_requested(self, run_ids: Sequence[str]) -> set[str]:
        """Which of ``run_ids`` someone asked to stop."""
        if not run_ids:
            return set()
        query = select(RunRow.id).where(RunRow.id.in_(list(run_ids)), RunRow.cancel_requested.is_(True))
        with self._tx("read from") as orm:
            return set(orm.scalars(query))

    # -- messages ---------------------------------------------------------------------------

    def append_messages(self, session_id: str, run_id: str, payloads: list[str]) -> None:
        """Append serialized model messages; their ``seq`` continues after the session's last."""
        if not payloads:
            return
        with self._tx("write to", write=True) as orm:
            _append_messages(orm, session_id, run_id, payloads)

    def append_batch(
        self,
        *,
        events: Sequence[EventWrite] = (),
        tool_calls: Sequence[ToolCallRecord] = (),
        messages: Sequence[MessageWrite] = (),
        audits: Sequence[AuditRecord] = (),
        owner: tuple[str, str] | None = None,
    ) -> None:
        """Write many events, tool calls and message appends in one transaction.

        This is what a busy run uses: one commit for everything that accumulated instead of
        one per row. Messages are appended first, then events, then tool calls, each group
        in the order given. An unknown session raises :class:`NotFoundError` and writes nothing.
        With ``owner`` (``(run_id, worker)``: a durable worker's run) nothing is written unless
        that run is still that worker's — the run row is locked while the batch is written, so a
        worker declared dead cannot write beside the one that took its run over
        (:class:`RunFencedError`).
        """
        if not (events or tool_calls or messages or audits):
            return
        for a in audits:
            _check_choice("outcome", a.outcome, AUDIT_OUTCOMES)
        with self._tx("write to", write=True) as orm:
            if owner is not None:
                run_id, worker = owner
                holder = orm.scalar(select(RunRow.owner).where(RunRow.id == run_id).with_for_update())
                if holder != worker:
                    raise RunFencedError(
                        f"run {run_id[:12]} is executed by {holder}, not by this worker ({worker})",
                        hint="this worker was declared dead while it stalled; it stops",
                    )
            for m in messages:
                _append_messages(orm, m.session_id, m.run_id, list(m.payloads))
            try:
                if events:
                    orm.execute(insert(EventRow), [_event_row(e) for e in events])
                if tool_calls:
                    orm.execute(insert(ToolCallRow), [_tool_call_row(r) for r in tool_calls])
                if audits:
                    owned = _with_owners(orm, [audit_row(a) for a in audits], self._owners)
                    orm.execute(insert(AuditRow), owned)
            except IntegrityError:
                # Only the foreign key to sessions can fail on these inserts.
                ids = {e.session_id for e in events} | {r.session_id for r in tool_calls if r.session_id}
                raise _not_found(", ".join(sorted(ids))) from None

    def load_messages(self, session_id: str, *, before_run: str | None = None) -> list[str]:
        """All message payloads of a session in ``seq`` order (empty for an unknown session);
        with ``before_run``, without that run's own (its history as it started)."""
        query = select(MessageRow.payload).where(MessageRow.session_id == session_id).order_by(MessageRow.seq)
        if before_run is not None:
            query = query.where(MessageRow.run_id != before_run)
        with self._tx("read from") as orm:
            return list(orm.scalars(query))

    def count_messages(self, session_id: str) -> int:
        """How many messages a session holds."""
        query = select(func.count()).select_from(MessageRow).where(MessageRow.session_id == session_id)
        with self._tx("read from") as orm:
            return orm.scalar(query) or 0

    # -- events -----------------------------------------------------------------------------

    def append_event(self, session_id: str, run_id: str, seq: int, type: str, payload: str) -> None:
        """Persist one run event (``payload`` is the whole event as JSON)."""
        row = EventRow(**_event_row(EventWrite(session_id, run_id, seq, type, payload)))
        with self._tx("write to", write=True) as orm:
            orm.add(row)
            _flush_or_not_found(orm, session_id)

    def list_events(self, session_id: str, run_id: str | None = None) -> list[EventRecord]:
        """A session's events in the order they were stored, optionally of one run only."""
        query = select(EventRow).where(EventRow.session_id == session_id).order_by(EventRow.id)
        if run_id is not None:
            query = query.where(EventRow.run_id == run_id)
        with self._tx("read from") as orm:
            return [_event_record(r) for r in orm.scalars(query)]

    def run_events(self, run_id: str, after_seq: int = 0, limit: int | None = None) -> list[EventRecord]:
        """One run's events with ``seq`` above ``after_seq``, in ``seq`` order."""
        query = (
            select(EventRow).where(EventRow.run_id == run_id, EventRow.seq > after_seq).order_by(EventRow.seq)
        )
        if limit is not None:
            query = query.limit(limit)
        with self._tx("read from") as orm:
            return [_event_record(r) for r in orm.scalars(query)]

    # -- tool calls -------------------------------------------------------------------------

    def record_tool_call(self, rec: ToolCallRecord) -> None:
        """Persist the outcome of one tool call."""
        row = ToolCallRow(**_tool_call_row(rec))
        with self._tx("write to", write=True) as orm:
            orm.add(row)
            _flush_or_not_found(orm, rec.session_id)

    def list_tool_calls(self, session_id: str | None = None, limit: int = 200) -> list[ToolCallRecord]:
        """The ``limit`` most recent tool calls, newest first; all sessions unless one is given."""
        query = select(ToolCallRow).order_by(ToolCallRow.id.desc()).limit(limit)
        if session_id is not None:
            query = query.where(ToolCallRow.session_id == session_id)
        with self._tx("read from") as orm:
            return [_tool_call_record(row) for row in orm.scalars(query)]

    def tool_output(self, session_id: str, tool_call_id: str) -> str | None:
        """The full output kept for one tool call of a session (``None`` if none was kept)."""
        query = (
            select(ToolCallRow.raw_output)
            .where(ToolCallRow.session_id == session_id, ToolCallRow.tool_call_id == tool_call_id)
            .order_by(ToolCallRow.id.desc())
            .limit(1)
        )
        with self._tx("read from") as orm:
            return orm.scalar(query)

    def kept_outputs(self, session_id: str) -> list[tuple[str, str, int]]:
        """``(tool_call_id, tool, characters)`` of each call of a session whose full output was kept."""
        query = (
            select(ToolCallRow.tool_call_id, ToolCallRow.tool, func.length(ToolCallRow.raw_output))
            .where(ToolCallRow.session_id == session_id, ToolCallRow.raw_output.is_not(None))
            .order_by(ToolCallRow.id)
        )
        with self._tx("read from") as orm:
            return [(call_id, tool, int(n or 0)) for call_id, tool, n in orm.execute(query)]

    # -- circuit breakers -------------------------------------------------------------------

    def save_breaker(self, state: BreakerRecord) -> None:
        """Insert or replace the breaker state of ``state.tool``."""
        values = {
            "tool": state.tool,
            "state": state.state,
            "failures": state.failures,
            "opened_at": state.opened_at,
            "retry_after_s": state.retry_after_s,
            "updated_at": state.updated_at,
        }
        # A native upsert: read-then-write would race when two processes trip the same breaker.
        dialect_insert = postgresql.insert if self.backend == "postgresql" else sqlite.insert
        stmt = dialect_insert(BreakerRow).values(values)
        stmt = stmt.on_conflict_do_update(
            index_elements=[BreakerRow.tool],
            set_={name: stmt.excluded[name] for name in values if name != "tool"},
        )
        with self._tx("write to", write=True) as orm:
            orm.execute(stmt)

    # -- audit log --------------------------------------------------------------------------

    def record_audit(self, rec: AuditRecord) -> None:
        """Append one audit entry (never updated or deleted by the agent)."""
        _check_choice("outcome", rec.outcome, AUDIT_OUTCOMES)
        with self._tx("write to", write=True) as orm:
            orm.execute(insert(AuditRow), _with_owners(orm, [audit_row(rec)], self._owners))

    def list_audit(
        self,
        *,
        session_id: str | None = None,
        outcome: str | None = None,
        tool: str | None = None,
        since: datetime | None = None,
        limit: int = 200,
        user_id: str | None = None,
    ) -> list[AuditRecord]:
        """Audit entries, newest first, filtered by any of the given fields."""
        query = select(AuditRow).order_by(AuditRow.id.desc()).limit(limit)
        if user_id is not None:
            query = query.where(AuditRow.user_id == user_id)
        if session_id is not None:
            query = query.where(AuditRow.session_id.startswith(session_id))
        if outcome is not None:
            query = query.where(AuditRow.outcome == outcome)
        if tool is not None:
            query = query.where(AuditRow.tool == tool)
        if since is not None:
            query = query.where(AuditRow.created_at >= since)
        with self._tx("read from") as orm:
            return [audit_record(r) for r in orm.scalars(query)]

    # -- privacy vault ----------------------------------------------------------------------

    def vault_put(self, entries: Sequence[VaultEntry]) -> None:
        """Remember placeholders; an entry already known for (session, namespace, placeholder) is kept."""
        if not entries:
            return
        for e in entries:
            _check_choice("namespace", e.namespace, VAULT_NAMESPACES)
        with self._tx("write to", write=True) as orm:
            keys = {(e.session_id, e.namespace, e.placeholder) for e in entries}
            sessions = {k[0] for k in keys}
            known: set[tuple[str, str, str]] = set(
                orm.execute(
                    select(VaultRow.session_id, VaultRow.namespace, VaultRow.placeholder).where(
                        VaultRow.session_id.in_(sessions),
                        VaultRow.placeholder.in_({k[2] for k in keys}),
                    )
                )
            )
            fresh: dict[tuple[str, str, str], VaultEntry] = {}
            for e in entries:
                key = (e.session_id, e.namespace, e.placeholder)
                if key not in known:
                    fresh.setdefault(key, e)
            if fresh:
                # A missing session is named; any other refusal of the insert (a constraint, a
                # trigger) is reported as what it is, not as a missing session.
                present = orm.scalars(select(SessionRow.id).where(SessionRow.id.in_(sessions)))
                missing = sessions - set(present)
                if missing:
                    raise _not_found(", ".join(sorted(missing)))
                orm.execute(insert(VaultRow), [dataclasses.asdict(e) for e in fresh.values()])

    def vault_lookup(
        self, session_id: str, placeholders: Sequence[str], namespaces: Sequence[str]
    ) -> dict[str, str]:
        """Originals of ``placeholders``, taking each from the first namespace (in order) that has it."""
        if not placeholders:
            return {}
        query = select(VaultRow.namespace, VaultRow.placeholder, VaultRow.original).where(
            VaultRow.session_id == session_id,
            VaultRow.placeholder.in_(set(placeholders)),
            VaultRow.namespace.in_(namespaces),
        )
        rank = {ns: i for i, ns in enumerate(namespaces)}
        found: dict[str, tuple[int, str]] = {}
        with self._tx("read from") as orm:
            for ns, ph, original in orm.execute(query):
                if ph not in found or rank[ns] < found[ph][0]:
                    found[ph] = (rank[ns], original)
        return {ph: original for ph, (_rank, original) in found.items()}

    def vault_purge(
        self,
        *,
        session_id: str | None = None,
        namespace: str | None = None,
        older_than: datetime | None = None,
    ) -> int:
        """Delete vault rows matching every given filter (all rows when none is given); return how many."""
        query = delete(VaultRow)
        if session_id is not None:
            query = query.where(VaultRow.session_id == session_id)
        if namespace is not None:
            query = query.where(VaultRow.namespace == namespace)
        if older_than is not None:
            query = query.where(VaultRow.created_at < older_than)
        with self._tx("write to", write=True) as orm:
            return int(orm.connection().execute(query).rowcount or 0)

    def load_breakers(self) -> list[BreakerRecord]:
        """Every saved breaker state, ordered by tool name."""
        with self._tx("read from") as orm:
            return [
                BreakerRecord(
                    tool=r.tool,
                    state=r.state,
                    failures=r.failures,
                    opened_at=r.opened_at,
                    retry_after_s=r.retry_after_s,
                    updated_at=r.updated_at,
                )
                for r in orm.scalars(select(BreakerRow).order_by(BreakerRow.tool))
            ]

    # -- findings memory --------------------------------------------------------------------

    def add_finding(self, finding: FindingRecord) -> FindingRecord:
        """Remember a finding; returns it with the id the database assigned."""
        _check_finding(finding)
        row = FindingRow(
            project=finding.project,
            title=finding.title.strip(),
            summary=finding.summary.strip(),
            evidence=list(finding.evidence),
            tags=list(finding.tags),
            source=finding.source,
            session_id=finding.session_id,
            created_at=finding.created_at,
            user_id=finding.user_id,
        )
        with self._tx("write to", write=True) as orm:
            if row.user_id is None and row.session_id is not None:  # a finding of a run names its user
                row.user_id = _owners(orm, {row.session_id}, self._owners).get(row.session_id)
            orm.add(row)
            orm.flush()
            return _finding_record(row)

    def list_findings(self, project: str | None = None, *, limit: int = 50) -> list[FindingRecord]:
        """The ``limit`` most recent findings of ``project`` (of every project when None), newest first."""
        query = select(FindingRow).order_by(FindingRow.created_at.desc(), FindingRow.id.desc()).limit(limit)
        if project is not None:
            query = query.where(FindingRow.project == project)
        with self._tx("read from") as orm:
            return [_finding_record(row) for row in orm.scalars(query)]

    def get_finding(self, finding_id: int, project: str | None = None) -> FindingRecord:
        """The finding with this id; with ``project``, only if it is that project's."""
        with self._tx("read from") as orm:
            row = orm.get(FindingRow, finding_id)
            if row is None or (project is not None and row.project != project):
                raise _finding_not_found(finding_id, project, None if row is None else row.project)
            return _finding_record(row)

    def delete_finding(self, finding_id: int, project: str | None = None) -> FindingRecord:
        """Forget one finding (a wrong conclusion should not mislead later investigations) and
        return it; with ``project``, only if it is that project's. Its id is never given to
        another finding."""
        with self._tx("write to", write=True) as orm:
            row = orm.get(FindingRow, finding_id)
            if row is None or (project is not None and row.project != project):
                raise _finding_not_found(finding_id, project, None if row is None else row.project)
            gone = _finding_record(row)
            query = delete(FindingRow).where(FindingRow.id == finding_id, FindingRow.project == row.project)
            if not orm.connection().execute(query).rowcount:  # deleted by another process meanwhile
                raise _finding_not_found(finding_id, project, None)
            return gone


def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise UserError(f"invalid session {name} {value!r}", hint=f"use one of: {', '.join(allowed)}")


def _not_found(session_id: str) -> NotFoundError:
    return NotFoundError(f"no session {session_id!r}", hint=SESSIONS_HINT, session_id=session_id)


def _resolve(orm: OrmSession, session_id: str) -> SessionRow:
    row = orm.get(SessionRow, session_id)
    if row is not None:
        return row
    if len(session_id) >= MIN_PREFIX:
        # substr equality rather than LIKE: LIKE is case-insensitive on SQLite and treats % and _
        # as wildcards, so a prefix would not mean the same thing on both backends.
        prefix = func.substr(SessionRow.id, 1, len(session_id))
        rows = orm.scalars(select(SessionRow).where(prefix == session_id).limit(2)).all()
        if len(rows) == 1:
            return rows[0]
        if rows:
            raise UserError(
                f"session id prefix {session_id!r} matches more than one session",
                hint="give more characters of the id",
                session_id=session_id,
            )
    elif session_id:  # not looked up as a prefix: say why, not only that it names no session
        raise NotFoundError(
            f"no session {session_id!r}, and it is too short for an id prefix: a prefix must be "
            f"at least {MIN_PREFIX} characters long (this one has {len(session_id)})",
            hint=SESSIONS_HINT,
            session_id=session_id,
        )
    raise _not_found(session_id)


def _flush_or_not_found(orm: OrmSession, session_id: str | None) -> None:
    try:
        orm.flush()
    except IntegrityError:
        # The only constraint these inserts can break is the foreign key to sessions.
        if session_id is None:
            raise
        raise _not_found(session_id) from None


def _tool_call_record(row: ToolCallRow) -> ToolCallRecord:
    return ToolCallRecord(
        session_id=row.session_id,
        run_id=row.run_id,
        tool_call_id=row.tool_call_id,
        tool=row.tool,
        args=dict(row.args),
        status=row.status,
        duration_ms=row.duration_ms,
        error=row.error,
        truncated=row.truncated,
        created_at=row.created_at,
    )


def _append_messages(orm: OrmSession, session_id: str, run_id: str, payloads: list[str]) -> None:
    now = utcnow()
    # Updating the session row first also locks it on PostgreSQL, so concurrent appends to one
    # session take turns and never compute the same next seq.
    bump = update(SessionRow).where(SessionRow.id == session_id).values(updated_at=now)
    if orm.connection().execute(bump).rowcount == 0:
        raise _not_found(session_id)
    last = orm.scalar(select(func.max(MessageRow.seq)).where(MessageRow.session_id == session_id))
    start = (last or 0) + 1
    orm.add_all(
        MessageRow(session_id=session_id, run_id=run_id, seq=start + i, payload=p, created_at=now)
        for i, p in enumerate(payloads)
    )
    orm.flush()


def _event_row(e: EventWrite) -> dict[str, Any]:
    return {
        "session_id": e.session_id,
        "run_id": e.run_id,
        "seq": e.seq,
        "type": e.type,
        "payload": e.payload,
        "created_at": e.created_at,
    }


def _tool_call_row(rec: ToolCallRecord) -> dict[str, Any]:
    return {
        "session_id": rec.session_id,
        "run_id": rec.run_id,
        "tool_call_id": rec.tool_call_id,
        "tool": rec.tool,
        "args": dict(rec.args),
        "status": rec.status,
        "duration_ms": rec.duration_ms,
        "error": rec.error,
        "truncated": rec.truncated,
        "created_at": rec.created_at,
        "raw_output": rec.raw_output,
    }


def _with_owners(
    orm: OrmSession, rows: list[dict[str, Any]], known: dict[str, str | None]
) -> list[dict[str, Any]]:
    """Audit rows with the user of their session filled in where the writer did not name one."""
    owners = _owners(orm, {r["session_id"] for r in rows if r["user_id"] is None and r["session_id"]}, known)
    for r in rows:
        if r["user_id"] is None and r["session_id"]:
            r["user_id"] = owners.get(r["session_id"])
    return rows


def _owners(orm: OrmSession, sessions: set[str], known: dict[str, str | None]) -> dict[str, str | None]:
    """The owners of ``sessions``: from ``known`` (owners never change), else read and remembered
    (found ones only; emptied when large). Answered from this call's own copy: another thread
    may empty ``known`` meanwhile."""
    owners: dict[str, str | None] = {}
    for sid in sessions:
        with suppress(KeyError):  # emptied by another thread between the test and the read
            owners[sid] = known[sid]
    if missing := sessions - owners.keys():
        query = select(SessionRow.id, SessionRow.user_id).where(SessionRow.id.in_(missing))
        found = {sid: uid for sid, uid in orm.execute(query)}  # noqa: C416 - a Result is not a mapping
        if len(known) > 4096:
            known.clear()
        known.update(found)
        owners |= found
    return owners
