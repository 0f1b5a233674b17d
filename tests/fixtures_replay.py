"""Recorded vendor responses on 127.0.0.1, served by pytest-httpserver, for integrations that
cannot run on a test machine (Jira, Jenkins, GitHub, Docker Engine, Confluence, the Kubernetes API).

Tests point the *real* client libraries (``jira``, ``python-jenkins``, ``kubernetes``, ``docker``,
``requests``, ``httpx``) at a :class:`ReplayServer`: a ``pytest_httpserver.HTTPServer`` whose
expectations answer with fixture files copied from the vendors' published API examples
(``replay/fixtures``, sources in ``SOURCES.md`` there). What this module adds to the library is a
lookup table's worth of conveniences, and it must stay that: no vendor logic.

* :meth:`ReplayServer.add` loads a fixture file (or a body) into an expectation; ``query`` matches a
  subset of the query string; ``times=N`` makes it N one-shot expectations (scripted errors: 401,
  429 with Retry-After, 500 ...), which pytest-httpserver tries before the permanent ones.
* :meth:`ReplayServer.require_basic` answers 401 to any request without exactly those HTTP Basic
  credentials, as the real servers do.
* :attr:`ReplayServer.requests` is ``httpserver.log`` seen as :class:`Recorded` (headers included,
  so tests can assert what auth the client sent).
* ``delay_s`` and :meth:`ReplayServer.add_prefix` hold answers (a slow server); :meth:`watch`
  gauges requests in flight, for the concurrency tests.

Unlike pytest-httpserver's default, a request no expectation matches gets a 404 (clients map it
to "not found"), and the server answers requests in threads (``threaded=True``).
"""

from __future__ import annotations

import base64
import json
import logging
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from pytest_httpserver import HTTPServer
from pytest_httpserver.httpserver import QueryMatcher, RequestHandler
from werkzeug import Request, Response

FIXTURES = Path(__file__).parent / "replay" / "fixtures"

# werkzeug's development server logs every request at INFO on a stderr handler of its own; the
# benchmarks that run this server print their figures there.
logging.getLogger("werkzeug").setLevel(logging.WARNING)

_AT = "replay.at"
"""The ``environ`` key holding when a request arrived (``time.time()``)."""


@dataclass(frozen=True)
class Recorded:
    """One request the server received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    """Lower-cased names."""
    body: bytes
    at: float
    """When the request arrived (``time.time()``)."""

    @classmethod
    def of(cls, request: Request) -> Recorded:
        return cls(
            request.method,
            request.path,
            request.args.to_dict(flat=False),
            {k.lower(): v for k, v in request.headers.items()},
            request.get_data(),
            float(request.environ.get(_AT, 0.0)),
        )

    def json(self) -> Any:
        return json.loads(self.body)


class QuerySubset(QueryMatcher):
    """Matches a request whose query has these values (other parameters may be present too)."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = dict(values)

    def get_comparing_values(self, request_query_string: bytes) -> tuple[Any, Any]:
        sent = parse_qs(request_query_string.decode(), keep_blank_values=True)
        return {k: sent.get(k, [None])[0] for k in self.values}, self.values


def _is_prefix(handler: RequestHandler) -> bool:
    return isinstance(handler.matcher.uri, re.Pattern)


class ReplayServer(HTTPServer):
    """pytest-httpserver on 127.0.0.1 with recorded answers; ``with ReplayServer() as srv``."""

    def __init__(self, fixtures: Path = FIXTURES) -> None:
        super().__init__(host="127.0.0.1", port=0, threaded=True)
        self.fixtures = fixtures
        self.basic_auth: tuple[str, str] | None = None
        self.unauthorized = Response(
            b'{"errorMessages":["Unauthorized"]}', 401, content_type="application/json"
        )
        self.delay_s = 0.0
        """Hold every answer this long (a slow server)."""
        self.delays: dict[tuple[str, str], float] = {}
        """Hold answers to ``(method, path prefix)`` this long (:meth:`add_prefix`)."""
        self.inflight: dict[str, int] = {}
        self.peak: dict[str, int] = {}
        """Most requests in flight at once, per :meth:`watch` prefix."""
        # One request at a time picks its expectation (a one-shot one must answer once); the
        # delays are held outside it, so slow answers still overlap.
        self._pick = threading.Lock()
        self._gauge = threading.Lock()

    # -- configuration -------------------------------------------------------------------
    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        return self.url_for("/").rstrip("/")

    def _response(
        self, fixture: str | None, body: bytes | str | Any, status: int, headers: dict[str, str] | None
    ) -> Response:
        if fixture is not None:
            data = (self.fixtures / fixture).read_bytes()
            ctype = "application/json" if fixture.endswith(".json") else "text/plain;charset=UTF-8"
        elif isinstance(body, bytes):
            data, ctype = body, "application/octet-stream"
        elif isinstance(body, str):
            data, ctype = body.encode(), "text/plain;charset=UTF-8"
        else:
            data, ctype = json.dumps(body).encode(), "application/json"
        return Response(data, status, headers={"Content-Type": ctype, **(headers or {})})

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
        first: bool = False,
    ) -> None:
        """Answer ``method path`` (the decoded path, without the query) with a fixture or a body.

        ``times=N``: N one-shot answers, used before the permanent ones; ``first``: this permanent
        answer before those added earlier for the same request (an override).
        """
        response = self._response(fixture, body, status, headers)
        matcher = QuerySubset(query) if query else None
        if times is not None:
            for _ in range(times):
                self.expect_oneshot_request(path, method.upper(), query_string=matcher).respond_with_response(
                    response
                )
            return
        handler = self.expect_request(path, method.upper(), query_string=matcher)
        handler.respond_with_response(response)
        if first:
            self.handlers.remove(handler)
            self.handlers.insert(0, handler)
        self.handlers.sort(key=_is_prefix)  # exact paths before prefixes, in the order given

    def add_prefix(self, method: str, prefix: str, *, fixture: str, delay_s: float = 0.0) -> None:
        """Answer every ``method`` request whose path starts with ``prefix`` (and matches no exact
        path) with ``fixture``, held ``delay_s``: one answer for many generated job names."""
        uri = re.compile(re.escape(prefix))
        self.expect_request(uri, method.upper()).respond_with_response(
            self._response(fixture, b"", 200, None)
        )
        self.delays[(method.upper(), prefix)] = delay_s

    def drop_prefixes(self) -> None:
        """Forget the :meth:`add_prefix` answers."""
        self.handlers[:] = [h for h in self.handlers if not _is_prefix(h)]
        self.delays.clear()

    def fail_next(
        self, method: str, path: str, status: int, *, times: int = 1, headers: dict[str, str] | None = None
    ) -> None:
        """Script an error for the next ``times`` requests to ``method path``."""
        body = {"errorMessages": [f"scripted {status}"], "errors": {}}
        self.add(method, path, body=body, status=status, headers=headers, times=times)

    def require_basic(self, user: str, password: str) -> None:
        """Answer :attr:`unauthorized` to any request without exactly these HTTP Basic credentials."""
        self.basic_auth = (user, password)

    def watch(self, prefix: str) -> None:
        """Count requests in flight under ``prefix``; :attr:`peak` keeps the most at once."""
        with self._gauge:
            self.inflight.setdefault(prefix, 0)
            self.peak.setdefault(prefix, 0)

    def reset(self) -> None:
        """Forget answers, recorded requests and auth (between tests sharing one server)."""
        self.clear()
        self.basic_auth = None

    # -- what was asked ------------------------------------------------------------------
    @property
    def requests(self) -> list[Recorded]:
        """Every request received, in order (a copy of ``log``)."""
        return [Recorded.of(request) for request, _ in list(self.log)]

    def requests_to(self, path_prefix: str, method: str | None = None) -> list[Recorded]:
        return [
            r
            for r in self.requests
            if r.path.startswith(path_prefix) and (method is None or r.method == method)
        ]

    def count(self, path: str) -> int:
        """How many requests asked for exactly ``path``."""
        return sum(1 for r in self.requests if r.path == path)

    # -- pytest-httpserver hooks ---------------------------------------------------------
    def application(self, request: Request) -> Response:
        request.environ[_AT] = time.time()
        with self._gauge:
            watched = [p for p in self.inflight if request.path.startswith(p)]
            for p in watched:
                self.inflight[p] += 1
                self.peak[p] = max(self.peak[p], self.inflight[p])
        try:
            held = self.delay_s + max(
                (
                    s
                    for (m, p), s in self.delays.items()
                    if m == request.method and request.path.startswith(p)
                ),
                default=0.0,
            )
            if held:
                time.sleep(held)
            return super().application(request)
        finally:
            with self._gauge:
                for p in watched:
                    self.inflight[p] -= 1

    def dispatch(self, request: Request) -> Response:
        if self.basic_auth is not None:
            user, password = self.basic_auth
            expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
            if request.headers.get("Authorization") != expected:
                return self.unauthorized
        with self._pick:
            return super().dispatch(request)

    def respond_nohandler(self, request: Request, extra_message: str = "") -> Response:
        message = f"no replay route for {request.method} {request.path}"
        self.add_assertion(message)  # pytest-httpserver's check_assertions() reports it
        return Response(json.dumps({"errorMessages": [message]}), 404, content_type="application/json")

    def start(self) -> None:
        super().start()
        if self.server_thread is not None:
            self.server_thread.name = "replay-server"  # tests that count leftover threads know it

    def stop(self) -> None:
        server = self.server
        super().stop()
        if server is not None:
            server.server_close()  # the listening socket, else a ResourceWarning when collected
