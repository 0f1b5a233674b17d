"""A real service for tests: the app under uvicorn on 127.0.0.1 (a free port), in a thread, with
users made the way ``devops-agent users add`` makes them, and a small tool registry.

Tests talk to it with real clients (httpx, websockets) over TCP, exactly as any client would.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import StringIO
from typing import Any

import httpx
import psutil
from websockets.sync.client import ClientConnection, connect

from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.api.app import create_app
from devops_agent.api.server import ApiServer, server_config
from devops_agent.api.tokens import new_token, token_hash
from devops_agent.config import Settings
from devops_agent.store import Store
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry
from devops_agent.tools.shell import run_command

SLEEP_MARKER = "37.25"
"""The argument of the test's ``sleep``: finds exactly that process among the machine's."""

ROLES = {"alice": "operator", "bob": "operator", "carol": "admin", "vic": "viewer", "am": "alerts"}


def registry() -> ToolRegistry:
    """Tools of every kind the gate tells apart, cheap to run."""

    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("svc", "tools for the service tests")

        @ts.tool(read_only=True)
        def probe(name: str) -> ToolResult:
            """Read a probe."""
            return ToolResult.ok({"probe": name})

        @ts.tool(read_only=True)
        async def wait_sleep() -> ToolResult:
            """Run a real `sleep` in its own process group (the shell tool's runner)."""
            return await run_command(f"sleep {SLEEP_MARKER}", cwd=None, timeout_s=60, max_bytes=1000)

        @ts.tool(read_only=True)
        async def short_sleep() -> ToolResult:
            """A step that takes a second (a real `sleep 1`)."""
            return await run_command("sleep 1", cwd=None, timeout_s=60, max_bytes=1000)

        @ts.tool(read_only=False, risk="sensitive")
        def restart(service: str) -> ToolResult:
            """Restart a service (mutating: needs approval)."""
            return ToolResult.ok({"restarted": service})

        @ts.tool(read_only=False, risk="destructive")
        def wipe(path: str) -> ToolResult:
            """Delete a path (destructive: needs an admin and CONFIRM)."""
            return ToolResult.ok({"wiped": path})

        return ts

    reg = ToolRegistry()
    reg.add_toolset("svc", build)
    return reg


def scripted(
    runs: list[list[dict[str, Any]]] | None = None, turns: list[dict[str, Any]] | None = None
) -> ScriptedModel:
    data: dict[str, Any] = {"runs": runs} if runs is not None else {"turns": turns or []}
    return ScriptedModel(Script.model_validate(data))


PROBE_TURNS = [
    {"tool_calls": [{"tool": "probe", "args": {"name": "a"}}]},
    {"tool_calls": [{"tool": "probe", "args": {"name": "b"}}]},
    {"text": "Looked at {tool_count} probes and found nothing wrong with them."},
]


@dataclass
class Service:
    """A running service: its URL, store, app and one token per user of :data:`ROLES`."""

    url: str
    store: Store
    app: Any
    server: ApiServer
    tokens: dict[str, str] = field(default_factory=dict)
    access_log: StringIO = field(default_factory=StringIO)

    @property
    def ws_url(self) -> str:
        return self.url.replace("http://", "ws://") + "/v1/ws"

    def client(self, user: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[user]}"} if user else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def ws(self, user: str | None = None, *, slow: bool = False, **init: Any) -> WsClient:
        """A WebSocket client (``init`` sent when ``user`` is given). ``slow``: a client whose socket
        takes almost nothing in until it reads, so the server feels a client that does not read."""
        sock = None
        if slow:
            host, port = self.url.removeprefix("http://").split(":")
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: no autotuning
            sock.connect((host, int(port)))
        # websockets 17 wants connect() entered as a context manager; WsClient leaves it.
        # A slow client asks for no compression: compressed, a whole run fits in the kernel's buffers.
        manager = connect(
            self.ws_url,
            open_timeout=10,
            max_size=2**24,
            max_queue=1 if slow else 16,
            sock=sock,
            compression=None if slow else "deflate",
        )
        client = WsClient(manager.__enter__(), manager)
        if user is not None:
            client.send({"type": "init", "token": self.tokens[user], **init})
        return client

    def wait_run(self, user: str, run_id: str, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.client(user) as c:
            while time.monotonic() < deadline:
                run = c.get(f"/v1/runs/{run_id}").json()
                if run["status"] != "running":
                    return dict(run)
                time.sleep(0.05)
        raise AssertionError(f"run {run_id} still running after {timeout}s")


@dataclass
class WsClient:
    conn: ClientConnection
    manager: Any = None

    def send(self, message: dict[str, Any]) -> None:
        self.conn.send(json.dumps(message))

    def recv(self, timeout: float = 20) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.conn.recv(timeout=timeout))
        return data

    def until(self, kind: str, timeout: float = 30) -> list[dict[str, Any]]:
        """Every message up to and including the first of type ``kind``."""
        got: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while True:
            message = self.recv(timeout=max(0.1, deadline - time.monotonic()))
            got.append(message)
            if message["type"] == kind:
                return got

    def close(self) -> None:
        if self.manager is not None:
            self.manager.__exit__(None, None, None)
        else:
            self.conn.close()

    def __enter__(self) -> WsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def running_service(
    store_url: str,
    *,
    model: Any = None,
    settings: Settings | None = None,
    registry_: ToolRegistry | None = None,
    users: dict[str, str] | None = None,
    tokens: dict[str, str] | None = None,
) -> Iterator[Service]:
    """The service on a free port until the block ends (then shut down the way SIGTERM does)."""
    settings = settings or Settings(database_url=store_url)
    store = Store(store_url)
    tokens = dict(tokens or {})  # tokens of users already in the store (a restarted service)
    for name, role in (ROLES if users is None else users).items():
        token = new_token()
        store.create_user(name, role, token_hash(token))
        tokens[name] = token
    log = StringIO()
    app = create_app(
        settings,
        store=store,
        model=model,
        registry=registry_ or registry(),
        use_configured_model=False,
        access_log=log,
    )
    server = ApiServer(server_config(app, settings, host="127.0.0.1", port=0), app)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the service did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    service = Service(f"http://127.0.0.1:{port}", store, app, server, tokens, log)
    try:
        yield service
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        store.close()


def _sleeps() -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info.get("cmdline") or []
        if cmd[:1] == ["sleep"] and SLEEP_MARKER in cmd:
            found.append(proc)
    return found


def _wait_for(predicate: Any, timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False
