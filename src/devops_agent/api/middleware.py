"""ASGI middleware of the service: request size limit and JSON access log (one line per request).

Pure ASGI (not Starlette's BaseHTTPMiddleware) so that streaming responses (SSE) and WebSockets
pass through untouched. The access log names the user an endpoint authenticated (``user``) but
never a header, token or body.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import IO, Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from devops_agent.api.problems import MEDIA_TYPE


class BodyTooLarge(Exception):
    """A request body went past the limit while it was read."""


class BodyLimit:
    """Answer 413 for a request body over ``max_bytes`` (declared, or counted as it arrives)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._too_large(send)
            return
        seen = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except BodyTooLarge:
            if not started:
                await self._too_large(send)

    async def _too_large(self, send: Send) -> None:
        body = json.dumps(
            {
                "type": "about:blank",
                "title": "Content Too Large",
                "status": 413,
                "detail": f"the request body is over {self.max_bytes} bytes",
                "hint": "send less, or raise server.max_body_bytes",
                "error": "ContentTooLarge",
            }
        ).encode()
        headers = [(b"content-type", MEDIA_TYPE.encode()), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class AccessLog:
    """One JSON line per HTTP request or WebSocket session: method, path, status, duration, user."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        enabled: bool = True,
        out: IO[str] | None = None,
        count: Callable[[str, int], None] | None = None,
    ) -> None:
        self.app = app
        self.enabled = enabled
        self.out = out
        self.count = count

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        status = 0

        async def recording_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "websocket.accept":
                status = 101
            await send(message)

        try:
            await self.app(scope, receive, recording_send)
        except Exception:
            status = status or 500
            raise
        finally:
            self._write(scope, status, t0)

    def _write(self, scope: Scope, status: int, t0: float) -> None:
        if self.count is not None and scope["type"] == "http":
            self.count(scope.get("method", ""), status)
        if not self.enabled:
            return
        client = scope.get("client")
        line: dict[str, Any] = {
            "ts": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "event": "access",
            "method": scope.get("method", "WS"),
            "path": scope.get("path", ""),
            "status": status,
            "duration_ms": round((time.perf_counter() - t0) * 1000, 2),
            "user": (scope.get("state") or {}).get("user"),
            "client": client[0] if client else None,
        }
        out = self.out or sys.stderr
        out.write(json.dumps(line) + "\n")
        out.flush()
