"""One MCP server's connection: start it, keep it, notice when it dies, reconnect with backoff.

A :class:`ServerConnection` lives on the pool's event loop (:mod:`.pool`). It enters a pydantic-ai
``MCPToolset`` in a keeper task of its own (the MCP client's task groups must be entered and left
by the same task) and keeps it open across runs: one server process per configured server, not one
per call.

Its state is its circuit breaker:

* ``idle`` — never started; the first use starts it, waiting at most ``timeout_s``;
* ``ready`` — calls go through (breaker closed);
* ``down`` — it failed to start or stopped answering: calls fail at once with
  :class:`~devops_agent.errors.McpServerUnavailable` (breaker open) while a background task
  reconnects after 1 s, 2 s, 4 s … up to ``mcp.reconnect_max_s`` (each attempt is the half-open
  trial); a success closes the breaker;
* ``failed`` — it cannot start as configured (a variable it names is not set): no retry;
* ``closed`` — the pool was closed.

A server-reported error (``isError``) is the tool's answer, not a failure of the server. This
module must not import policies, agents or interfaces.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import anyio
import structlog
from fastmcp.client.transports import ClientTransport, SSETransport, StdioTransport, StreamableHttpTransport
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED
from mcp_types import Tool as McpTool
from pydantic_ai.mcp import MCPToolset

from devops_agent.config.mcp import McpServerSettings
from devops_agent.errors import ConfigError, McpServerUnavailable
from devops_agent.tools.mcp.config import ServerEntry, expand, expand_secrets

log = structlog.get_logger(__name__)

State = Literal["idle", "starting", "ready", "down", "failed", "closed"]
Transport = Literal["stdio", "http", "sse"]

_LOST = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError, RuntimeError)
"""What a call raises when the connection itself is gone (a stdio pipe closed, a socket reset);
``MCPError(CONNECTION_CLOSED)`` too. Other errors are the request's, not the server's death."""


def transport_of(settings: McpServerSettings) -> Transport:
    """How to reach the server: ``auto`` is stdio for a command, SSE for a URL ending in ``/sse``
    (the legacy transport's conventional path), else Streamable HTTP."""
    if settings.transport != "auto":
        return settings.transport
    if settings.command is not None:
        return "stdio"
    path = urlsplit(settings.url or "").path.rstrip("/")
    return "sse" if path.endswith("/sse") else "http"


def lost_connection(exc: BaseException) -> bool:
    """Whether ``exc`` (or every exception in its group) says the connection is gone."""
    if isinstance(exc, BaseExceptionGroup):
        return all(lost_connection(e) for e in exc.exceptions)
    if isinstance(exc, MCPError):
        return exc.code == CONNECTION_CLOSED
    name = type(exc).__name__
    # httpx / httpx2 transport errors (an HTTP server went away) without importing either family
    return isinstance(exc, _LOST) or name.endswith(("ConnectError", "ReadError", "RemoteProtocolError"))


@dataclass(frozen=True)
class ServerStatus:
    """What ``devops-agent mcp list``, ``doctor`` and the breaker table show of a server."""

    name: str
    source: str
    transport: Transport
    state: State
    enabled: bool
    profiles: tuple[str, ...]
    exclusive: bool
    tools: int | None
    error: str | None
    connects: int
    failures: int
    retry_in_s: float | None
    start_ms: float | None
    fallback: str | None
    log_file: str | None

    @property
    def breaker(self) -> Literal["closed", "open", "half_open"]:
        """The server's breaker: closed when it answers, half-open while a reconnect is tried."""
        if self.state == "ready":
            return "closed"
        return "half_open" if self.state == "starting" and self.connects else "open"

    def to_dict(self) -> dict[str, Any]:
        data = {k: getattr(self, k) for k in self.__dataclass_fields__}
        data["profiles"] = list(self.profiles)
        data["breaker"] = self.breaker
        return data


class ServerConnection:
    """One configured server on the pool's loop (see the module docstring for its states)."""

    def __init__(
        self,
        entry: ServerEntry,
        *,
        log_dir: Path | None,
        call_timeout_s: float,
        backoff_max_s: float,
        backoff_base_s: float = 1.0,
        on_change: Callable[[ServerConnection], None] | None = None,
    ) -> None:
        self.entry = entry
        self.name = entry.name
        self.settings = entry.settings
        self.transport: Transport = transport_of(entry.settings)
        self.log_file = (log_dir / f"{entry.name}.log") if log_dir is not None else None
        self.call_timeout_s = call_timeout_s
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.on_change = on_change
        self.state: State = "idle" if entry.settings.enabled else "closed"
        self.tools: list[McpTool] | None = None
        """The server's tools as last listed; kept while it is down, so its tools can say so."""
        self.error: str | None = None if entry.settings.enabled else "disabled in the config"
        self.connects = 0
        self.failures = 0
        self.start_ms: float | None = None
        self._retry_at = 0.0
        self._toolset: MCPToolset[Any] | None = None
        self._keeper: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._reconnector: asyncio.Task[None] | None = None
        self._lock: asyncio.Lock | None = None
        self._retiring: set[asyncio.Task[None]] = set()

    # -- state ----------------------------------------------------------------------------------

    def retry_in(self) -> float | None:
        """Seconds until the next reconnect attempt of a server that is down."""
        return max(0.0, self._retry_at - time.monotonic()) if self.state == "down" else None

    def status(self) -> ServerStatus:
        s = self.settings
        return ServerStatus(
            name=self.name,
            source=self.entry.source,
            transport=self.transport,
            state=self.state,
            enabled=s.enabled,
            profiles=tuple(s.profiles),
            exclusive=s.exclusive,
            tools=len(self.tools) if self.tools is not None else None,
            error=self.error,
            connects=self.connects,
            failures=self.failures,
            retry_in_s=round(r, 1) if (r := self.retry_in()) is not None else None,
            start_ms=self.start_ms,
            fallback=s.fallback,
            log_file=str(self.log_file) if self.log_file is not None else None,
        )

    def _changed(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change(self)
            except Exception as exc:  # a listener (the breaker table) must not break the connection
                log.warning("mcp_listener_failed", server=self.name, error=repr(exc))

    def _down(self, reason: str) -> None:
        self.failures += 1
        delay = min(self.backoff_base_s * 2 ** (self.failures - 1), self.backoff_max_s)
        self._retry_at = time.monotonic() + delay
        self.state, self.error = "down", reason
        log.info("mcp_server_down", server=self.name, reason=reason, retry_in_s=round(delay, 1))
        self._changed()
        if self._reconnector is None or self._reconnector.done():
            self._reconnector = asyncio.get_running_loop().create_task(self._reconnect_loop())

    # -- connecting -----------------------------------------------------------------------------

    def _build(self) -> MCPToolset[Any]:
        """The pydantic-ai toolset for this server, variables expanded now; ``ConfigError`` when
        one is not set."""
        s = self.settings
        transport: ClientTransport
        if self.transport == "stdio":
            assert s.command is not None
            if self.log_file is not None:
                self.log_file.parent.mkdir(parents=True, exist_ok=True)
            transport = StdioTransport(
                expand(s.command),
                [expand(a) for a in s.args],
                env=expand_secrets(s.env) or None,
                cwd=expand(s.cwd) if s.cwd else None,
                keep_alive=False,  # the process ends with the connection, not with the interpreter
                log_file=self.log_file,
            )
        else:
            assert s.url is not None
            kind = SSETransport if self.transport == "sse" else StreamableHttpTransport
            transport = kind(expand(s.url), headers=expand_secrets(s.headers) or None)
        return MCPToolset(
            transport,
            id=self.name,
            tool_error_behavior="error",
            init_timeout=s.timeout_s,
            read_timeout=self.call_timeout_s,
        )

    def _stderr_tail(self, since: int) -> str:
        """The last line the server wrote to stderr since byte ``since`` of its log (why it died)."""
        if self.log_file is None or not self.log_file.is_file():
            return ""
        with self.log_file.open("rb") as fh:
            fh.seek(since)
            lines = [
                ln.strip() for ln in fh.read(64_000).decode("utf-8", "replace").splitlines() if ln.strip()
            ]
        return f" (stderr: {lines[-1][:300]})" if lines else ""

    async def _connect(self) -> None:
        """One attempt to start the server and list its tools within ``timeout_s``."""
        self.state = "starting"
        self._changed()
        started = time.monotonic()
        since = self.log_file.stat().st_size if self.log_file is not None and self.log_file.is_file() else 0
        try:
            toolset = self._build()
        except ConfigError as exc:
            self.state, self.error = "failed", f"{exc.message} ({exc.hint})" if exc.hint else exc.message
            self._changed()
            return
        except (ValueError, OSError) as exc:
            self.state, self.error = "failed", f"cannot be configured: {exc}"
            self._changed()
            return
        ready, stop = asyncio.Event(), asyncio.Event()

        async def keep() -> None:
            async with toolset:
                ready.set()
                await stop.wait()

        keeper = asyncio.get_running_loop().create_task(keep(), name=f"mcp-{self.name}")
        deadline = started + self.settings.timeout_s
        try:
            waiter = asyncio.get_running_loop().create_task(ready.wait())
            await asyncio.wait(
                {keeper, waiter}, timeout=self.settings.timeout_s, return_when="FIRST_COMPLETED"
            )
            waiter.cancel()
            if not ready.is_set():
                raise keeper.exception() or RuntimeError("exited") if keeper.done() else TimeoutError()
            tools = await asyncio.wait_for(toolset.list_tools(), max(0.1, deadline - time.monotonic()))
        except (Exception, asyncio.CancelledError) as exc:
            # The caller is not kept waiting while the client gives up (a stdio process that does
            # not exit is terminated after a grace period); close() waits for it.
            self._retire(keeper, stop)
            if isinstance(exc, asyncio.CancelledError):
                raise
            if isinstance(exc, TimeoutError):
                reason = f"did not start within {self.settings.timeout_s:g}s"
            else:
                reason = f"could not start: {_describe(exc)}"
            self._down(reason + self._stderr_tail(since))
            return
        self._toolset, self._keeper, self._stop = toolset, keeper, stop
        self.tools, self.error = tools, None
        self.state, self.failures = "ready", 0
        self.connects += 1
        self.start_ms = round((time.monotonic() - started) * 1000, 1)
        log.info("mcp_server_ready", server=self.name, tools=len(tools), start_ms=self.start_ms)
        self._changed()

    def _retire(self, keeper: asyncio.Task[None] | None, stop: asyncio.Event | None) -> None:
        """Stop a keeper in the background; :meth:`close` waits for what is still stopping."""
        task = asyncio.get_running_loop().create_task(self._stop_keeper(keeper, stop))
        self._retiring.add(task)
        task.add_done_callback(self._retiring.discard)

    async def _stop_keeper(self, keeper: asyncio.Task[None] | None, stop: asyncio.Event | None) -> None:
        """Let the keeper leave the client, which ends the connection (and a stdio process) in the
        task that opened it. Cancelling it is the last resort: a client cancelled while it connects
        may leave its process behind, so it gets the time its own handshake timeout needs first."""
        if stop is not None:
            stop.set()
        if keeper is None:
            return
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(keeper), self.settings.timeout_s + 5.0)
        if not keeper.done():
            keeper.cancel()
            with contextlib.suppress(BaseException):
                await keeper

    def _lock_for_loop(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def ensure(self) -> bool:
        """Whether the server is ready; a server never started is started now (within its timeout).
        A server that is down is not retried here: its reconnect task does that, with backoff."""
        if self.state == "idle":
            async with self._lock_for_loop():
                if self.state == "idle":
                    await self._connect()
        return self.state == "ready"

    async def _reconnect_loop(self) -> None:
        while self.state == "down":
            await asyncio.sleep(max(0.0, self._retry_at - time.monotonic()))
            async with self._lock_for_loop():
                if self.state == "down":
                    await self._connect()

    # -- calling --------------------------------------------------------------------------------

    def unavailable(self, tool: str) -> McpServerUnavailable:
        """The error a call to ``tool`` gets while the server cannot be used."""
        reason = self.error or "not started"
        return McpServerUnavailable(self.name, tool, reason, retry_after_s=self.retry_in())

    async def call(self, tool: str, args: dict[str, Any]) -> Any:
        """Call ``tool`` (the server's own name): its mapped result, or the server's error raised as
        fastmcp's ``ToolError``. Raises :class:`McpServerUnavailable` when the server is down or
        dies during the call (it is then marked down and reconnected in the background)."""
        if not await self.ensure():
            raise self.unavailable(tool)
        toolset = self._toolset
        assert toolset is not None
        try:
            return await toolset.direct_call_tool(tool, args)
        except Exception as exc:
            if not lost_connection(exc):
                raise
            if self.state == "ready" and self._toolset is toolset:
                self._toolset, keeper, stop = None, self._keeper, self._stop
                self._down(f"stopped answering: {_describe(exc)}")
                self._retire(keeper, stop)
            raise self.unavailable(tool) from exc

    async def close(self) -> None:
        """Stop the server (the keeper leaves the client, which ends a stdio process)."""
        self.state = "closed"
        if self._reconnector is not None:
            self._reconnector.cancel()
            with contextlib.suppress(BaseException):
                await self._reconnector
        await self._stop_keeper(self._keeper, self._stop)
        self._toolset = self._keeper = self._stop = None
        if self._retiring:
            await asyncio.gather(*self._retiring, return_exceptions=True)


def _describe(exc: BaseException) -> str:
    """A one-line reason from an exception (a group's first leaf)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip() or type(exc).__name__
    return text if type(exc).__name__ in text else f"{type(exc).__name__}: {text}"
