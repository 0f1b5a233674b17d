"""The MCP servers of a process: started once, shared by every run, reached from any event loop.

The CLI runs each question in its own ``asyncio.run`` (``chat`` runs many), the service runs all
of them in one loop, and an MCP client's session belongs to the loop that opened it. So the pool
keeps its servers on a loop of its own, in a daemon thread, and callers on any loop await work
there (:meth:`McpPool.run`). One server process per configured server serves every run until the
pool closes (at exit at the latest).

:meth:`McpPool.preload` starts servers in parallel, each bounded by its own ``timeout_s``: a server
that never starts costs its timeout, not the others'. :meth:`McpPool.in_scope` picks the servers a
run gets (global ones, and those of the profiles it names; exclusive ones only when named), and
:meth:`McpPool.toolsets` wraps them as toolsets for the run's pipeline. This module must not
import policies, agents or interfaces.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
import time
import weakref
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from pydantic_ai.toolsets import AbstractToolset

from devops_agent.config import Settings
from devops_agent.tools.mcp.config import ServerEntry
from devops_agent.tools.mcp.connection import ServerConnection, ServerStatus
from devops_agent.tools.mcp.toolset import GapLog, McpGroupToolset, McpServerToolset

T = TypeVar("T")

_POOLS: weakref.WeakSet[McpPool] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:  # server processes end with ours
    for pool in list(_POOLS):
        pool.close()


class McpPool:
    """The configured MCP servers of this process (see the module docstring)."""

    def __init__(
        self,
        settings: Settings,
        entries: Mapping[str, ServerEntry],
        *,
        log_dir: Path | None = None,
        backoff_base_s: float = 1.0,
        listener: Callable[[ServerStatus], None] | None = None,
    ) -> None:
        """Nothing starts until the first use. ``listener`` hears every state change (the session
        service persists the servers' breakers with it)."""
        self.settings = settings
        self.listener = listener
        self.servers: dict[str, ServerConnection] = {
            name: ServerConnection(
                entry,
                log_dir=log_dir if log_dir is not None else settings.data_dir / "mcp",
                call_timeout_s=settings.tools.timeout_s,
                backoff_max_s=settings.mcp.reconnect_max_s,
                backoff_base_s=backoff_base_s,
                on_change=self._notify,
            )
            for name, entry in entries.items()
        }
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        _POOLS.add(self)

    def _notify(self, conn: ServerConnection) -> None:
        if self.listener is not None:
            self.listener(conn.status())

    # -- the pool's own loop -------------------------------------------------------------------

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise RuntimeError("the MCP pool is closed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="devops-agent-mcp", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Run ``coro`` on the pool's loop; a concurrent future of its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._running_loop())

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` on the pool's loop from any other loop; cancelling this cancels it there."""
        return await asyncio.wrap_future(self.submit(coro))

    def run_sync(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Wait for ``coro`` on the pool's loop from synchronous code (the CLI)."""
        return self.submit(coro).result(timeout)

    # -- servers -------------------------------------------------------------------------------

    def enabled(self) -> list[ServerConnection]:
        return [c for c in self.servers.values() if c.settings.enabled]

    def in_scope(self, profiles: Iterable[str] = ()) -> list[ServerConnection]:
        """The enabled servers a run with ``profiles`` gets: global servers always; a server of
        profiles when the run names one of them, or when the run names none and the server is not
        ``exclusive`` (a general run gets every server not reserved for a specialist)."""
        wanted = set(profiles)
        chosen = []
        for conn in self.enabled():
            own = set(conn.settings.profiles)
            if not own or own & wanted or (not wanted and not conn.settings.exclusive):
                chosen.append(conn)
        return chosen

    def unknown_profiles(self, profiles: Iterable[str]) -> list[str]:
        """The profiles of ``profiles`` that no configured server names (a typo, most likely)."""
        known = {p for c in self.servers.values() for p in c.settings.profiles}
        return sorted(set(profiles) - known)

    async def preload(self, names: Sequence[str] | None = None) -> dict[str, ServerStatus]:
        """Start the enabled servers (or ``names``) at once, in parallel; each waits at most its
        own ``timeout_s``. Returns every server's status; a server that fails is reported, not
        raised (it reconnects in the background)."""
        await self.run(_gather_ensure([c for c in self.enabled() if names is None or c.name in names]))
        return {name: conn.status() for name, conn in self.servers.items()}

    def preload_sync(self, names: Sequence[str] | None = None) -> dict[str, ServerStatus]:
        """:meth:`preload` from synchronous code."""
        longest = max((c.settings.timeout_s for c in self.enabled()), default=0.0)
        future = self.submit(_gather_ensure([c for c in self.enabled() if names is None or c.name in names]))
        future.result(longest + 30)
        return {name: conn.status() for name, conn in self.servers.items()}

    def status(self) -> list[ServerStatus]:
        return [c.status() for c in self.servers.values()]

    def toolsets(
        self,
        profiles: Iterable[str] = (),
        *,
        gaps: GapLog | None = None,
        fallbacks: Mapping[str, AbstractToolset[Any]] | None = None,
        names: Sequence[str] | None = None,
        reserved: Iterable[str] = (),
    ) -> list[AbstractToolset[Any]]:
        """The servers in scope for one run (of them, only ``names`` when given) as one toolset:
        each server offers its tools (prefixed, filtered, rated), records in ``gaps`` what could not
        be used, and offers its fallback toolset (``fallbacks`` by server name) while it is
        unavailable. A tool whose name is ``reserved`` (ours) or taken by an earlier server is not
        offered. Empty when no server is in scope."""
        members = [
            McpServerToolset(self, conn, gaps=gaps, fallback=(fallbacks or {}).get(conn.name))
            for conn in self.in_scope(profiles)
            if names is None or conn.name in names
        ]
        return [McpGroupToolset(members, reserved=set(reserved))] if members else []

    def close(self, timeout: float = 10.0) -> None:
        """Stop every server and the pool's loop; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def stop_all() -> None:
            await asyncio.gather(*(c.close() for c in self.servers.values()), return_exceptions=True)

        if loop.is_running():
            started = time.monotonic()
            # shutting down: a server that would not stop in time is left to the OS
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(stop_all(), loop).result(timeout)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(max(0.1, timeout - (time.monotonic() - started)))
        if not loop.is_running():
            loop.close()


async def _gather_ensure(conns: Sequence[ServerConnection]) -> None:
    await asyncio.gather(*(c.ensure() for c in conns), return_exceptions=True)
