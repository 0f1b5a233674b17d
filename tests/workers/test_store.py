"""The store's side of durable workers, on SQLite and PostgreSQL: the write fence of a run that
changed hands, first-write-wins checkpoints, dead workers claimed once, de-duplication keys."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from devops_agent.errors import RunFencedError
from devops_agent.store import EventWrite, Store, WorkerRecord


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


def _beat(store: Store, worker: str, at: datetime, state: str = "alive", *, register: bool = False) -> None:
    store.worker_beat(WorkerRecord(worker, "h", 1, state, [], at, at), register=register)


def test_a_claim_nobody_alive_finishes_is_adopted_once(store: Store) -> None:
    """w1 claims w0 and is killed before handing w0's runs back; w2, claiming w1, adopts both (and
    w3 nothing); once handed back, nobody adopts them again."""
    now = datetime.now(UTC)
    old, silent_since = now - timedelta(seconds=60), now - timedelta(seconds=15)
    _beat(store, "w0", old)
    _beat(store, "w1", now)
    assert store.claim_dead_workers(silent_since, "w1") == ["w0"]
    assert store.adopt_unfinished_claims("w1") == ["w0"]  # its own claim, not handed back yet
    _beat(store, "w2", now)
    assert store.adopt_unfinished_claims("w2") == []  # w1 is alive: the claim is w1's to finish
    _beat(store, "w1", old)  # w1 killed: its heartbeat stops (this write is a late one of its own)
    assert store.claim_dead_workers(silent_since, "w2") == ["w1"]
    assert sorted(store.adopt_unfinished_claims("w2")) == ["w0", "w1"]
    assert store.adopt_unfinished_claims("w3") == []  # adopted once
    store.finish_claims(["w0", "w1"])
    assert store.adopt_unfinished_claims("w2") == []
    states = {w.id: w.state for w in store.list_workers(include_gone=True)}
    assert (states["w0"], states["w1"]) == ("recovered", "recovered")


def test_a_claimant_that_stopped_leaves_its_claims_to_the_others(store: Store) -> None:
    now = datetime.now(UTC)
    _beat(store, "w0", now - timedelta(seconds=60))
    _beat(store, "w1", now)
    assert store.claim_dead_workers(now - timedelta(seconds=15), "w1") == ["w0"]
    _beat(store, "w1", now, "stopped")  # an error ended its loop before the hand-back
    assert store.adopt_unfinished_claims("w2") == ["w0"]


def test_a_heartbeat_never_brings_back_a_worker_declared_dead(store: Store) -> None:
    now = datetime.now(UTC)
    _beat(store, "w0", now - timedelta(seconds=60))
    assert store.claim_dead_workers(now - timedelta(seconds=15), "w1") == ["w0"]
    _beat(store, "w0", now)  # a stalled worker's late beat: the claim stands, its next beat fences it
    (w0,) = [w for w in store.list_workers(include_gone=True) if w.id == "w0"]
    assert (w0.state, w0.recovered_by) == ("dead", "w1")
    _beat(store, "w0", now, register=True)  # a new process under the same id starts afresh
    (w0,) = [w for w in store.list_workers(include_gone=True) if w.id == "w0"]
    assert (w0.state, w0.recovered_by) == ("alive", None)


def test_a_key_names_its_latest_run_within_the_window(store: Store) -> None:
    session_id, run_id = _run(store)
    store.remember_key("alert:abc", run_id)
    assert store.run_for_key("alert:abc", datetime.now(UTC) - timedelta(seconds=60)) == run_id
    assert store.run_for_key("alert:abc", datetime.now(UTC) + timedelta(seconds=1)) is None
    assert store.run_for_key("alert:other", datetime.now(UTC) - timedelta(seconds=60)) is None
