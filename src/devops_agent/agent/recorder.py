"""The event recorder of one run: numbers its events, journals them, hands them to live readers.

Every event of a run passes through :meth:`EventRecorder.emit`, which stamps the run's ids and the
next ``seq`` (1, 2, 3 … with no gaps), queues the event for the store (write-behind
:class:`~devops_agent.agent.journal.Journal`) and gives it to every subscriber.

A reader attaches with :meth:`EventRecorder.attach`: it gets what the run emitted after a ``seq``
it names (kept in memory while the run lives, so nothing committed late is missed) and then every
new event, exactly once and in order. A subscriber whose bounded queue fills up — a reader slower
than the run — is dropped instead of slowing the run down; it notices (``lagged``) and re-reads
from the recorder's memory. Events of a run that ended are read from the store instead.

A run that a durable worker takes over after its first worker died is *resumed*
(:meth:`EventRecorder.resume`): numbering continues after the last stored ``seq``, and the events
the run emits again while it replays its completed steps are recognised and dropped, so a reader
sees each event once and ``seq`` has no gap. An event is recognised by its identity — its type,
the tool call it is about, and how many such events came before it — not by its position, because
concurrent tool calls may finish in another order the second time. Streamed model text has no such
identity: it is dropped until the run emits its first new event.

This module must not import the runtime or any interface.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

from devops_agent.agent.journal import Journal
from devops_agent.events import RunEvent, RunFinished, RunResumed, Token
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
    _stored: dict[tuple[str, str, int], RunEvent] | None = None
    _ordinals: Counter[tuple[str, str]] = field(default_factory=Counter)
    _replaying: bool = False
    dropped: int = 0
    """Events recognised as emitted before a takeover and not stored again."""

    def resume(self, stored: Sequence[RunEvent], *, worker: str, completed_steps: int = 0) -> None:
        """Continue a run whose events ``stored`` (in ``seq`` order) are already in the store."""
        self.history = list(stored)
        self.seq = max((e.seq for e in stored), default=0)
        ordinals: Counter[tuple[str, str]] = Counter()
        self._stored = {}
        for event in stored:
            if isinstance(event, Token | RunResumed):
                continue
            key = _identity(event)
            ordinals[key] += 1
            self._stored[(*key, ordinals[key])] = event
        self._replaying = True
        self._write(
            RunResumed(
                session_id=self.session_id,
                run_id=self.run_id,
                worker=worker,
                after_seq=self.seq,
                completed_steps=completed_steps,
            )
        )

    def emit(self, event: RunEvent) -> RunEvent:
        """Number ``event``, journal it and give it to the subscribers; return the stamped event."""
        if self._stored is not None:
            if isinstance(event, Token):
                if self._replaying:
                    self.dropped += 1
                    return event
            else:
                key = _identity(event)
                self._ordinals[key] += 1
                earlier = self._stored.get((*key, self._ordinals[key]))
                if earlier is not None:
                    self.dropped += 1
                    return earlier
                self._replaying = False
        return self._write(event)

    def _write(self, event: RunEvent) -> RunEvent:
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


def _identity(event: RunEvent) -> tuple[str, str]:
    """What an event is about: its type and the tool call it concerns (if any)."""
    return event.type, str(getattr(event, "tool_call_id", "") or "")
