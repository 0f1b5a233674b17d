"""Load benchmark of the service: N concurrent WebSocket sessions asking questions for a duration.

Starts ``devops-agent serve`` (a real server process) on SQLite and on PostgreSQL (when
``--postgres-url`` or DEVOPS_AGENT_TEST_POSTGRES_URL gives one), with the scripted model (one real
host tool per run, then an answer), and drives it with N WebSocket clients, each asking its next
question in its session as soon as the last run finished. Measures:

* errors: problem messages, ``error`` events (a run that completes may still have failed to save its
  events), runs that did not complete, dropped connections;
* p50/p99 time from a tool result to the client (the event's server timestamp to its arrival);
* runs per second;
* server RSS after start, after warm-up (every session finished a run, and a fifth of the
  duration passed) and at the end; ``rss_growth`` is (end - warm) / warm; ``rss_idle_growth`` the
  same once the load is gone and the server trimmed its heap (``server.memory_trim_s``), i.e.
  what it keeps; ``rss_mb_over_time`` samples RSS every tenth of the duration.

Prints one line per backend, then as its last line one JSON object with ``errors``,
``p99_event_ms`` and ``rss_growth`` (the worst backend's) and the per-backend figures.

    .venv/bin/python benchmarks/service_load.py                       # 100 sessions, 5 minutes
    .venv/bin/python benchmarks/service_load.py --sessions 20 --seconds 30
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import psutil
from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_procs import free_port, stop  # noqa: E402

SCRIPT = """turns:
  - tool_calls:
      - tool: system_memory
  - text: "Memory looked at: {results}"
"""


TRIM_S = 10
"""The server's memory trim interval here (server.memory_trim_s)."""


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class Stats:
    def __init__(self) -> None:
        self.runs = 0
        self.errors = 0
        self.error_kinds: dict[str, int] = {}
        self.event_ms: list[float] = []
        self.warm: set[int] = set()
        """Sessions that finished a run."""
        self.all_warm = asyncio.Event()
        self.sessions = 0
        self.fresh = False
        """Every question in a new session (--fresh-sessions): a history that never grows."""

    def error(self, kind: str) -> None:
        self.errors += 1
        self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1


async def _session(url: str, token: str, deadline: float, stats: Stats, index: int) -> None:
    try:
        async with connect(url, open_timeout=60, max_size=2**24) as ws:
            await ws.send(json.dumps({"type": "init", "token": token}))
            ready = json.loads(await ws.recv())
            if ready.get("type") != "ready":
                stats.error(f"init: {ready.get('detail')}")
                return
            session_id = None
            while time.monotonic() < deadline:
                query: dict[str, Any] = {
                    "type": "query",
                    "question": f"how is memory? (client {index})",
                }
                if session_id and not stats.fresh:
                    query["session_id"] = session_id
                await ws.send(json.dumps(query))
                while True:
                    message = json.loads(await asyncio.wait_for(ws.recv(), 120))
                    kind = message.get("type")
                    if kind == "accepted":
                        session_id = message["session_id"]
                    elif kind == "problem":
                        stats.error(f"problem {message.get('status')}: {message.get('detail')}")
                        await asyncio.sleep(1)
                        break
                    elif kind == "error":  # e.g. a run's events not saved: the run may still complete
                        stats.error(f"event error: {str(message.get('message'))[:80]}")
                    elif kind == "tool_result":
                        sent = datetime.fromisoformat(message["ts"]).timestamp()
                        stats.event_ms.append((time.time() - sent) * 1000)
                    elif kind == "run_finished":
                        if message["status"] == "completed":
                            stats.runs += 1
                            stats.warm.add(index)
                            if len(stats.warm) == stats.sessions:
                                stats.all_warm.set()
                        else:
                            stats.error(f"run {message['status']}")
                        break
    except Exception as exc:  # noqa: BLE001 - a dropped client is an error to count, not a crash
        stats.error(f"client: {type(exc).__name__}: {str(exc)[:80]}")


def _start_server(home: Path, database_url: str, sessions: int) -> tuple[subprocess.Popen[bytes], str, str]:
    script = home / "script.yaml"
    script.write_text(SCRIPT)
    env = {
        **os.environ,
        "DEVOPS_AGENT_HOME": str(home),
        "DEVOPS_AGENT_DATABASE_URL": database_url,
        "DEVOPS_AGENT_MODEL__NAME": f"scripted:{script}",
        "DEVOPS_AGENT_SERVER__MAX_RUNS_PER_USER": str(sessions * 2),
        "DEVOPS_AGENT_SERVER__ACCESS_LOG": "false",
        "DEVOPS_AGENT_SERVER__WS_SEND_BUFFER": "1000",
        "DEVOPS_AGENT_SERVER__MEMORY_TRIM_S": str(TRIM_S),
    }
    cmd = [sys.executable, "-m", "devops_agent"]
    added = subprocess.run(
        [*cmd, "users", "add", "bench", "--role", "operator"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    token = added.stdout.strip()
    port = free_port()
    proc = subprocess.Popen(
        [*cmd, "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/readyz", timeout=2).status_code == 200:
                return proc, base, token
        except httpx.TransportError:
            pass
        if proc.poll() is not None:
            raise SystemExit(f"service_load: the server exited with {proc.returncode}")
        time.sleep(0.3)
    proc.kill()
    raise SystemExit("service_load: the server did not become ready in 90 s")


def _rss(proc: subprocess.Popen[bytes]) -> int:
    """RSS of the server process (the `devops-agent serve` Python process itself)."""
    return int(psutil.Process(proc.pid).memory_info().rss)


async def _drive(
    ws_url: str, token: str, sessions: int, seconds: float, proc: subprocess.Popen[bytes], fresh: bool
) -> dict[str, Any]:
    stats = Stats()
    stats.sessions = sessions
    stats.fresh = fresh
    start = time.monotonic()
    deadline = start + seconds
    rss_start = _rss(proc)
    tasks = [asyncio.create_task(_session(ws_url, token, deadline, stats, i)) for i in range(sessions)]
    samples: list[tuple[float, float]] = []

    async def sample() -> None:  # RSS every tenth of the run: a plateau or a slope
        while True:
            samples.append((round(time.monotonic() - start, 1), round(_rss(proc) / 2**20, 1)))
            await asyncio.sleep(seconds / 10)

    sampler = asyncio.create_task(sample())
    await asyncio.sleep(seconds / 5)
    # ...and until every session finished a run (at the latest a fifth before the end).
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stats.all_warm.wait(), max(0.0, deadline - seconds / 5 - time.monotonic()))
    warm_at = time.monotonic() - start
    rss_warm = _rss(proc)
    await asyncio.gather(*tasks)
    elapsed = time.monotonic() - start
    rss_end = _rss(proc)
    # With the load gone, after the server's next memory trim: what it holds on to.
    await asyncio.sleep(TRIM_S + 2)
    rss_idle = _rss(proc)
    sampler.cancel()
    return {
        "sessions": sessions,
        "seconds": round(elapsed, 1),
        "runs": stats.runs,
        "runs_per_s": round(stats.runs / elapsed, 2),
        "errors": stats.errors,
        "error_kinds": stats.error_kinds,
        "tool_results": len(stats.event_ms),
        "p50_event_ms": round(_percentile(stats.event_ms, 0.50), 1),
        "p99_event_ms": round(_percentile(stats.event_ms, 0.99), 1),
        "mean_event_ms": round(statistics.fmean(stats.event_ms), 1) if stats.event_ms else 0.0,
        "rss_start_mb": round(rss_start / 2**20, 1),
        "rss_warm_mb": round(rss_warm / 2**20, 1),
        "warm_at_s": round(warm_at, 1),
        "rss_end_mb": round(rss_end / 2**20, 1),
        "rss_growth": round((rss_end - rss_warm) / rss_warm, 4),
        "rss_idle_mb": round(rss_idle / 2**20, 1),
        "rss_idle_growth": round((rss_idle - rss_warm) / rss_warm, 4),
        "rss_mb_over_time": samples,
    }


def run_backend(
    name: str, database_url: str | None, sessions: int, seconds: float, fresh: bool = False
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"service-load-{name}-") as tmp:
        home = Path(tmp)
        url = database_url or f"sqlite:///{home / 'store.db'}"
        proc, base, token = _start_server(home, url, sessions)
        try:
            return asyncio.run(
                _drive(base.replace("http://", "ws://") + "/v1/ws", token, sessions, seconds, proc, fresh)
            )
        finally:
            stop(proc, 60)


def _fresh_postgres(base_url: str) -> tuple[str, Any]:
    """A new database on the server of ``base_url`` (dropped afterwards) so runs never mix."""
    import uuid

    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    from devops_agent.store.engine import normalize_url

    base = normalize_url(base_url)
    name = f"devops_agent_bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()

    return base.set(database=name).render_as_string(hide_password=False), drop


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sessions", type=int, default=100, help="concurrent WebSocket sessions (default 100)"
    )
    parser.add_argument("--seconds", type=float, default=300, help="how long they ask (default 300)")
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("DEVOPS_AGENT_TEST_POSTGRES_URL"),
        help="PostgreSQL server to run on as well (a fresh database is made and dropped)",
    )
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--data", type=Path, default=None, help="unused: this benchmark makes its own load")
    parser.add_argument(
        "--fresh-sessions",
        action="store_true",
        help="ask every question in a new session (default: each client continues its session)",
    )
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    if args.backend in ("sqlite", "both"):
        results["sqlite"] = run_backend("sqlite", None, args.sessions, args.seconds, args.fresh_sessions)
    if args.backend in ("postgres", "both"):
        if not args.postgres_url:
            print(
                "service_load: no PostgreSQL (--postgres-url or DEVOPS_AGENT_TEST_POSTGRES_URL): skipped",
                file=sys.stderr,
            )
        else:
            url, drop = _fresh_postgres(args.postgres_url)
            try:
                results["postgres"] = run_backend(
                    "postgres", url, args.sessions, args.seconds, args.fresh_sessions
                )
            finally:
                drop()
    for name, r in results.items():
        print(
            f"service_load backend={name} sessions={r['sessions']} seconds={r['seconds']} runs={r['runs']} "
            f"runs_per_s={r['runs_per_s']} errors={r['errors']} p50_event_ms={r['p50_event_ms']} "
            f"p99_event_ms={r['p99_event_ms']} rss_start_mb={r['rss_start_mb']} "
            f"rss_warm_mb={r['rss_warm_mb']} rss_end_mb={r['rss_end_mb']} rss_growth={r['rss_growth']} "
            f"rss_idle_mb={r['rss_idle_mb']} rss_idle_growth={r['rss_idle_growth']}"
        )
    summary = {
        "errors": sum(r["errors"] for r in results.values()),
        "p99_event_ms": max((r["p99_event_ms"] for r in results.values()), default=0.0),
        "rss_growth": max((r["rss_growth"] for r in results.values()), default=0.0),
        "backends": results,
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
