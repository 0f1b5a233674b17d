"""Write-behind journal: a run's events, tool calls and messages reach the store off the event loop.

Committing each row as it happens costs a transaction per event (about 1 ms on SQLite through
the ORM, a network round trip on PostgreSQL) and blocks the event loop while it does. The
journal queues writes and a writer thread commits whatever has accumulated in one
transaction (``Store.append_batch``), in order. :meth:`Journal.flush` waits until everything
queued so far is committed and re-raises the writer's first error; the session service flushes
before it reports a run as finished, so a finished run is always fully on disk.

A journal serves one run; :meth:`Journal.close` flushes and stops the thread.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field

from devops_agent.store import AuditRecord, EventWrite, MessageWrite, Store, ToolCallRecord

_Item = EventWrite | ToolCallRecord | MessageWrite | AuditRecord | threading.Event | None


@dataclass
class Journal:
    store: Store
    linger_s: float = 0.05
    """How long the writer keeps collecting after the first write before it commits.

    Each commit has a fixed cost (begin, the session's row, the message ``seq``, commit: ~1 ms of
    Python that holds the interpreter lock against the run's loop), so a run of fast steps pays it
    per batch, not per step. 50 ms keeps a store reader (which polls every 250 ms) current; at
    20 ms the benchmark's 5 ms steps paid it about every fourth step (0.5 ms a step).
    """
    owner: tuple[str, str] | None = None
    """``(run_id, worker)`` for a durable worker's run: every batch is written only while the
    run is still that worker's (see ``Store.append_batch``)."""
    _queue: queue.SimpleQueue[_Item] = field(default_factory=queue.SimpleQueue)
    _error: BaseException | None = None
    _thread: threading.Thread | None = None
    _closed: bool = False

    def __post_init__(self) -> None:
        self._thread = threading.Thread(target=self._work, name="devops-agent-journal", daemon=True)
        self._thread.start()

    def event(self, write: EventWrite) -> None:
        self._queue.put(write)

    def tool_call(self, record: ToolCallRecord) -> None:
        self._queue.put(record)

    def messages(self, write: MessageWrite) -> None:
        self._queue.put(write)

    def audit(self, record: AuditRecord) -> None:
        self._queue.put(record)

    def flush(self, timeout: float = 30.0) -> None:
        """Block until every write queued so far is committed; raise the writer's error, if any."""
        done = threading.Event()
        self._queue.put(done)
        if not done.wait(timeout):
            raise TimeoutError(f"the store did not commit the run's writes within {timeout:.0f}s")
        if self._error is not None:
            raise self._error

    def close(self) -> None:
        """Flush and stop the writer thread; later calls do nothing."""
        if self._closed:
            return
        self._closed = True
        try:
            self.flush()
        finally:
            self._queue.put(None)
            if self._thread is not None:
                self._thread.join(timeout=10)

    def _work(self) -> None:
        stop = False
        while not stop:
            batch: list[_Item] = [self._queue.get()]
            # Collect for a moment so one transaction covers a whole step; a flush request or
            # the stop marker ends the wait at once.
            deadline = time.monotonic() + self.linger_s
            while not isinstance(batch[-1], threading.Event) and batch[-1] is not None:
                remaining = deadline - time.monotonic()
                try:
                    batch.append(
                        self._queue.get(timeout=remaining) if remaining > 0 else self._queue.get_nowait()
                    )
                except queue.Empty:
                    break
            events = [i for i in batch if isinstance(i, EventWrite)]
            calls = [i for i in batch if isinstance(i, ToolCallRecord)]
            messages = _coalesce([i for i in batch if isinstance(i, MessageWrite)])
            audits = [i for i in batch if isinstance(i, AuditRecord)]
            if self._error is None:
                try:
                    self.store.append_batch(
                        events=events, tool_calls=calls, messages=messages, audits=audits, owner=self.owner
                    )
                except BaseException as exc:  # surfaced to the run by flush()
                    self._error = exc
            for item in batch:
                if isinstance(item, threading.Event):
                    item.set()
                elif item is None:
                    stop = True


def _coalesce(writes: list[MessageWrite]) -> list[MessageWrite]:
    """Merge consecutive appends to the same session and run: one seq look-up instead of many."""
    merged: list[MessageWrite] = []
    for w in writes:
        last = merged[-1] if merged else None
        if last is not None and (last.session_id, last.run_id) == (w.session_id, w.run_id):
            merged[-1] = MessageWrite(w.session_id, w.run_id, last.payloads + w.payloads)
        else:
            merged.append(w)
    return merged
