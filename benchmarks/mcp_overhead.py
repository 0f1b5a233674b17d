"""What MCP costs through our stack: latency added per tool call, and preloading servers in parallel.

1. **Per call.** One small MCP server (stdio, an ``echo`` tool) is called N times by
   - the bare official ``mcp`` client (``Client.call_tool``) — the peer,
   - pydantic-ai's ``MCPToolset.direct_call_tool`` — the client our pool holds,
   - our pipeline (mode filter, record into the session's journal, telemetry, cap, privacy guard
     with secrets scrubbed, gate with audit, breaker, normalize, then the pool's connection on its
     own loop), and the same with the full privacy guard (every identifier masked).
   Rounds alternate between them (each goes first in turn) so machine noise hits all alike;
   medians are reported, and the added latency is ours minus the bare client's, for a 100-byte
   and a 10 KB answer.
2. **Preload.** ``--servers`` copies of the server start in parallel (one pool, each within its
   timeout) and one after another (what a loop over servers would do).

Prints one line per figure, then one JSON object (last line) with ``bare_ms``, ``pydantic_ai_ms``,
``ours_ms``, ``ours_privacy_ms``, ``added_ms``, ``added_privacy_ms`` (each for the small and the
10 KB answer), ``preload_parallel_s``, ``preload_serial_s`` and ``preload_speedup``.

    .venv/bin/python benchmarks/mcp_overhead.py [--calls 200] [--servers 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from fastmcp.client.transports import StdioTransport
from mcp import Client, StdioServerParameters
from pydantic_ai.mcp import MCPToolset

from devops_agent.agent.journal import Journal
from devops_agent.agent.session import SessionService
from devops_agent.agent.toolbox import RunIds
from devops_agent.config import Settings
from devops_agent.deps import ToolDeps
from devops_agent.policies.pipeline import ToolCaller, privacy_guard
from devops_agent.store import Store
from devops_agent.telemetry import configure_logging
from devops_agent.tools.mcp import pool_for
from devops_agent.tools.registry import ToolRegistry

SERVER = '''
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("echo")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    server.run()
'''
# An answer with the kinds of text the privacy guard looks at (a host, an address, a path).
LINE = "2026-11-27T10:00:01Z web-3.internal.example GET /api/orders 200 12ms from 10.1.2.3\n"


def settings_for(tmp: Path, servers: int, *, privacy: str = "off") -> Settings:
    script = tmp.parent / "echo_server.py"
    table = {
        f"echo{i}": {"command": sys.executable, "args": [str(script)], "timeout_s": 60}
        for i in range(servers)
    }
    return Settings(
        data_dir=tmp / "data",
        database_url=f"sqlite:///{tmp / 'bench.db'}",
        mcp={"servers": table, "project_file": False},
        privacy={"enabled": privacy, "hmac_key": "bench-key", "ner": "off"},
    )


async def timed(fn: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await fn()
    return (time.perf_counter() - started) * 1000


async def per_call(tmp: Path, calls: int) -> dict[str, dict[str, float]]:
    texts = {"small": LINE, "10k": LINE * (10_000 // len(LINE))}
    samples: dict[str, dict[str, list[float]]] = {k: {} for k in texts}
    params = StdioServerParameters(command=sys.executable, args=[str(tmp / "echo_server.py")])
    bare = Client(params, mode="legacy")
    pai: MCPToolset[Any] = MCPToolset(StdioTransport(sys.executable, [str(tmp / "echo_server.py")]))
    callers: dict[str, ToolCaller] = {}
    stores: list[Store] = []
    pools = []
    for label, privacy in (("ours", "off"), ("ours_privacy", "on")):
        settings = settings_for(tmp / label, 1, privacy=privacy)
        (tmp / label).mkdir(exist_ok=True)
        pool = pool_for(settings)
        assert pool is not None
        pools.append(pool)
        store = Store.from_settings(settings)
        stores.append(store)
        service = SessionService(
            settings, store, registry=ToolRegistry(), use_configured_model=False, mcp=pool
        )
        session = store.create_session(title="bench", mode="ask", model=None)
        run = RunIds(session.id, "bench-run", "ask", Journal(store))
        guard = privacy_guard(settings, store, session.id, model_reads=True, privacy=service.privacy)
        tools = service.toolbox.pipeline(run, approvals="deny", privacy=guard)
        callers[label] = ToolCaller(tools, run_id=run.run_id, deps=ToolDeps(settings, store, session.id))
    async with bare, pai:
        for label, caller in callers.items():  # connect and list once, outside the timing
            warm = await caller("echo0_echo", {"text": "warm"})
            assert warm.status == "success", (label, warm)
        for i in range(calls):
            for size, text in texts.items():
                runs: dict[str, Callable[[], Awaitable[Any]]] = {
                    "bare": lambda t=text: bare.call_tool("echo", {"text": t}),
                    "pydantic_ai": lambda t=text: pai.direct_call_tool("echo", {"text": t}),
                    "ours": lambda t=text: callers["ours"]("echo0_echo", {"text": t}),
                    "ours_privacy": lambda t=text: callers["ours_privacy"]("echo0_echo", {"text": t}),
                }
                order = list(runs)
                for name in order[i % 4 :] + order[: i % 4]:  # each client goes first as often
                    samples[size].setdefault(name, []).append(await timed(runs[name]))
    for pool in pools:
        pool.close()
    for store in stores:
        store.close()
    return {size: {k: statistics.median(v) for k, v in by.items()} for size, by in samples.items()}


def preload(tmp: Path, servers: int) -> tuple[float, float]:
    settings = settings_for(tmp / "preload", servers)
    (tmp / "preload").mkdir(exist_ok=True)
    pool = pool_for(settings)
    assert pool is not None
    started = time.perf_counter()
    statuses = pool.preload_sync()
    parallel = time.perf_counter() - started
    assert all(s.state == "ready" for s in statuses.values()), statuses
    pool.close()
    started = time.perf_counter()
    for name in settings.mcp.servers:
        one = pool_for(settings)
        assert one is not None
        assert one.preload_sync([name])[name].state == "ready"
        one.close()
    return parallel, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per client and answer size")
    parser.add_argument("--servers", type=int, default=5, help="servers preloaded")
    parser.add_argument("--data", type=Path, default=None, help="unused: the benchmark makes its own server")
    args = parser.parse_args()
    configure_logging("error")
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as name:
        tmp = Path(name)
        (tmp / "echo_server.py").write_text(SERVER)
        medians = asyncio.run(per_call(tmp, args.calls))
        parallel, serial = preload(tmp, args.servers)
    figures: dict[str, Any] = {"calls": args.calls, "servers": args.servers}
    for size, m in medians.items():
        added, added_privacy = m["ours"] - m["bare"], m["ours_privacy"] - m["bare"]
        print(
            f"per call ({size} answer): bare mcp client {m['bare']:.2f} ms, pydantic-ai MCPToolset "
            f"{m['pydantic_ai']:.2f} ms, our pipeline {m['ours']:.2f} ms (+{added:.2f} ms), with the "
            f"full privacy guard {m['ours_privacy']:.2f} ms (+{added_privacy:.2f} ms)"
        )
        for key in ("bare", "pydantic_ai", "ours", "ours_privacy"):
            figures[f"{key}_ms_{size}"] = round(m[key], 3)
        figures[f"added_ms_{size}"] = round(added, 3)
        figures[f"added_privacy_ms_{size}"] = round(added_privacy, 3)
    print(
        f"preload {args.servers} servers: parallel {parallel:.2f} s, one after another {serial:.2f} s "
        f"({serial / parallel:.1f}x)"
    )
    figures.update(
        preload_parallel_s=round(parallel, 3),
        preload_serial_s=round(serial, 3),
        preload_speedup=round(serial / parallel, 2),
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
