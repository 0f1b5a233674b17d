"""A tiny HTTP replay server on 127.0.0.1 for integrations that cannot run on a test machine.

Jira and Jenkins cannot run here, so tests point the *real* client libraries (``jira``,
``python-jenkins``) at this server. It maps ``(method, raw path, query subset)`` to a canned
``(status, headers, body)``, where bodies are fixture files copied from the vendors' published
API examples (see ``fixtures/SOURCES.md``). It records every request (headers included, so tests
can assert what auth the client sent), can require HTTP Basic credentials like the real servers,
and can be scripted to answer the next N matching requests with an error (401, 429 with
Retry-After, 500 ...). It must stay a dumb lookup table: no vendor logic beyond that.
"""

from __future__ import annotations

import base64
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    at: float = 0.0
    """When the request arrived (``time.time()``)."""

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    """Only match requests whose query has these values (a subset match)."""
    times: int | None = None
    """Answer this many matching requests, then step aside (``None``: forever)."""
    delay_s: float = 0.0
    """Hold the answer this long (a slow server: lets tests see concurrent requests)."""


class ReplayServer:
    """Routes → replies; start with ``with ReplayServer() as srv`` (or ``start()``/``stop()``)."""

    def __init__(self, fixtures: Path = FIXTURES) -> None:
        self.fixtures = fixtures
        self.routes: dict[tuple[str, str], list[Reply]] = {}
        self.requests: list[Recorded] = []
        self.basic_auth: tuple[str, str] | None = None
        self.unauthorized = Reply(
            401, b'{"errorMessages":["Unauthorized"]}', {"Content-Type": "application/json"}
        )
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.prefix_routes: list[tuple[str, str, Reply]] = []
        self.inflight: dict[str, int] = {}
        self.peak: dict[str, int] = {}
        """Most requests in flight at once, per ``watch`` prefix."""
        self.watched: list[str] = []

    # -- configuration -------------------------------------------------------------------
    def add(
        self,
        method: str,
        path: str,
        *,
        fixture: str | None = None,
        body: bytes | str | Any = b"",
        status: int = 200,
        headers: dict[str, str] | None = None,
        query: dict[str, str] | None = None,
        times: int | None = None,
    ) -> None:
        """Answer ``method path`` (raw, percent-encoded path without the query) with a reply.

        Scripted replies (``times`` set) are tried before permanent ones, newest first.
        """
        if fixture is not None:
            data = (self.fixtures / fixture).read_bytes()
            ctype = "application/json" if fixture.endswith(".json") else "text/plain;charset=UTF-8"
        elif isinstance(body, bytes):
            data, ctype = body, "application/octet-stream"
        elif isinstance(body, str):
            data, ctype = body.encode(), "text/plain;charset=UTF-8"
        else:
            data, ctype = json.dumps(body).encode(), "application/json"
        reply = Reply(status, data, {"Content-Type": ctype, **(headers or {})}, dict(query or {}), times)
        with self._lock:
            bucket = self.routes.setdefault((method.upper(), path), [])
            if times is not None:
                bucket.insert(0, reply)
            else:
                bucket.append(reply)

    def add_prefix(self, method: str, prefix: str, *, fixture: str, delay_s: float = 0.0) -> None:
        """Answer every ``method`` request whose path starts with ``prefix`` (and matches no exact
        route) with ``fixture``, held ``delay_s``: one route for many generated job names."""
        data = (self.fixtures / fixture).read_bytes()
        ctype = "application/json" if fixture.endswith(".json") else "text/plain;charset=UTF-8"
        with self._lock:
            self.prefix_routes.append(
                (method.upper(), prefix, Reply(200, data, {"Content-Type": ctype}, delay_s=delay_s))
            )

    def watch(self, prefix: str) -> None:
        """Count requests in flight under ``prefix``; :attr:`peak` keeps the most at once."""
        with self._lock:
            self.watched.append(prefix)
            self.inflight.setdefault(prefix, 0)
            self.peak.setdefault(prefix, 0)

    def fail_next(
        self, method: str, path: str, status: int, *, times: int = 1, headers: dict[str, str] | None = None
    ) -> None:
        """Script an error for the next ``times`` requests to ``method path``."""
        body = {"errorMessages": [f"scripted {status}"], "errors": {}}
        self.add(method, path, body=body, status=status, headers=headers, times=times)

    def require_basic(self, user: str, password: str) -> None:
        """Answer 401 to any request without exactly these HTTP Basic credentials."""
        self.basic_auth = (user, password)

    def requests_to(self, path_prefix: str, method: str | None = None) -> list[Recorded]:
        return [
            r
            for r in self.requests
            if r.path.startswith(path_prefix) and (method is None or r.method == method)
        ]

    # -- lifecycle -----------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> ReplayServer:
        handler = type("Handler", (_Handler,), {"replay": self})
        self._httpd = _Server(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="replay-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()  # joins handler threads (daemon_threads=False)
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset(self) -> None:
        """Forget routes, recorded requests and auth (between tests sharing one server)."""
        with self._lock:
            self.routes.clear()
            self.requests.clear()
            self.basic_auth = None

    # -- lookup --------------------------------------------------------------------------
    def _reply_for(self, rec: Recorded) -> Reply:
        if self.basic_auth is not None:
            user, password = self.basic_auth
            expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
            if rec.headers.get("authorization") != expected:
                return self.unauthorized
        with self._lock:
            for reply in self.routes.get((rec.method, rec.path), []):
                if any(rec.query.get(k, [None])[0] != v for k, v in reply.query.items()):
                    continue
                if reply.times is not None:
                    if reply.times <= 0:
                        continue
                    reply.times -= 1
                return reply
            for method, prefix, reply in self.prefix_routes:
                if method == rec.method and rec.path.startswith(prefix):
                    return reply
        body = json.dumps({"errorMessages": [f"no replay route for {rec.method} {rec.path}"]}).encode()
        return Reply(404, body, {"Content-Type": "application/json"})


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that went away mid-answer (a worker killed with SIGKILL in the worker tests) is
        # not the server's error; anything else is printed as usual.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    replay: ReplayServer
    protocol_version = "HTTP/1.1"

    def _serve(self) -> None:
        split = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        rec = Recorded(
            self.command,
            split.path,
            parse_qs(split.query, keep_blank_values=True),
            {k.lower(): v for k, v in self.headers.items()},
            body,
            time.time(),
        )
        replay = self.replay
        with replay._lock:
            replay.requests.append(rec)
            watched = [p for p in replay.watched if rec.path.startswith(p)]
            for p in watched:
                replay.inflight[p] += 1
                replay.peak[p] = max(replay.peak[p], replay.inflight[p])
        try:
            reply = replay._reply_for(rec)
            if reply.delay_s:
                time.sleep(reply.delay_s)
        finally:
            with replay._lock:
                for p in watched:
                    replay.inflight[p] -= 1
        self.send_response(reply.status)
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(reply.body)))
        # One request per connection, so stop() never waits on an idle keep-alive socket.
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply.body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass
