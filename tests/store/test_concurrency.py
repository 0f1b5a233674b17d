"""Writers of one process share a SQLite file without "database is locked": they queue in the
store instead of each waiting on SQLite's lock until its busy timeout runs out."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from devops_agent.errors import StoreError
from devops_agent.store import Store, engine
from fixtures_db import sqlite_url


def test_many_threads_write_to_one_sqlite_file_without_timing_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A 1 ms busy timeout: any writer that had to wait on SQLite's own lock would fail at once.
    monkeypatch.setattr(engine, "BUSY_TIMEOUT_MS", 1)
    failures: list[str] = []
    with Store(sqlite_url(tmp_path)) as store:

        def write(n: int) -> None:
            for i in range(40):
                try:
                    session = store.create_session(title=f"t{n}-{i}", mode="ask", model=None)
                    store.update_session(session.id, status="running")
                except StoreError as exc:
                    failures.append(exc.message)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert failures == []
        assert len(store.list_sessions(limit=1000)) == 8 * 40
