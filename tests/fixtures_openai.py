"""A scripted OpenAI-compatible Chat Completions server on 127.0.0.1, for tests of the model path.

The code under test is the real pydantic-ai OpenAI provider (and the real ``openai`` SDK and
httpx under it) talking HTTP to this server, exactly as it would to vLLM, llama.cpp or a hosted
endpoint. Each test scripts the replies, one per ``POST /v1/chat/completions``, in order:

* :func:`text` and :func:`tool_calls` answer like a well-behaved server: as server-sent events
  when the request asks for ``stream: true``, as one JSON object otherwise, with token usage;
* :func:`status` answers an HTTP error (429, 500, 401, 404 …) with an OpenAI-style error body;
* :func:`hang` never answers (the handler waits until the server is stopped);
* ``ignore_stream=True`` on a reply sends the non-streamed JSON although ``stream: true`` was asked.

A reply may ``repeat`` (429 forever, a model that keeps calling a tool), and when the script is
used up the server answers 400 "script exhausted", so a test that expected fewer requests fails
loudly instead of hanging. Every request body is kept, parsed (:attr:`FakeOpenAI.requests`) and
as sent (:attr:`FakeOpenAI.bodies`): privacy tests search the raw bodies for values that must
never leave the machine.

It is a plain ``http.server`` on a thread: nothing outside the standard library, no network.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer. ``kind`` is ``text``, ``tools``, ``status`` or ``hang``."""

    kind: str
    content: str | Callable[[dict[str, Any]], str] = ""  # or made from the request it answers
    calls: list[tuple[str, str]] = field(default_factory=list)  # (tool name, arguments as sent)
    status_code: int = 200
    message: str = ""
    ignore_stream: bool = False
    repeat: bool = False
    usage: tuple[int, int] = (31, 7)  # prompt and completion tokens reported


def text(content: str | Callable[[dict[str, Any]], str], **kw: Any) -> Reply:
    """The model answers ``content`` (a function of the request body, when the answer must quote
    something only the request holds, such as a placeholder of a session made by a subprocess)."""
    return Reply("text", content=content, **kw)


def tool_calls(*calls: tuple[str, dict[str, Any] | str], **kw: Any) -> Reply:
    """The model calls tools; arguments given as a string are sent as they are (bad JSON too)."""
    sent = [(name, args if isinstance(args, str) else json.dumps(args)) for name, args in calls]
    return Reply("tools", calls=sent, **kw)


def status(code: int, message: str = "", **kw: Any) -> Reply:
    """The server answers HTTP ``code`` with an OpenAI-style error object."""
    return Reply("status", status_code=code, message=message or f"fake error {code}", **kw)


def hang(**kw: Any) -> Reply:
    """The server accepts the request and never answers."""
    return Reply("hang", **kw)


class FakeOpenAI:
    """Start with ``with FakeOpenAI([...]) as server:``; ``server.url`` is the base URL (``…/v1``)."""

    def __init__(self, replies: list[Reply], *, model: str = "fake-model") -> None:
        self.replies = list(replies)
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.bodies: list[str] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()  # releases hanging handlers
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def sent(self) -> str:
        """Every request body as sent, joined: what left the machine."""
        return "\n".join(self.bodies)

    def _next(self) -> Reply | None:
        with self._lock:
            if not self.replies:
                return None
            reply = self.replies[0]
            if not reply.repeat:  # a repeating reply answers every request from here on
                self.replies.pop(0)
            return reply

    # -- HTTP ---------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                return

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": fake.model, "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length).decode()
                with fake._lock:
                    fake.bodies.append(raw)
                    fake.paths.append(self.path)
                    fake.headers.append(dict(self.headers))
                    fake.requests.append(json.loads(raw) if raw else {})
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    # e.g. the Responses API (/v1/responses): this server speaks Chat Completions only
                    self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                request = fake.requests[-1]
                reply = fake._next()
                if reply is None:
                    self._json(400, {"error": {"message": "fake server: script exhausted", "type": "test"}})
                    return
                if reply.kind == "hang":
                    fake._stop.wait()
                    return
                if reply.kind == "status":
                    body = {
                        "error": {"message": reply.message, "type": "fake", "code": str(reply.status_code)}
                    }
                    self._json(reply.status_code, body)
                    return
                if callable(reply.content):
                    reply = dataclasses.replace(reply, content=reply.content(request))
                if request.get("stream") and not reply.ignore_stream:
                    self._sse(reply, request)
                else:
                    self._json(200, fake._completion(reply))

            def _json(self, code: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, reply: Reply, request: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
                for chunk in fake._chunks(reply, include_usage):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        return Handler

    # -- bodies -------------------------------------------------------------------------------

    def _base(self, obj: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{len(self.bodies)}",
            "object": obj,
            "created": int(time.time()),
            "model": self.model,
        }

    @staticmethod
    def _usage(reply: Reply) -> dict[str, int]:
        p, c = reply.usage
        return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}

    def _completion(self, reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": reply.content if reply.kind == "text" else None,
        }
        if reply.kind == "tools":
            message["tool_calls"] = [
                {
                    "id": f"call_{i}_{len(self.bodies)}",
                    "type": "function",
                    "function": {"name": n, "arguments": a},
                }
                for i, (n, a) in enumerate(reply.calls)
            ]
        finish = "tool_calls" if reply.kind == "tools" else "stop"
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return {**self._base("chat.completion"), "choices": [choice], "usage": self._usage(reply)}

    def _chunks(self, reply: Reply, include_usage: bool) -> Iterator[dict[str, Any]]:
        base = self._base("chat.completion.chunk")

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        yield chunk({"role": "assistant", "content": ""})
        if reply.kind == "text":
            words = str(reply.content).split(" ")
            for i, word in enumerate(words):
                yield chunk({"content": word if i == len(words) - 1 else word + " "})
        else:
            for i, (name, args) in enumerate(reply.calls):
                call_id = f"call_{i}_{len(self.bodies)}"
                yield chunk(
                    {"tool_calls": [{"index": i, "id": call_id, "type": "function",
                                     "function": {"name": name, "arguments": ""}}]}
                )  # fmt: skip
                yield chunk({"tool_calls": [{"index": i, "function": {"arguments": args}}]})
        yield chunk({}, "tool_calls" if reply.kind == "tools" else "stop")
        if include_usage:
            yield {**base, "choices": [], "usage": self._usage(reply)}
