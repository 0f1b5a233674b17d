"""Database fixtures for the whole suite: one test body runs on SQLite and on PostgreSQL.

Loaded by ``pytest_plugins`` in ``tests/conftest.py`` (``tests/`` is on ``sys.path`` through
``pythonpath`` in pyproject's pytest settings).

* ``store_url``: a URL to an empty database, parametrized ``sqlite`` (a file under ``tmp_path``)
  and ``postgres`` (marked ``postgres``).
* ``store`` / ``sqlite_store``: an open :class:`~devops_agent.store.Store` on such a database.
* ``postgres_url``: the PostgreSQL URL alone.
* :func:`raw_engine`: an engine like the store's, to check what is really in a database.

PostgreSQL comes from ``DEVOPS_AGENT_TEST_POSTGRES_URL`` (``scripts/postgres.sh`` prints one).
Without it the postgres cases skip, unless ``DEVOPS_AGENT_REQUIRE_POSTGRES=1`` (CI), where they
fail. Each test run creates its own database (random name, dropped at the end) and each test its
own schema in it, so parallel runs and tests never see each other's rows. These fixtures must not
touch a database they did not create.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

from devops_agent.store import Store
from devops_agent.store.engine import create_store_engine, display_url, normalize_url

POSTGRES_URL_ENV = "DEVOPS_AGENT_TEST_POSTGRES_URL"
REQUIRE_POSTGRES_ENV = "DEVOPS_AGENT_REQUIRE_POSTGRES"


def _admin_engine(url: URL) -> Engine:
    # AUTOCOMMIT: CREATE/DROP DATABASE refuse to run inside a transaction. NullPool: nothing
    # stays connected to block the final DROP DATABASE.
    return create_engine(url, isolation_level="AUTOCOMMIT", poolclass=NullPool)


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[URL]:
    """A fresh PostgreSQL database for this test run, dropped when the run ends."""
    raw = os.environ.get(POSTGRES_URL_ENV)
    if not raw:
        message = f"PostgreSQL not available: set {POSTGRES_URL_ENV} (scripts/postgres.sh prints it)"
        if os.environ.get(REQUIRE_POSTGRES_ENV) == "1":
            pytest.fail(message)
        pytest.skip(message)
    base = normalize_url(raw)
    name = f"devops_agent_t_{uuid.uuid4().hex[:12]}"
    admin = _admin_engine(base)
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    except SQLAlchemyError as exc:
        admin.dispose()
        pytest.fail(f"cannot create a test database on {display_url(base)}: {exc.__class__.__name__}")
    try:
        yield base.set(database=name)
    finally:
        with admin.connect() as conn:
            # FORCE: a test that failed mid-way may have left a connection open.
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@pytest.fixture
def postgres_url(postgres_database: URL) -> Iterator[str]:
    """A URL whose ``search_path`` is a new, empty schema private to this test."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = _admin_engine(postgres_database)
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
        url = postgres_database.update_query_dict({"options": f"-csearch_path={schema}"})
        yield url.render_as_string(hide_password=False)
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
    finally:
        admin.dispose()


def sqlite_url(directory: Path) -> str:
    """The URL of a SQLite store file in ``directory``."""
    return f"sqlite:///{directory / 'store.db'}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL to an empty database, once per backend."""
    if request.param == "postgres":
        url: str = request.getfixturevalue("postgres_url")
        return url
    return sqlite_url(tmp_path)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    """An open, migrated store on each backend; closed after the test."""
    with Store(store_url) as opened:
        yield opened


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[Store]:
    """An open, migrated store on a SQLite file, for tests that need no second backend."""
    with Store(sqlite_url(tmp_path)) as opened:
        yield opened


@contextlib.contextmanager
def raw_engine(url: str) -> Iterator[Engine]:
    """An engine configured like the store's, for checking what is really in the database."""
    engine = create_store_engine(normalize_url(url))
    try:
        yield engine
    finally:
        engine.dispose()
