"""The TUI's client of a server (``devops-agent serve``): its WebSocket and REST API, docs/api.md.

Questions, answers to approvals and cancels go over one WebSocket (``query``, ``approve``/``deny``,
``cancel``), and so do the runs' events; sessions, past events, pending calls, mode changes and
kept outputs are REST reads. One reader task takes every message off the socket: events go to the
queue of their run, replies to the request waiting for them (one request at a time).

A run's events are delivered exactly once, in ``seq`` order: a ``lagged`` notice is answered with
``subscribe`` from the last seq the server queued, and when the connection drops the client
reconnects (``init`` again) and subscribes each followed run from the last seq it delivered;
anything seen twice is dropped by its seq. Who may do what is the server's decision: its refusals
come back as :class:`~devops_agent.errors.UserError` with the server's message and hint.

This module must not import Textual or the service's code (it talks to the service only over HTTP).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any, cast

import httpx
import structlog

from devops_agent.errors import DevOpsAgentError, RuntimeFailure, UserError
from devops_agent.events import EVENT_TYPES, RunEvent, RunEventAdapter, RunFinished, event_from_json
from devops_agent.tui.client import (
    Identity,
    KeptOutput,
    PendingCall,
    PendingPlan,
    PlanAction,
    Role,
    RunRef,
    RunSummary,
    SessionSummary,
)

log = structlog.get_logger(__name__)

REPLIES = frozenset(("accepted", "cancel_requested", "problem"))
RECONNECT_TRIES = 5


class ConnectionLost(RuntimeFailure):
    """The WebSocket closed and could not be opened again."""


_LOST = object()
"""Put on every run's queue when the connection drops: its reader reconnects and resubscribes."""


def problem_error(problem: dict[str, Any]) -> DevOpsAgentError:
    """A server's RFC 9457 problem as our error type: 4xx the caller's to fix, 5xx the server's."""
    status = int(problem.get("status") or 500)
    message = str(problem.get("detail") or problem.get("title") or f"HTTP {status}")
    hint = problem.get("hint")
    kind = UserError if 400 <= status < 500 else RuntimeFailure
    return kind(message, hint=str(hint) if hint else None, status=status)


def _summary(s: dict[str, Any]) -> SessionSummary:
    return SessionSummary(
        id=s["id"],
        title=s["title"],
        mode=s["mode"],
        status=s["status"],
        updated_at=datetime.fromisoformat(s["updated_at"]),
        pending_approvals=int(s.get("pending_approvals") or 0),
    )


class RemoteClient:
    """:class:`~devops_agent.tui.client.AgentClient` over a server's WebSocket and REST API."""

    def __init__(self, url: str, token: str, *, timeout_s: float = 30.0) -> None:
        self.url = url.rstrip("/")
        if not self.url.startswith(("http://", "https://")):
            raise UserError(f"server URL {url!r} must start with http:// or https://")
        self.ws_url = "ws" + self.url.removeprefix("http") + "/v1/ws"
        self.token = token
        self.timeout_s = timeout_s
        self._http: httpx.AsyncClient | None = None
        self._ws: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._replies: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._runs: dict[str, asyncio.Queue[object]] = {}
        self._followed: set[str] = set()
        self._lock = asyncio.Lock()
        self._reconnecting = asyncio.Lock()
        self._closing = False
        self.identity: Identity | None = None

    # -- connection -----------------------------------------------------------------------

    async def connect(self) -> Identity:
        headers = {"Authorization": f"Bearer {self.token}"}
        self._http = httpx.AsyncClient(base_url=self.url, headers=headers, timeout=self.timeout_s)
        ready = await self._open()
        user = ready.get("user") or {}
        self.identity = Identity(
            str(user.get("name")), cast(Role, user.get("role", "viewer")), self.url, ready.get("model")
        )
        return self.identity

    async def _open(self) -> dict[str, Any]:
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidHandshake, InvalidURI

        try:
            ws = await connect(self.ws_url, open_timeout=self.timeout_s, max_size=2**24)
        except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
            raise RuntimeFailure(
                f"cannot reach the server at {self.url}: {exc}",
                hint="is `devops-agent serve` running there, and is the URL right?",
            ) from None
        await ws.send(json.dumps({"type": "init", "token": self.token}))
        try:
            first = json.loads(await asyncio.wait_for(ws.recv(), self.timeout_s))
        except Exception as exc:
            await ws.close()
            raise RuntimeFailure(f"the server at {self.url} did not answer init: {exc!r}") from None
        if first.get("type") != "ready":
            await ws.close()
            if first.get("type") == "problem":
                raise problem_error(first)
            raise RuntimeFailure(f"unexpected first message from the server: {first.get('type')!r}")
        self._ws = ws
        self._reader = asyncio.create_task(self._read(ws), name="tui-ws-reader")
        return dict(first)

    async def close(self) -> None:
        self._closing = True
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._http is not None:
            await self._http.aclose()

    async def _read(self, ws: Any) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            async for raw in ws:
                try:
                    self._dispatch(raw)
                except (ValueError, KeyError) as exc:  # one bad message must not end the connection
                    log.warning("tui_bad_message", error=repr(exc)[:200])
        except ConnectionClosed:
            pass
        finally:
            if not self._closing:
                for queue in self._runs.values():
                    queue.put_nowait(_LOST)
                self._replies.put_nowait({"type": "problem", "status": 503, "detail": "connection lost"})

    def _dispatch(self, raw: str | bytes) -> None:
        message = json.loads(raw)
        kind = message.get("type")
        if kind in EVENT_TYPES:
            event = event_from_json(raw)
            self._queue(event.run_id).put_nowait(event)
        elif kind == "lagged":  # the server stopped sending this run: ask for the rest
            follow = {"type": "subscribe", "run_id": message["run_id"], "last_seq": message["last_seq"]}
            task = asyncio.ensure_future(self._send(follow))
            _BACKGROUND.add(task)
            task.add_done_callback(_BACKGROUND.discard)
        elif kind == "problem" and message.get("request") == "subscribe" and message.get("run_id"):
            self._queue(message["run_id"]).put_nowait(problem_error(message))
        elif kind in REPLIES:
            self._replies.put_nowait(message)
        # ready (after a reconnect) and pong need no answer

    def _queue(self, run_id: str) -> asyncio.Queue[object]:
        return self._runs.setdefault(run_id, asyncio.Queue())

    async def _send(self, message: dict[str, Any]) -> None:
        try:
            await self._ws.send(json.dumps(message))
        except Exception as exc:  # closed under us: the reader's _LOST makes the followers reconnect
            raise ConnectionLost(f"lost the connection to {self.url}: {exc!r}") from None

    async def _request(self, message: dict[str, Any], expect: str) -> dict[str, Any]:
        async with self._lock:
            while not self._replies.empty():  # a late reply to an earlier request that timed out
                self._replies.get_nowait()
            await self._send(message)
            try:
                reply = await asyncio.wait_for(self._replies.get(), self.timeout_s)
            except TimeoutError:
                raise RuntimeFailure(f"the server did not answer {message['type']!r} in time") from None
        if reply.get("type") == "problem":
            raise problem_error(reply)
        if reply.get("type") != expect:
            raise RuntimeFailure(f"expected {expect!r} from the server, got {reply.get('type')!r}")
        return reply

    async def _reconnect(self) -> None:
        async with self._reconnecting:
            if self._reader is not None and not self._reader.done():
                return  # another follower reconnected already
            delay = 0.2
            for attempt in range(RECONNECT_TRIES):
                try:
                    await self._open()
                    return
                except RuntimeFailure:
                    if attempt == RECONNECT_TRIES - 1:
                        raise ConnectionLost(
                            f"lost the connection to {self.url} and could not reconnect",
                            hint="the runs go on on the server; reopen the session to follow them",
                        ) from None
                    await asyncio.sleep(delay)
                    delay *= 2

    # -- REST -----------------------------------------------------------------------------

    async def _rest(self, method: str, path: str, **kwargs: Any) -> Any:
        assert self._http is not None, "connect() first"
        try:
            response = await self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise RuntimeFailure(f"cannot reach the server at {self.url}: {exc}") from None
        if response.status_code >= 400:
            try:
                problem = response.json()
            except ValueError:
                problem = {"status": response.status_code, "detail": response.text[:200]}
            raise problem_error({"status": response.status_code, **problem})
        return response.json() if response.content else None

    async def sessions(self, limit: int = 50) -> list[SessionSummary]:
        page = await self._rest("GET", "/v1/sessions", params={"limit": limit})
        return [_summary(s) for s in page["items"]]

    async def session(self, session_id: str) -> SessionSummary:
        return _summary(await self._rest("GET", f"/v1/sessions/{session_id}"))

    async def history(self, session_id: str) -> list[RunEvent]:
        events: list[RunEvent] = []
        offset: int | None = 0
        while offset is not None:
            page = await self._rest(
                "GET", f"/v1/sessions/{session_id}/events", params={"offset": offset, "limit": 1000}
            )
            events.extend(RunEventAdapter.validate_python(e) for e in page["events"])
            offset = page.get("next_offset")
        return events

    async def runs(self, session_id: str) -> list[RunSummary]:
        return [
            RunSummary(r["id"], r["status"])
            for r in await self._rest("GET", f"/v1/sessions/{session_id}/runs")
        ]

    async def pending(self, session_id: str) -> list[PendingCall]:
        calls = await self._rest("GET", f"/v1/sessions/{session_id}/approvals")
        return [PendingCall.from_pending(c["tool_call_id"], c) for c in calls]

    async def pending_plan(self, session_id: str) -> PendingPlan | None:
        try:
            plan = await self._rest("GET", f"/v1/sessions/{session_id}/plan")
        except UserError as exc:
            if exc.fields.get("status") == 409:  # no plan waits
                return None
            raise
        return PendingPlan.from_pending(plan)

    async def decide_plan(self, session_id: str, action: PlanAction, text: str = "") -> RunRef:
        # Over REST (POST /v1/sessions/{id}/plan): events() subscribes to the run it starts.
        accepted = await self._rest(
            "POST", f"/v1/sessions/{session_id}/plan", json={"decision": action, "text": text}
        )
        return RunRef(accepted["session_id"], accepted["run_id"])

    async def set_mode(self, session_id: str, mode: str) -> None:
        await self._rest("PATCH", f"/v1/sessions/{session_id}", json={"mode": mode})

    async def kept_outputs(self, session_id: str) -> list[KeptOutput]:
        kept = await self._rest("GET", f"/v1/sessions/{session_id}/outputs")
        return [KeptOutput(k["tool_call_id"], k["tool"], int(k["chars"])) for k in kept]

    async def tool_output(self, session_id: str, tool_call_id: str) -> str | None:
        try:
            found = await self._rest("GET", f"/v1/sessions/{session_id}/outputs/{tool_call_id}")
        except UserError as exc:
            if exc.fields.get("status") == 404:
                return None
            raise
        return str(found["output"])

    # -- runs (WebSocket) -----------------------------------------------------------------

    async def ask(
        self, question: str, *, session_id: str | None, mode: str, inputs: dict[str, Any] | None = None
    ) -> RunRef:
        message: dict[str, Any] = {"type": "query", "question": question, "mode": mode}
        if session_id is not None:
            message["session_id"] = session_id
        if inputs:
            message["inputs"] = inputs
        return self._accepted(await self._request(message, "accepted"))

    async def answer(
        self, session_id: str, *, approve: bool, reason: str = "", confirm: str | None = None
    ) -> RunRef:
        message: dict[str, Any] = {"type": "approve" if approve else "deny", "session_id": session_id}
        if reason:
            message["reason"] = reason
        if confirm:
            message["confirm"] = confirm
        return self._accepted(await self._request(message, "accepted"))

    def _accepted(self, reply: dict[str, Any]) -> RunRef:
        ref = RunRef(reply["session_id"], reply["run_id"])
        self._followed.add(ref.run_id)  # the server follows the runs it accepted from this client
        self._queue(ref.run_id)
        return ref

    async def cancel(self, run_id: str) -> bool:
        reply = await self._request({"type": "cancel", "run_id": run_id}, "cancel_requested")
        return bool(reply.get("ok"))

    async def events(self, run_id: str, after_seq: int = 0) -> AsyncIterator[RunEvent]:
        queue = self._queue(run_id)
        last = after_seq
        if run_id not in self._followed:
            self._followed.add(run_id)
            await self._send({"type": "subscribe", "run_id": run_id, "last_seq": after_seq})
        try:
            while True:
                item = await queue.get()
                if item is _LOST:
                    await self._reconnect()
                    await self._send({"type": "subscribe", "run_id": run_id, "last_seq": last})
                    continue
                if isinstance(item, DevOpsAgentError):
                    raise item
                event = cast(RunEvent, item)
                if event.seq <= last:  # a replay after a reconnect or a second subscribe
                    continue
                last = event.seq
                yield event
                if isinstance(event, RunFinished):
                    return
        finally:
            self._runs.pop(run_id, None)
            self._followed.discard(run_id)


_BACKGROUND: set[asyncio.Future[None]] = set()
"""Subscribe requests sent from the reader (asyncio keeps only weak references to tasks)."""
