"""The store's side of durable workers, on SQLite and PostgreSQL: the write fence of a run that
changed hands, first-write-wins checkpoints, dead workers claimed once, de-duplication keys."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from devops_agent.errors import RunFencedError
from devops_agent.store import EventWrite, Store, WorkerRecord
from devops_agent.workers.worker import with_unfinished_claims


def _run(store: Store) -> tuple[str, str]:
    session = store.create_session(title="t", mode="ask", model=None)
    store.create_run(session.id, "run1", status="queued")
    return session.id, "run1"


def _event(session_id: str, seq: int) -> EventWrite:
    return EventWrite(session_id, "run1", seq, "token", f'{{"type":"token","seq":{seq}}}')


def test_a_worker_whose_run_was_taken_over_writes_nothing_more(store: Store) -> None:
    session_id, run_id = _run(store)
    store.claim_run(run_id, "w1")
    store.append_batch(events=[_event(session_id, 1)], owner=(run_id, "w1"))
    store.claim_run(run_id, "w2")  # w1 stalled, was declared dead; w2 took the run over
    with pytest.raises(RunFencedError, match="w2"):
        store.append_batch(events=[_event(session_id, 2)], owner=(run_id, "w1"))
    store.append_batch(events=[_event(session_id, 2)], owner=(run_id, "w2"))
    assert [e.seq for e in store.run_events(run_id)] == [1, 2]
    assert store.get_run(run_id).owner == "w2"


def test_the_first_checkpoint_of_a_step_holds(store: Store) -> None:
    _, run_id = _run(store)
    assert store.put_checkpoint(run_id, "tool:x:1", "first", worker="w1") == "first"
    assert store.put_checkpoint(run_id, "tool:x:1", "second", worker="w2") == "first"
    assert store.checkpoints(run_id) == {"tool:x:1": "first"}
    assert store.count_checkpoints([run_id]) == 1


def test_a_silent_worker_is_claimed_by_exactly_one_survivor(store: Store) -> None:
    now = datetime.now(UTC)
    old = now - timedelta(seconds=60)
    store.worker_beat(WorkerRecord("dead1", "h", 1, "alive", ["run1"], old, old))
    store.worker_beat(WorkerRecord("live1", "h", 2, "alive", [], now, now))
    silent_since = now - timedelta(seconds=15)
    assert store.claim_dead_workers(silent_since, "live1") == ["dead1"]
    assert store.claim_dead_workers(silent_since, "live2") == []
    (gone,) = [w for w in store.list_workers(include_gone=True) if w.id == "dead1"]
    assert (gone.state, gone.recovered_by) == ("dead", "live1")
    assert [w.id for w in store.list_workers()] == ["live1"]


def test_a_claimant_killed_before_recovering_passes_its_claims_on(store: Store) -> None:
    """w0 claims w00, w1 claims w0, and each is killed before re-queuing the runs it claimed; w2,
    claiming w1, must recover all three, or w00's and w0's runs stay pending for ever."""
    now = datetime.now(UTC)
    old = now - timedelta(seconds=60)
    silent_since = now - timedelta(seconds=15)
    store.worker_beat(WorkerRecord("w00", "h", 1, "alive", ["run1"], old, old))
    for worker in ("w0", "w1"):
        store.worker_beat(WorkerRecord(worker, "h", 1, "alive", [], now, now))
    assert store.claim_dead_workers(silent_since, "w0") == ["w00"]
    store.worker_beat(WorkerRecord("w0", "h", 1, "alive", ["run2"], now, old))  # killed: silent
    assert store.claim_dead_workers(silent_since, "w1") == ["w0"]
    store.worker_beat(WorkerRecord("w1", "h", 1, "alive", [], now, old))  # killed before recovering
    claimed = store.claim_dead_workers(silent_since, "w2")
    assert claimed == ["w1"]
    assert store.claimed_by(["w1"]) == ["w0"]
    assert store.claimed_by([]) == []
    assert sorted(with_unfinished_claims(store, claimed)) == ["w0", "w00", "w1"]


def test_a_key_names_its_latest_run_within_the_window(store: Store) -> None:
    session_id, run_id = _run(store)
    store.remember_key("alert:abc", run_id)
    assert store.run_for_key("alert:abc", datetime.now(UTC) - timedelta(seconds=60)) == run_id
    assert store.run_for_key("alert:abc", datetime.now(UTC) + timedelta(seconds=1)) is None
    assert store.run_for_key("alert:other", datetime.now(UTC) - timedelta(seconds=60)) is None
