"""The store's users and per-user rows: tokens kept as hashes only, owners filled from the session
for audit entries and findings, filtered and paged session lists."""

from __future__ import annotations

import pytest
from sqlalchemy import event

from devops_agent.api.tokens import new_token, token_hash
from devops_agent.errors import NotFoundError, UserError
from devops_agent.store import AuditRecord, Store
from devops_agent.store.records import FindingRecord


def test_users_are_found_by_token_hash_and_removed(store: Store) -> None:
    token = new_token()
    alice = store.create_user("alice", "operator", token_hash(token))
    assert store.user_for_token(token_hash(token)) == alice
    assert store.user_for_token(token_hash(token + "x")) is None
    with pytest.raises(UserError, match="already exists"):
        store.create_user("alice", "viewer", token_hash(new_token()))
    with pytest.raises(UserError, match="invalid role"):
        store.create_user("bob", "root", token_hash(new_token()))
    with pytest.raises(UserError, match="invalid user name"):
        store.create_user("two words", "viewer", token_hash(new_token()))
    assert [u.name for u in store.list_users()] == ["alice"]
    assert store.delete_user("alice") == alice
    assert store.user_for_token(token_hash(token)) is None
    with pytest.raises(NotFoundError):
        store.delete_user("alice")


def test_a_runs_audit_batches_look_its_sessions_owner_up_once(store: Store) -> None:
    mine = store.create_session(title="t", mode="ask", model=None, user_id="u-alice")
    cli = store.create_session(title="t", mode="ask", model=None)
    seen: list[str] = []
    event.listen(store._engine, "before_cursor_execute", lambda *a: seen.append(a[2]))

    def batch(tool: str) -> None:
        store.append_batch(
            audits=[
                AuditRecord(tool=tool, mode="ask", decision="allow", outcome="executed", session_id=mine.id),
                AuditRecord(tool=tool, mode="ask", decision="allow", outcome="executed", session_id=cli.id),
            ]
        )

    batch("a")
    batch("b")
    batch("c")
    lookups = [s for s in seen if "FROM sessions" in s]
    assert len(lookups) == 1, lookups  # the first batch; the owners are remembered after it
    owners = {(a.tool, a.session_id): a.user_id for a in store.list_audit()}
    for tool in "abc":
        assert owners[(tool, mine.id)] == "u-alice"
        assert owners[(tool, cli.id)] is None


def test_audit_entries_and_findings_record_the_user_of_their_session(store: Store) -> None:
    mine = store.create_session(title="t", mode="ask", model=None, user_id="u-alice")
    cli = store.create_session(title="t", mode="ask", model=None)
    store.append_batch(
        audits=[
            AuditRecord(tool="x", mode="ask", decision="allow", outcome="executed", session_id=mine.id),
            AuditRecord(tool="y", mode="ask", decision="allow", outcome="executed", session_id=cli.id),
        ]
    )
    store.record_audit(
        AuditRecord(tool="z", mode="ask", decision="allow", outcome="executed", session_id=mine.id)
    )
    assert sorted(a.tool for a in store.list_audit(user_id="u-alice")) == ["x", "z"]
    assert {a.user_id for a in store.list_audit()} == {"u-alice", None}
    found = store.add_finding(FindingRecord(project="p", title="a", summary="b", session_id=mine.id))
    assert found.user_id == "u-alice"
    shared = store.add_finding(FindingRecord(project="p", title="c", summary="d"))
    other = store.add_finding(FindingRecord(project="p", title="e", summary="f", user_id="u-bob"))
    visible = {f.id for f in store.find_findings(user_id="u-alice")}
    assert visible == {found.id, shared.id}
    assert other.id not in visible


def test_sessions_are_listed_by_owner_status_mode_and_title(store: Store) -> None:
    for i in range(5):
        store.create_session(title=f"Disk {i} filling", mode="ask", model=None, user_id="a")
    store.create_session(title="API errors", mode="agent", model=None, user_id="a")
    store.create_session(title="disk of bob", mode="ask", model=None, user_id="b")
    page, total = store.find_sessions(user_id="a", limit=2)
    assert (len(page), total) == (2, 6)
    rest, _ = store.find_sessions(user_id="a", limit=10, offset=2)
    assert len(rest) == 4
    assert {s.id for s in page}.isdisjoint(s.id for s in rest)
    assert store.find_sessions(user_id="a", mode="agent")[1] == 1
    assert store.find_sessions(user_id="a", text="DISK")[1] == 5, "case-insensitive on both backends"
    assert store.find_sessions(text="100%")[1] == 0, "a % is a character, not a wildcard"
    assert store.find_sessions()[1] == 7
