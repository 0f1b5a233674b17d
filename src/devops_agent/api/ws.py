"""The WebSocket protocol of an interactive client (``/v1/ws``); docs/api.md shows every message.

Client → server: ``init`` (first: token, optionally resume a session from ``last_seq``),
``query`` (question, mode, model, inputs), ``cancel``, ``approve`` / ``deny``, ``plan`` (decide on a
waiting plan: ``decision`` approve|edit|reject, ``text``), ``subscribe`` (follow a run from a seq),
``ping``. Server → client: every ``RunEvent`` as it happens, as the event's own
JSON (``type`` is the event type, ``seq`` numbers it), and control messages: ``ready``,
``accepted``, ``cancel_requested``, ``lagged``, ``pong``, ``problem`` (RFC 9457 fields).

Back-pressure: each client has a send buffer of ``server.ws_send_buffer`` messages. When a client
reads slower than its runs emit and the buffer stays full for :data:`LAG_AFTER_S`, the server
stops sending that run and queues ``lagged`` with the last seq it queued; the client resumes
with ``subscribe`` from there (or reconnects with ``init`` and ``last_seq``), and gets the rest
exactly once. The run itself is
never slowed. A client that goes away does not stop its runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

import structlog
from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from pydantic import ValidationError

from devops_agent.api.approvals import answer_pending
from devops_agent.api.auth import authenticate, owned_run, owned_session
from devops_agent.api.plans import answer_plan
from devops_agent.api.problems import ApiError, problem_dict
from devops_agent.api.runs import start_question
from devops_agent.api.schemas import ApprovalAnswer, PlanAnswer, RunCreate, SessionOut
from devops_agent.api.state import ServiceState, service_state
from devops_agent.api.tokens import PERSON_ROLES, Principal
from devops_agent.errors import DevOpsAgentError, UserError

log = structlog.get_logger(__name__)
router = APIRouter()
INIT_TIMEOUT_S = 10.0
CLOSE_POLICY = 1008  # RFC 6455: policy violation (no or bad credentials)
CLOSE_OVERLOAD = 1013  # try again later: the client does not read at all
LAG_AFTER_S = 2.0
"""How long a full send buffer may stay full before the client is told it lagged (a client that
only paused a moment catches up without a round trip)."""


class Client:
    """One WebSocket connection: who it is, what it follows, what waits to be sent."""

    def __init__(self, ws: WebSocket, state: ServiceState) -> None:
        self.ws = ws
        self.state = state
        self.buffer = state.settings.server.ws_send_buffer
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.principal: Principal | None = None
        self.session_id: str | None = None
        self.run_id: str | None = None
        self.pumps: dict[str, asyncio.Task[None]] = {}
        self.overloaded = asyncio.Event()
        self.room = asyncio.Event()

    # -- sending ---------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        """Queue a control message (never dropped; a client that reads nothing at all is closed)."""
        self.queue.put_nowait(json.dumps(message, default=str))
        if self.queue.qsize() > 2 * self.buffer:
            self.overloaded.set()

    async def sender(self) -> None:
        while True:
            text = await self.queue.get()
            if self.queue.qsize() < self.buffer:
                self.room.set()
            await self.ws.send_text(text)

    async def _room(self) -> None:
        while self.queue.qsize() >= self.buffer:
            self.room.clear()
            await self.room.wait()

    def follow(self, run_id: str, after_seq: int) -> None:
        """Send ``run_id``'s events after ``after_seq`` as they come (replacing an earlier follow)."""
        old = self.pumps.pop(run_id, None)
        if old is not None:
            old.cancel()
        self.run_id = run_id
        self.pumps[run_id] = asyncio.create_task(self._pump(run_id, after_seq), name=f"ws-pump-{run_id}")

    async def _pump(self, run_id: str, after_seq: int) -> None:
        last = after_seq
        try:
            async for event in self.state.service.events(run_id, after_seq):
                if self.queue.qsize() < self.buffer:
                    self.queue.put_nowait(event.model_dump_json())
                    last = event.seq
                    continue
                try:  # the pump waits, never the run: it reads the run through the recorder
                    await asyncio.wait_for(self._room(), LAG_AFTER_S)
                except TimeoutError:
                    self.send(
                        {
                            "type": "lagged",
                            "run_id": run_id,
                            "last_seq": last,
                            "hint": "send {type: subscribe, run_id, last_seq} to get the rest",
                        }
                    )
                    return
                self.queue.put_nowait(event.model_dump_json())
                last = event.seq
        except DevOpsAgentError as exc:
            self.send({"type": "problem", "request": "subscribe", "run_id": run_id, **problem_dict(exc)})

    # -- receiving -------------------------------------------------------------------------

    async def handle(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        handler = HANDLERS.get(str(kind))
        if handler is None:
            raise UserError(f"unknown message type {kind!r}", hint="use one of: " + ", ".join(HANDLERS))
        if kind != "init" and self.principal is None:
            raise ApiError(401, "send init first", hint="{type: init, token: ...}", error="Unauthorized")
        await handler(self, message)

    async def close(self) -> None:
        for task in self.pumps.values():
            task.cancel()
        for task in self.pumps.values():
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def _init(client: Client, msg: dict[str, Any]) -> None:
    state = client.state
    if client.principal is not None:
        raise UserError("init was already sent", hint="open a new connection to change user")
    token = msg.get("token")
    header = state.settings.server.trusted_user_header
    authorization = f"Bearer {token}" if isinstance(token, str) else client.ws.headers.get("authorization")
    principal = await authenticate(state, authorization, client.ws.headers.get(header) if header else None)
    if principal.role not in PERSON_ROLES:
        raise ApiError(403, f"role {principal.role!r} may only post alerts", error="Forbidden")
    client.principal = principal
    session_out = None
    run_id = _opt_str(msg, "run_id")
    session_id = _opt_str(msg, "session_id")
    if session_id is not None:
        session = await asyncio.to_thread(owned_session, state.store, principal, session_id)
        client.session_id = session.id
        session_out = SessionOut.of(session).model_dump(mode="json")
        if run_id is None:
            runs = await asyncio.to_thread(state.store.list_runs, session.id)
            run_id = runs[-1].id if runs else None
    if run_id is not None:
        run, session = await asyncio.to_thread(owned_run, state.store, principal, run_id)
        client.session_id = session.id
    client.send(
        {
            "type": "ready",
            "user": {"name": principal.name, "role": principal.role},
            "session": session_out,
            "run_id": run_id,
            "model": state.service.model_name,
        }
    )
    if run_id is not None:
        client.follow(run_id, _seq(msg))


async def _query(client: Client, msg: dict[str, Any]) -> None:
    assert client.principal is not None
    fields = {k: v for k, v in msg.items() if k != "type"}
    try:
        body = RunCreate.model_validate(fields)
    except ValidationError as exc:
        raise UserError(f"invalid query: {exc.errors()[0]['msg']} at {exc.errors()[0]['loc']}") from None
    accepted = await start_question(
        client.state, client.principal, body, body.session_id or client.session_id
    )
    client.session_id = accepted.session_id
    client.send({"type": "accepted", "session_id": accepted.session_id, "run_id": accepted.run_id})
    client.follow(accepted.run_id, 0)


async def _cancel(client: Client, msg: dict[str, Any]) -> None:
    assert client.principal is not None
    run_id = _opt_str(msg, "run_id") or client.run_id
    if run_id is None:
        raise UserError("no run to cancel", hint="send run_id, or start one with query")
    await asyncio.to_thread(owned_run, client.state.store, client.principal, run_id)
    ok = client.state.service.cancel(run_id)
    client.send({"type": "cancel_requested", "run_id": run_id, "ok": ok})


async def _answer(client: Client, msg: dict[str, Any]) -> None:
    assert client.principal is not None
    session_id = _opt_str(msg, "session_id") or client.session_id
    if session_id is None:
        raise UserError("no session to answer", hint="send session_id")
    fields = {k: msg[k] for k in ("call_ids", "reason", "confirm") if k in msg}
    try:
        answer = ApprovalAnswer.model_validate({"decision": msg["type"], **fields})
    except ValidationError as exc:
        raise UserError(f"invalid {msg['type']}: {exc.errors()[0]['msg']}") from None
    accepted = await answer_pending(client.state, client.principal, session_id, answer)
    client.send({"type": "accepted", "session_id": accepted.session_id, "run_id": accepted.run_id})
    client.follow(accepted.run_id, 0)


async def _plan(client: Client, msg: dict[str, Any]) -> None:
    assert client.principal is not None
    session_id = _opt_str(msg, "session_id") or client.session_id
    if session_id is None:
        raise UserError("no session whose plan to decide", hint="send session_id")
    fields = {k: msg[k] for k in ("decision", "text") if k in msg}
    try:
        answer = PlanAnswer.model_validate(fields)
    except ValidationError as exc:
        raise UserError(
            f"invalid plan: {exc.errors()[0]['msg']}", hint='{"type": "plan", "decision": "approve"}'
        ) from None
    accepted = await answer_plan(client.state, client.principal, session_id, answer)
    client.send({"type": "accepted", "session_id": accepted.session_id, "run_id": accepted.run_id})
    client.follow(accepted.run_id, 0)


async def _subscribe(client: Client, msg: dict[str, Any]) -> None:
    assert client.principal is not None
    run_id = _opt_str(msg, "run_id")
    if run_id is None:
        raise UserError("subscribe needs run_id", hint="the run_id of a lagged message, or of accepted")
    _run, session = await asyncio.to_thread(owned_run, client.state.store, client.principal, run_id)
    client.session_id = session.id
    client.follow(run_id, _seq(msg))


async def _ping(client: Client, msg: dict[str, Any]) -> None:
    client.send({"type": "pong", "ts": time.time()})


HANDLERS = {
    "init": _init,
    "query": _query,
    "cancel": _cancel,
    "approve": _answer,
    "deny": _answer,
    "plan": _plan,
    "subscribe": _subscribe,
    "ping": _ping,
}


def _opt_str(msg: dict[str, Any], key: str) -> str | None:
    value = msg.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise UserError(f"{key} must be a non-empty string")
    return value


def _seq(msg: dict[str, Any]) -> int:
    value = msg.get("last_seq", 0)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise UserError(
            "last_seq must be a whole number, 0 or more", hint="the seq of the last event you got"
        )
    return value


@router.websocket("/ws")
async def websocket(ws: WebSocket) -> None:
    """One interactive client."""
    state = service_state(ws)
    await ws.accept()
    client = Client(ws, state)
    state.ws_clients.add(client)
    state.metrics.ws_clients.inc()
    sender = asyncio.create_task(client.sender(), name="ws-sender")
    overload = asyncio.create_task(client.overloaded.wait(), name="ws-overload")
    try:
        await _receive_loop(client, overload)
    finally:
        sender.cancel()
        overload.cancel()
        await client.close()
        state.ws_clients.discard(client)
        state.metrics.ws_clients.dec()


async def _receive_loop(client: Client, overload: asyncio.Task[bool]) -> None:
    ws = client.ws
    while True:
        timeout = INIT_TIMEOUT_S if client.principal is None else None
        receive = asyncio.ensure_future(ws.receive_text())
        done, _ = await asyncio.wait(
            {receive, overload}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if overload in done:
            receive.cancel()
            await ws.close(CLOSE_OVERLOAD, "the client does not read its messages")
            return
        if receive not in done:
            receive.cancel()
            await ws.close(CLOSE_POLICY, "send init with a token first")
            return
        try:
            raw = receive.result()
        except WebSocketDisconnect:
            return
        try:
            message = json.loads(raw)
        except json.JSONDecodeError:
            client.send(
                {"type": "problem", "request": None, **problem_dict(UserError("a message must be JSON"))}
            )
            continue
        kind = message.get("type") if isinstance(message, dict) else None
        try:
            if not isinstance(message, dict):
                raise UserError("a message is a JSON object with a type", hint='{"type": "ping"}')
            await client.handle(message)
        except (DevOpsAgentError, ApiError) as exc:
            client.send({"type": "problem", "request": kind, **problem_dict(exc)})
            if isinstance(exc, ApiError) and exc.status == 401 and client.principal is None:
                await asyncio.sleep(0.05)  # let the problem go out first
                await ws.close(CLOSE_POLICY, "authentication failed")
                return
        except Exception as exc:  # a bug must not end the connection silently
            log.exception("ws_message_failed", request=kind)
            client.send({"type": "problem", "request": kind, **problem_dict(exc)})
