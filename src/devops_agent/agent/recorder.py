"""The event recorder of one run: numbers its events, journals them, hands them to live readers.

Every event of a run passes through :meth:`EventRecorder.emit`, which stamps the run's ids and the
next ``seq`` (1, 2, 3 … with no gaps), queues the event for the store (write-behind
:class:`~devops_agent.agent.journal.Journal`) and gives it to every subscriber.

A reader attaches with :meth:`EventRecorder.attach`: it gets what the run emitted after a ``seq``
it names (kept in memory while the run lives, so nothing committed late is missed) and then every
new event, exactly once and in order. A subscriber whose bounded queue fills up — a reader slower
than the run — is dropped instead of slowing the run down; it notices (``lagged``) and re-reads
from the recorder's memory. Events of a run that ended are read from the store instead.

This module must not import the runtime or any interface.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from devops_agent.agent.journal import Journal
from devops_agent.events import RunEvent, RunFinished
from devops_agent.store import EventWrite

SUBSCRIBER_BUFFER = 10_000
"""Events a reader may fall behind the run before it is dropped and must re-read."""


@dataclass
class Subscriber:
    """A live reader's bounded queue; ``lagged`` once it fell so far behind it was dropped."""

    queue: asyncio.Queue[RunEvent] = field(default_factory=lambda: asyncio.Queue(SUBSCRIBER_BUFFER))
    lagged: bool = False


@dataclass
class EventRecorder:
    """Stamps, journals and fans out the events of one run."""

    session_id: str
    run_id: str
    journal: Journal
    seq: int = 0
    history: list[RunEvent] = field(default_factory=list)
    final: RunFinished | None = None
    listener: Callable[[RunEvent], None] | None = None
    """Called with each event after the readers got it (the supervisor's drain watches for a step
    boundary this way); it runs inside the run, so it must not block."""
    _subscribers: list[Subscriber] = field(default_factory=list)

    def emit(self, event: RunEvent) -> RunEvent:
        """Number ``event``, journal it and give it to the subscribers; return the stamped event."""
        self.seq += 1
        stamped = event.model_copy(
            update={"seq": self.seq, "session_id": self.session_id, "run_id": self.run_id}
        )
        self.journal.event(
            EventWrite(self.session_id, self.run_id, self.seq, stamped.type, stamped.model_dump_json())
        )
        self.history.append(stamped)
        if isinstance(stamped, RunFinished):
            self.final = stamped
        for sub in list(self._subscribers):
            try:
                sub.queue.put_nowait(stamped)
            except asyncio.QueueFull:
                sub.lagged = True
                self._subscribers.remove(sub)
        if self.listener is not None:
            self.listener(stamped)
        return stamped

    async def attach(self, after_seq: int = 0) -> AsyncIterator[RunEvent]:
        """The run's events with ``seq`` above ``after_seq``, then each new one, until it finishes."""
        last = after_seq
        while True:
            sub = Subscriber()
            # No await between reading the backlog and subscribing: nothing can slip in between.
            backlog = self.history[last:]
            self._subscribers.append(sub)
            try:
                for event in backlog:
                    last = event.seq
                    yield event
                    if isinstance(event, RunFinished):
                        return
                while not sub.lagged or not sub.queue.empty():
                    event = await sub.queue.get()
                    if event.seq <= last:
                        continue
                    last = event.seq
                    yield event
                    if isinstance(event, RunFinished):
                        return
            finally:
                if sub in self._subscribers:
                    self._subscribers.remove(sub)
            # Dropped for lagging: read on from memory with a fresh subscription.
