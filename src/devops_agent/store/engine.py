"""Engines for the store: URL handling, SQLite pragmas and transactions, migrations, error mapping.

SQLite (the default) runs in WAL mode with a busy timeout so several processes can share one
file; PostgreSQL is reached through psycopg 3. Alembic runs programmatically on a connection we
open, under a lock, so two processes starting at once migrate exactly once.

This module is the boundary where SQLAlchemy and Alembic exceptions become
:class:`~devops_agent.errors.StoreError`. It must not know what the tables hold, and no message
it builds may contain the URL's password.
"""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import (
    ArgumentError,
    InterfaceError,
    OperationalError,
    SQLAlchemyError,
    StatementError,
)
from sqlalchemy.pool import ConnectionPoolEntry, StaticPool

from devops_agent.errors import ConfigError, StoreError

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
BUSY_TIMEOUT_MS = 5000
POSTGRES_CONNECT_TIMEOUT_S = 10
# Any fixed 64-bit number: it names the advisory lock that serializes migrations on PostgreSQL.
_PG_MIGRATION_LOCK = 0x64657660_0A6E7401
# Execution option read by our BEGIN hook; writers ask for IMMEDIATE (see _sqlite_begin).
SQLITE_BEGIN = "devops_agent_sqlite_begin"

SQLiteBegin = Literal["DEFERRED", "IMMEDIATE"]


def normalize_url(raw: str) -> URL:
    """Parse a database URL; ``postgres://``/``postgresql://`` get the psycopg 3 driver.

    Raises :class:`ConfigError` for an unparsable URL or a backend other than SQLite/PostgreSQL.
    """
    try:
        url = make_url(raw)
    except (ArgumentError, ValueError):
        # The parser's message may echo the raw URL, password included; leave it out.
        raise ConfigError(
            "database_url is not a valid database URL",
            hint="use sqlite:///path/to/file.db or postgresql://user:password@host:5432/dbname",
        ) from None
    if url.drivername in ("postgres", "postgresql"):
        url = url.set(drivername="postgresql+psycopg")
    backend = url.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise ConfigError(
            f"unsupported database backend {backend!r}",
            hint="use sqlite:///path/to/file.db or postgresql://user:password@host:5432/dbname",
        )
    if backend == "sqlite" and _is_file_db(url):
        url = url.set(database=str(Path(url.database or "").expanduser()))
    return url


def display_url(url: URL) -> str:
    """The URL as safe to print: password replaced by ``***``."""
    return url.render_as_string(hide_password=True)


def _is_file_db(url: URL) -> bool:
    database = url.database or ""
    return database not in ("", ":memory:") and not database.startswith("file:")


def create_store_engine(url: URL) -> Engine:
    """An engine for ``url`` with the store's connection settings; connects lazily."""
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url)
    connect_args: dict[str, Any] = {}
    if "connect_timeout" not in url.query:
        connect_args["connect_timeout"] = POSTGRES_CONNECT_TIMEOUT_S
    try:
        # pre_ping replaces connections a server restart has killed instead of failing a query.
        return create_engine(url, pool_pre_ping=True, connect_args=connect_args)
    except ImportError:
        raise ConfigError(
            "PostgreSQL support is not installed",
            hint="pip install 'devops-agent[postgres]'",
        ) from None


def is_single_connection(engine: Engine) -> bool:
    """True for an in-memory SQLite engine, whose one connection every caller shares."""
    return isinstance(engine.pool, StaticPool)


def _sqlite_engine(url: URL) -> Engine:
    if _is_file_db(url):
        try:
            Path(url.database or "").parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the directory for the store at {display_url(url)}: {exc.strerror}",
                hint="check database_url and data_dir",
            ) from exc
        engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
    else:
        # An in-memory database lives in one connection, so every thread must share it.
        engine = create_engine(url, poolclass=StaticPool, connect_args={"check_same_thread": False})
    event.listen(engine, "connect", _sqlite_on_connect)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_on_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
    # Hand BEGIN over to _sqlite_begin: the sqlite3 module's implicit transactions skip SELECT
    # and DDL, which breaks transactional migrations and read-then-write consistency.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        # busy_timeout first: switching to WAL needs a lock another process may briefly hold.
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        _enable_wal(cursor)
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
    finally:
        cursor.close()


def _enable_wal(cursor: Any) -> None:
    # Processes that open a fresh database together all try to switch it to WAL; SQLite sees
    # two connections each holding SHARED and wanting EXCLUSIVE as a deadlock and answers
    # SQLITE_BUSY at once, without the busy handler. Retry until the busy timeout is spent;
    # once one switch lands the mode is persistent and the others find WAL already set.
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            busy = "locked" in str(exc) or "busy" in str(exc)
            if not busy or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def _sqlite_begin(conn: Connection) -> None:
    # A deferred transaction that reads and then writes cannot wait for a concurrent writer in
    # WAL mode (SQLITE_BUSY at once, busy_timeout ignored); BEGIN IMMEDIATE takes the write lock
    # up front and waits for it, so writers queue instead of failing.
    mode: SQLiteBegin = conn.get_execution_options().get(SQLITE_BEGIN, "DEFERRED")
    conn.exec_driver_sql(f"BEGIN {mode}")


def writer(engine: Engine) -> Engine:
    """The engine to use for transactions that write (BEGIN IMMEDIATE on SQLite)."""
    if engine.dialect.name == "sqlite":
        return engine.execution_options(**{SQLITE_BEGIN: "IMMEDIATE"})
    return engine


def upgrade_to_head(engine: Engine, url: URL) -> None:
    """Apply every pending migration; safe to run from several processes at once."""
    from alembic import command  # imported when a store opens, not with every CLI command
    from alembic.config import Config
    from alembic.util import CommandError

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    sqlite = engine.dialect.name == "sqlite"
    try:
        with writer(engine).connect() as conn:
            if sqlite:
                # Future batch migrations recreate tables; with foreign keys on, dropping the old
                # table would cascade-delete child rows. The pragma is ignored inside a transaction.
                _raw_execute(conn, "PRAGMA foreign_keys=OFF")
            try:
                with conn.begin():
                    if not sqlite:
                        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
                    config.attributes["connection"] = conn
                    command.upgrade(config, "head")
                    if sqlite and conn.exec_driver_sql("PRAGMA foreign_key_check").first() is not None:
                        raise StoreError(
                            "a migration left rows that violate foreign keys", url=display_url(url)
                        )
            finally:
                if sqlite and not conn.invalidated:
                    _raw_execute(conn, "PRAGMA foreign_keys=ON")
    except CommandError as exc:
        raise StoreError(
            f"cannot migrate the store at {display_url(url)}: {_scrub(str(exc), url)}",
            hint="a newer devops-agent created this database; upgrade devops-agent or change database_url",
            url=display_url(url),
        ) from exc
    except SQLAlchemyError as exc:
        raise map_error(exc, url, "open") from exc


def schema_revisions(engine: Engine) -> tuple[str | None, str]:
    """The database's migration revision (None: not migrated) and the newest this package ships."""
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    head = ScriptDirectory.from_config(config).get_current_head()
    with engine.connect() as conn:
        current = MigrationContext.configure(conn).get_current_revision()
    return current, str(head)


def _raw_execute(conn: Connection, sql: str) -> None:
    # Straight to the driver: through SQLAlchemy the statement would autobegin a transaction.
    driver = conn.connection.driver_connection
    assert driver is not None
    driver.execute(sql)


def map_error(exc: SQLAlchemyError, url: URL, action: str) -> StoreError:
    """Translate a SQLAlchemy exception into a :class:`StoreError` with a hint, password masked."""
    reason = _scrub(_reason(exc), url)
    backend = url.get_backend_name()
    if backend == "sqlite" and "locked" in reason:
        hint = "another process is holding the database; retry in a moment"
    elif backend == "sqlite":
        hint = "check database_url and that its directory is writable"
    elif isinstance(exc, OperationalError | InterfaceError):
        hint = "is PostgreSQL running? check database_url"
    else:
        hint = "the database may have been changed outside devops-agent; check database_url"
    return StoreError(
        f"cannot {action} the store at {display_url(url)}: {reason}", hint=hint, url=display_url(url)
    )


def _reason(exc: SQLAlchemyError) -> str:
    # The DBAPI's own message, without SQLAlchemy's appended SQL text and parameters (which can
    # hold session data) or its documentation link.
    detail = str(exc.orig) if isinstance(exc, StatementError) and exc.orig is not None else str(exc)
    detail = " ".join(detail.split())
    return detail[:300] or type(exc).__name__


def _scrub(message: str, url: URL) -> str:
    if url.password:
        message = message.replace(str(url.password), "***")
    return re.sub(r"(://[^:/@\s]*:)[^@\s]*@", r"\1***@", message)
