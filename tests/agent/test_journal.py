"""The write-behind journal and the store's batched write, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from devops_agent.agent.journal import Journal
from devops_agent.errors import NotFoundError
from devops_agent.store import EventWrite, MessageWrite, Store, ToolCallRecord


def test_append_batch_writes_everything_in_order(store_url: str) -> None:
    with Store(store_url) as store:
        s = store.create_session(title="t", mode="ask", model=None)
        store.append_messages(s.id, "r0", ["m0"])
        store.append_batch(
            events=[EventWrite(s.id, "r1", i, "token", f'{{"n": {i}}}') for i in range(1, 4)],
            tool_calls=[ToolCallRecord(s.id, "r1", "c1", "git_log", {"limit": 3}, "success", 1.5)],
            messages=[MessageWrite(s.id, "r1", ("m1", "m2")), MessageWrite(s.id, "r1", ("m3",))],
        )
        assert store.load_messages(s.id) == ["m0", "m1", "m2", "m3"]
        assert [e.seq for e in store.list_events(s.id)] == [1, 2, 3]
        assert store.list_tool_calls(s.id)[0].args == {"limit": 3}


def test_append_batch_for_an_unknown_session_writes_nothing(store_url: str) -> None:
    with Store(store_url) as store:
        s = store.create_session(title="t", mode="ask", model=None)
        with pytest.raises(NotFoundError):
            store.append_batch(
                events=[
                    EventWrite(s.id, "r", 1, "token", "{}"),
                    EventWrite("nope-nope", "r", 2, "token", "{}"),
                ]
            )
        assert store.list_events(s.id) == []


def test_journal_commits_in_order_and_batches(store_url: str) -> None:
    with Store(store_url) as store:
        s = store.create_session(title="t", mode="ask", model=None)
        batches: list[int] = []
        original = store.append_batch

        def counting(**kw: object) -> None:
            batches.append(sum(len(v) for k, v in kw.items() if k != "owner"))  # type: ignore[arg-type]
            original(**kw)  # type: ignore[arg-type]

        store.append_batch = counting  # type: ignore[method-assign]
        journal = Journal(store, linger_s=0.2)
        for i in range(1, 51):
            journal.event(EventWrite(s.id, "r", i, "token", "{}"))
            if i % 10 == 0:
                journal.messages(MessageWrite(s.id, "r", (f"m{i}",)))
        journal.close()
        journal.close()  # idempotent
        assert [e.seq for e in store.list_events(s.id)] == list(range(1, 51))
        assert store.load_messages(s.id) == [f"m{i}" for i in range(10, 51, 10)]
        assert len(batches) < 10, f"writes were not batched: {batches}"


def test_journal_flush_raises_the_writers_error(store_url: str) -> None:
    with Store(store_url) as store:
        journal = Journal(store, linger_s=0.0)
        journal.event(EventWrite("no-such-session", "r", 1, "token", "{}"))
        with pytest.raises(NotFoundError):
            journal.flush()
        with pytest.raises(NotFoundError):
            journal.close()
