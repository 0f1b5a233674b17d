"""The store against real databases: every ``store``/``store_url`` test runs on SQLite and PostgreSQL."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.engine import URL

from devops_agent.config.settings import Settings
from devops_agent.errors import ConfigError, NotFoundError, StoreError, UserError
from devops_agent.store import AuditRecord, BreakerRecord, Store, ToolCallRecord
from devops_agent.store.engine import normalize_url
from devops_agent.store.models import Base
from fixtures_db import raw_engine

TABLES = {
    "sessions",
    "messages",
    "events",
    "tool_calls",
    "tool_breakers",
    "audit_log",
    "vault",
    "findings",
    "runs",
    "alembic_version",
}


def head_revision() -> str:
    """The newest migration shipped (one head: migrations form a single chain)."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from devops_agent.store.engine import MIGRATIONS_DIR

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    (head,) = ScriptDirectory.from_config(config).get_heads()
    return str(head)


def count_rows(url: str, table: str, session_id: str) -> int:
    with raw_engine(url) as engine, engine.connect() as conn:
        query = text(f"SELECT count(*) FROM {table} WHERE session_id = :sid")
        return int(conn.execute(query, {"sid": session_id}).scalar_one())


# -- migrations -----------------------------------------------------------------------------


def test_migrations_create_tables_and_are_idempotent(store_url: str) -> None:
    with Store(store_url) as first:
        created = first.create_session(title="kept", mode="ask", model=None)
    with Store(store_url) as second:
        assert second.get_session(created.id).title == "kept"
    with raw_engine(store_url) as engine, engine.connect() as conn:
        assert set(inspect(conn).get_table_names()) >= TABLES
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [
            head_revision()
        ]


def test_models_match_migrations(store: Store, store_url: str) -> None:
    with raw_engine(store_url) as engine, engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []


def test_database_from_newer_version_is_refused(store_url: str) -> None:
    Store(store_url).close()
    with raw_engine(store_url) as engine, engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(StoreError) as info:
        Store(store_url)
    assert "newer devops-agent" in (info.value.hint or "")


# -- sessions -------------------------------------------------------------------------------


def test_session_crud(store: Store) -> None:
    created = store.create_session(title="disk full on web-1", mode="ask", model="openai:gpt-4o")
    assert len(created.id) == 32
    assert created.status == "idle"
    assert created.context_state == {}
    assert created.created_at.tzinfo is UTC
    assert abs(created.created_at - datetime.now(UTC)) < timedelta(minutes=1)

    fetched = store.get_session(created.id)
    assert fetched == created

    state = {"summary": "déjà vu ✓", "pinned": [1, 2], "nested": {"ok": True}}
    updated = store.update_session(created.id, status="running", mode="agent", context_state=state)
    assert (updated.status, updated.mode, updated.model, updated.title) == (
        "running",
        "agent",
        "openai:gpt-4o",
        "disk full on web-1",
    )
    assert updated.updated_at > created.updated_at
    again = store.get_session(created.id)
    assert again.context_state == state
    assert again.updated_at == updated.updated_at
    assert again.updated_at.tzinfo is UTC

    store.delete_session(created.id)
    with pytest.raises(NotFoundError):
        store.get_session(created.id)


def test_list_sessions_newest_update_first(store: Store) -> None:
    first = store.create_session(title="one", mode="ask", model=None)
    second = store.create_session(title="two", mode="ask", model=None)
    third = store.create_session(title="three", mode="agent", model=None)
    store.update_session(first.id, title="one, renamed")
    assert [s.id for s in store.list_sessions()] == [first.id, third.id, second.id]
    assert [s.id for s in store.list_sessions(limit=2)] == [first.id, third.id]


def test_get_session_by_unique_prefix(store: Store) -> None:
    one = store.create_session(title="a", mode="ask", model=None, session_id="abcdef01-one")
    store.create_session(title="b", mode="ask", model=None, session_id="abcdef02-two")
    assert store.get_session("abcdef01") == one
    assert store.get_session("abcdef01-one") == one
    with pytest.raises(UserError) as ambiguous:
        store.get_session("abcdef")
    assert type(ambiguous.value) is UserError
    assert store.update_session("abcdef01", title="renamed").title == "renamed"
    # A prefix is case-sensitive and literal on both backends (no LIKE wildcards).
    with pytest.raises(NotFoundError):
        store.get_session("ABCDEF01")
    with pytest.raises(NotFoundError):
        store.get_session("abcde_01")


def test_unknown_or_short_session_id_is_not_found(store: Store) -> None:
    created = store.create_session(title="x", mode="ask", model=None)
    with pytest.raises(NotFoundError) as info:
        store.get_session(created.id[:5])
    assert info.value.hint == "`devops-agent sessions list` shows the known sessions"
    assert info.value.exit_code == 2
    for call in (
        lambda: store.get_session("0" * 32),
        lambda: store.update_session("nosuchsession", title="y"),
        lambda: store.delete_session("nosuchsession"),
    ):
        with pytest.raises(NotFoundError):
            call()


def test_invalid_values_and_duplicate_id_are_user_errors(store: Store) -> None:
    with pytest.raises(UserError, match="mode"):
        store.create_session(title="x", mode="yolo", model=None)
    created = store.create_session(title="x", mode="ask", model=None, session_id="fixed-id-1")
    with pytest.raises(UserError, match="already exists"):
        store.create_session(title="y", mode="ask", model=None, session_id="fixed-id-1")
    with pytest.raises(UserError, match="status"):
        store.update_session(created.id, status="exploded")
    assert store.get_session(created.id).title == "x"


# -- messages, events, tool calls, breakers ---------------------------------------------------


def test_messages_round_trip_in_seq_order(store: Store, store_url: str) -> None:
    session = store.create_session(title="m", mode="agent", model=None)
    other = store.create_session(title="other", mode="agent", model=None)
    first = ['{"kind":"request","parts":[{"content":"hi"}]}', '{"kind":"response","text":"ünïcode"}']
    second = ['{"kind":"request"}', "x" * 200_000]
    store.append_messages(session.id, "run-1", first)
    store.append_messages(other.id, "run-9", ["{}"])
    store.append_messages(session.id, "run-2", second)
    store.append_messages(session.id, "run-2", [])
    assert store.load_messages(session.id) == first + second
    assert store.count_messages(session.id) == 4
    assert store.load_messages(other.id) == ["{}"]
    with raw_engine(store_url) as engine, engine.connect() as conn:
        rows = conn.execute(
            text("SELECT seq, run_id FROM messages WHERE session_id = :s ORDER BY seq"), {"s": session.id}
        ).all()
    assert [tuple(r) for r in rows] == [(1, "run-1"), (2, "run-1"), (3, "run-2"), (4, "run-2")]
    assert store.get_session(session.id).updated_at > session.updated_at
    with pytest.raises(NotFoundError):
        store.append_messages("missing-session", "run-1", ["{}"])


def test_events_are_listed_in_order_and_by_run(store: Store) -> None:
    session = store.create_session(title="e", mode="ask", model=None)
    store.append_event(session.id, "run-1", 0, "run_started", '{"type":"run_started"}')
    store.append_event(session.id, "run-1", 1, "token", '{"type":"token","text":"a"}')
    store.append_event(session.id, "run-2", 0, "run_started", '{"type":"run_started","n":2}')
    events = store.list_events(session.id)
    assert [(e.run_id, e.seq, e.type) for e in events] == [
        ("run-1", 0, "run_started"),
        ("run-1", 1, "token"),
        ("run-2", 0, "run_started"),
    ]
    assert events[1].payload == '{"type":"token","text":"a"}'
    assert all(e.created_at.tzinfo is UTC for e in events)
    assert [e.payload for e in store.list_events(session.id, run_id="run-2")] == [
        '{"type":"run_started","n":2}'
    ]
    with pytest.raises(NotFoundError):
        store.append_event("missing-session", "run-1", 0, "token", "{}")


def test_tool_calls(store: Store) -> None:
    session = store.create_session(title="t", mode="agent", model=None)
    recorded = [
        ToolCallRecord(session.id, "run-1", "call-1", "shell.run", {"cmd": "df -h"}, "success", 12.5),
        ToolCallRecord(
            session.id,
            "run-1",
            "call-2",
            "logs.search",
            {"q": "OOM", "n": [1, 2]},
            "error",
            None,
            "boom",
            True,
        ),
        ToolCallRecord(None, "runbook-7", "call-3", "shell.run", {}, "no_data"),
    ]
    for rec in recorded:
        store.record_tool_call(rec)
    assert store.list_tool_calls(session.id) == recorded[1::-1]
    assert store.list_tool_calls() == recorded[::-1]
    assert store.list_tool_calls(limit=1) == [recorded[2]]
    with pytest.raises(NotFoundError):
        store.record_tool_call(ToolCallRecord("missing-session", "r", "c", "shell.run", {}, "success"))


def test_full_tool_output_is_kept_apart_from_the_call_list(store: Store) -> None:
    session = store.create_session(title="t", mode="ask", model=None)
    log = "line\n" * 50_000
    store.append_batch(
        tool_calls=[
            ToolCallRecord(session.id, "run-1", "call-1", "jenkins_console", {}, "success", raw_output=log),
            ToolCallRecord(session.id, "run-1", "call-2", "jira_issue", {}, "success"),
        ]
    )
    assert store.tool_output(session.id, "call-1") == log
    assert store.tool_output(session.id, "call-2") is None
    assert store.tool_output("other-session", "call-1") is None
    assert store.kept_outputs(session.id) == [("call-1", "jenkins_console", len(log))]
    # Listing calls does not load (or return) the kept output.
    assert [r.raw_output for r in store.list_tool_calls(session.id)] == [None, None]


def test_breaker_upsert(store: Store) -> None:
    assert store.load_breakers() == []
    closed = BreakerRecord("shell.run", "closed", 1)
    store.save_breaker(closed)
    git = BreakerRecord("git.log", "closed", 0)
    store.save_breaker(git)
    assert store.load_breakers() == [git, closed]
    # An offset zone goes in; the same instant comes back in UTC.
    opened_at = datetime(2030, 1, 2, 5, 4, 5, 123456, tzinfo=timezone(timedelta(hours=2)))
    tripped = BreakerRecord("shell.run", "open", 3, opened_at, 30.0)
    store.save_breaker(tripped)
    loaded = {b.tool: b for b in store.load_breakers()}
    assert len(loaded) == 2
    assert loaded["shell.run"] == tripped
    assert loaded["shell.run"].opened_at is not None
    assert loaded["shell.run"].opened_at.tzinfo is UTC
    assert loaded["shell.run"].opened_at.hour == 3


def test_records_refuse_naive_datetimes_and_bad_states() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        BreakerRecord("x", "open", 1, opened_at=datetime(2030, 1, 1))
    with pytest.raises(ValueError, match="breaker state"):
        BreakerRecord("x", "ajar", 1)


def test_delete_cascades(store: Store, store_url: str) -> None:
    doomed = store.create_session(title="doomed", mode="agent", model=None)
    kept = store.create_session(title="kept", mode="agent", model=None)
    for sid in (doomed.id, kept.id):
        store.append_messages(sid, "run-1", ["{}", "{}"])
        store.append_event(sid, "run-1", 0, "run_started", "{}")
        store.record_tool_call(ToolCallRecord(sid, "run-1", "call-1", "shell.run", {}, "success"))
    store.delete_session(doomed.id[:8])
    for table in ("messages", "events", "tool_calls"):
        assert count_rows(store_url, table, doomed.id) == 0, table
        assert count_rows(store_url, table, kept.id) > 0, table
    assert [s.id for s in store.list_sessions()] == [kept.id]


# -- SQLite specifics ---------------------------------------------------------------------------


def test_sqlite_runs_in_wal_with_pragmas(sqlite_store: Store, tmp_path: Path) -> None:
    with contextlib.closing(sqlite3.connect(tmp_path / "store.db")) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    with raw_engine(f"sqlite:///{tmp_path / 'store.db'}") as engine, engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 5000


def test_connections_opening_a_fresh_sqlite_file_together_all_get_wal(tmp_path: Path) -> None:
    # Several connections switching a new file to WAL at once: SQLite answers all but one
    # "database is locked" at once (deadlock, no busy wait), which once failed CI. About one
    # round in six lost a connection before the retry; 60 rounds make a regression near-certain.
    failures: list[BaseException] = []
    for trial in range(60):
        path = tmp_path / f"fresh-{trial}.db"
        start = threading.Barrier(4)

        def connect(path: Path = path, start: threading.Barrier = start) -> None:
            with raw_engine(f"sqlite:///{path}") as engine:
                start.wait()
                try:
                    with engine.connect() as conn:
                        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
                except BaseException as exc:  # noqa: BLE001 - collected and reported below
                    failures.append(exc)

        threads = [threading.Thread(target=connect) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []


def test_sqlite_creates_missing_parent_dirs(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "agent.db"
    with Store(f"sqlite:///{target}") as store:
        store.create_session(title="x", mode="ask", model=None)
    assert target.is_file()


def test_sqlite_unusable_path_is_store_error(tmp_path: Path) -> None:
    (tmp_path / "not-a-dir").write_text("")
    with pytest.raises(StoreError, match="not-a-dir"):
        Store(f"sqlite:///{tmp_path / 'not-a-dir' / 'agent.db'}")


def test_from_settings_uses_data_dir(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", database_url=None)
    with Store.from_settings(settings) as store:
        assert store.backend == "sqlite"
        assert store.url_for_display.endswith("data/devops-agent.db")
    assert (tmp_path / "data" / "devops-agent.db").is_file()


def test_closed_store_refuses_calls(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'x.db'}")
    store.close()
    with pytest.raises(RuntimeError, match="closed"):
        store.list_sessions()


# -- errors and URLs ----------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["postgresql", "postgres", "postgresql+psycopg"])
def test_unreachable_postgres_is_store_error_with_masked_password(scheme: str) -> None:
    with pytest.raises(StoreError) as info:
        Store(f"{scheme}://agent:s3cret-Pw@127.0.0.1:1/nodb")
    error = info.value
    shown = " ".join([str(error), error.one_line(), repr(error.to_dict())])
    assert "s3cret-Pw" not in shown
    assert "postgresql+psycopg://agent:***@127.0.0.1:1/nodb" in error.message
    assert error.hint == "is PostgreSQL running? check database_url"


@pytest.mark.postgres
def test_wrong_postgres_password_is_store_error(postgres_database: URL) -> None:
    url = postgres_database.set(password="wrong-Pass-42").render_as_string(hide_password=False)
    with pytest.raises(StoreError) as info:
        Store(url)
    assert "wrong-Pass-42" not in info.value.one_line()
    assert "password authentication failed" in info.value.message


def test_query_failure_is_store_error(store: Store, store_url: str) -> None:
    with raw_engine(store_url) as engine, engine.begin() as conn:
        conn.execute(text("DROP TABLE tool_breakers"))
    with pytest.raises(StoreError, match="tool_breakers"):
        store.load_breakers()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("postgres://u:p@h/db", "postgresql+psycopg://u:***@h/db"),
        ("postgresql://u:p@h:5433/db", "postgresql+psycopg://u:***@h:5433/db"),
        ("sqlite:////tmp/x.db", "sqlite:////tmp/x.db"),
        ("sqlite://", "sqlite://"),
    ],
)
def test_url_normalization(raw: str, expected: str) -> None:
    assert normalize_url(raw).render_as_string(hide_password=True) == expected


@pytest.mark.parametrize("raw", ["mysql://u:p@h/db", "not a url at all", "://secret@"])
def test_bad_urls_are_config_errors(raw: str) -> None:
    with pytest.raises(ConfigError) as info:
        normalize_url(raw)
    assert "secret" not in info.value.one_line()


def test_in_memory_sqlite_is_shared_across_threads() -> None:
    with Store("sqlite://") as store:
        created = store.create_session(title="mem", mode="ask", model=None)
        with ThreadPoolExecutor(4) as pool:
            assert pool.submit(store.get_session, created.id).result() == created
            list(pool.map(lambda i: store.append_messages(created.id, "r", [str(i)]), range(40)))
        assert sorted(store.load_messages(created.id), key=int) == [str(i) for i in range(40)]


# -- concurrency ----------------------------------------------------------------------------------


def test_threads_appending_to_one_session(store: Store) -> None:
    session = store.create_session(title="threads", mode="agent", model=None)

    def work(worker: int) -> None:
        for i in range(10):
            store.append_messages(session.id, f"run-{worker}", [f"{worker}:{i}"])

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(work, range(8)))
    messages = store.load_messages(session.id)
    assert sorted(messages) == sorted(f"{w}:{i}" for w in range(8) for i in range(10))
    for worker in range(8):
        mine = [m for m in messages if m.startswith(f"{worker}:")]
        assert mine == [f"{worker}:{i}" for i in range(10)]


CHILD = """
import sys, time, pathlib
from devops_agent.errors import UserError
from devops_agent.store import Store
url, tag, go = sys.argv[1:4]
print("ready", flush=True)
while not pathlib.Path(go).exists():
    time.sleep(0.001)
with Store(url) as store:  # every process migrates the fresh database at the same moment
    try:
        store.create_session(title="shared", mode="agent", model=None, session_id="shared-session")
    except UserError:
        pass  # another process created it first
    for i in range(25):
        store.append_messages("shared-session", tag, [f"{tag}:{i}"])
        store.append_event("shared-session", tag, i, "token", "{}")
print("done")
"""
TAGS = ("p1", "p2", "p3", "p4")


@pytest.mark.slow
def test_processes_share_one_database(store_url: str, tmp_path: Path) -> None:
    go = tmp_path / "go"
    children = [
        subprocess.Popen(
            [sys.executable, "-W", "error", "-c", CHILD, store_url, tag, str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in TAGS
    ]
    results: list[tuple[int, str, str]] = []
    try:
        for child in children:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"  # imports done: start them together
        go.touch()
        for child in children:
            out, err = child.communicate(timeout=120)
            results.append((child.returncode, out.strip(), err))
    finally:
        # Reap every child before asserting: one left running (or its pipes left open) would
        # surface as a ResourceWarning in whichever later test the garbage collector runs in.
        for child in children:
            if child.poll() is None:
                child.kill()
            child.communicate()
    for returncode, out, err in results:
        assert (returncode, out) == (0, "done"), err
    with Store(store_url) as store:
        messages = store.load_messages("shared-session")
        assert len(messages) == 25 * len(TAGS)
        for tag in TAGS:
            assert [m for m in messages if m.startswith(tag)] == [f"{tag}:{i}" for i in range(25)]
            assert len(store.list_events("shared-session", run_id=tag)) == 25


# -- audit log ------------------------------------------------------------------------------


def test_audit_log_filters_and_outlives_the_session(store: Store) -> None:
    s = store.create_session(title="t", mode="agent", model=None)
    store.record_audit(
        AuditRecord(
            tool="shell_run",
            mode="agent",
            decision="approve_detailed",
            outcome="pending",
            session_id=s.id,
            command="kubectl delete ns prod",
            classification="destructive",
        )
    )
    store.record_audit(
        AuditRecord(
            tool="shell_run",
            mode="agent",
            decision="approve_detailed",
            outcome="executed",
            actor="alice",
            session_id=s.id,
            command="kubectl delete ns prod",
            exit_status=0,
        )
    )
    store.record_audit(AuditRecord(tool="git_log", mode="ask", decision="allow", outcome="executed"))
    assert [a.outcome for a in store.list_audit(session_id=s.id)] == ["executed", "pending"]
    assert [a.tool for a in store.list_audit(outcome="executed")] == ["git_log", "shell_run"]
    store.delete_session(s.id)
    assert len(store.list_audit(session_id=s.id[:8])) == 2
    with pytest.raises(UserError):
        store.record_audit(AuditRecord(tool="x", mode="ask", decision="allow", outcome="maybe"))


# -- privacy vault --------------------------------------------------------------------------


def test_vault_put_names_a_missing_session_and_only_then(sqlite_store: Store, tmp_path: Path) -> None:
    """A refused vault write is reported as what it is: a missing session by its id, any other
    refusal (here a trigger, as a full disk or a constraint would be) as a store error."""
    from devops_agent.store import VaultEntry

    s = sqlite_store.create_session(title="t", mode="ask", model=None)
    with pytest.raises(NotFoundError, match="nope"):
        sqlite_store.vault_put(
            [
                VaultEntry(s.id, "user_in", "HOST", "<<HOST_aaaaaaaa>>", "db-1"),
                VaultEntry("nope", "user_in", "HOST", "<<HOST_aaaaaaaa>>", "db-1"),
            ]
        )
    db = sqlite3.connect(tmp_path / "store.db")
    with db:
        db.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON vault BEGIN SELECT RAISE(ABORT, 'vault is read-only'); END"
        )
    db.close()
    with pytest.raises(StoreError, match="read-only") as err:
        sqlite_store.vault_put([VaultEntry(s.id, "user_in", "HOST", "<<HOST_bbbbbbbb>>", "db-2")])
    assert "no session" not in str(err.value)


def test_vault_lookup_order_purge_and_cascade(store: Store) -> None:
    from datetime import timedelta

    from devops_agent.store import VaultEntry

    s = store.create_session(title="t", mode="ask", model=None)
    other = store.create_session(title="o", mode="ask", model=None)
    old = datetime.now(UTC) - timedelta(hours=48)
    store.vault_put(
        [
            VaultEntry(s.id, "tool_out", "HOST", "<<HOST_aaaaaaaa>>", "db-7.internal"),
            VaultEntry(s.id, "user_in", "HOST", "<<HOST_aaaaaaaa>>", "db-7.prod"),
            VaultEntry(s.id, "user_in", "EMAIL", "<<EMAIL_bbbbbbbb>>", "ann@example.com", created_at=old),
            VaultEntry(other.id, "user_in", "HOST", "<<HOST_aaaaaaaa>>", "someone-else"),
        ]
    )
    store.vault_put([VaultEntry(s.id, "tool_out", "HOST", "<<HOST_aaaaaaaa>>", "ignored: already known")])
    order = ["tool_args", "user_in", "tool_out", "final_out"]
    assert store.vault_lookup(s.id, ["<<HOST_aaaaaaaa>>", "<<EMAIL_bbbbbbbb>>", "<<X_cccccccc>>"], order) == {
        "<<HOST_aaaaaaaa>>": "db-7.prod",
        "<<EMAIL_bbbbbbbb>>": "ann@example.com",
    }
    assert store.vault_lookup(s.id, ["<<HOST_aaaaaaaa>>"], ["tool_out"]) == {
        "<<HOST_aaaaaaaa>>": "db-7.internal"
    }
    assert store.vault_purge(namespace="user_in", older_than=datetime.now(UTC) - timedelta(hours=24)) == 1
    assert store.vault_purge(session_id=s.id) == 2
    store.delete_session(other.id)
    assert store.vault_lookup(other.id, ["<<HOST_aaaaaaaa>>"], order) == {}
    with pytest.raises(UserError):
        store.vault_put([VaultEntry(s.id, "elsewhere", "HOST", "<<HOST_dddddddd>>", "x")])
