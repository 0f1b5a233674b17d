"""Server-Sent Events for readers that only read (curl, a status page): the run's ``RunEvent``s.

Each SSE message has ``id`` = the event's ``seq``, ``event`` = its type and ``data`` = the event as
JSON, so a client that reconnects with ``Last-Event-ID`` gets what it missed, exactly once. A slow
SSE client never slows the run: it reads through the recorder's bounded queue, which drops a
lagging reader and lets it re-read from memory (or the store).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from sse_starlette import EventSourceResponse, ServerSentEvent

from devops_agent.api.state import ServiceState

PING_S = 15


def sse_response(state: ServiceState, run_id: str, after_seq: int) -> EventSourceResponse:
    """Stream ``run_id``'s events after ``after_seq`` until its ``run_finished``."""

    async def stream() -> AsyncIterator[ServerSentEvent]:
        async for event in state.service.events(run_id, after_seq):
            yield ServerSentEvent(data=event.model_dump_json(), event=event.type, id=str(event.seq))

    return EventSourceResponse(stream(), ping=PING_S, headers={"Cache-Control": "no-store"})
