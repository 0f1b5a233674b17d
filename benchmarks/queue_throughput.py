"""Durable workers: investigations per minute with 1, 2 and 4 workers, queue latency, and what a
worker killed with ``kill -9`` costs (issue 28).

Real ``devops-agent worker`` processes on a real PostgreSQL (each phase in a schema of its own,
dropped at the end), Jenkins as the test suite's replay server (every build answered after
``--latency-ms``; its request log counts tool executions). An investigation is the test suite's
``durable-check`` runbook (three Jenkins reads: two at once, then one), or the same reads driven by
the scripted model. Phases, all in this run:

* **in-process** (the peer): the same runbooks run by one process's session service
  (``execution = "inprocess"``, the default), ``--concurrency`` at once, on the same database;
* **throughput**: ``--runs`` investigations queued at once, carried out by 1, 2 and 4 workers
  (``--concurrency`` runs each): ``per_minute``;
* **latency**: with 2 idle workers, runs queued one at a time: enqueue → first event, p50/p99;
* **chaos**: ``--chaos-runs`` investigations (half runbooks, half scripted model) over 2 workers, a
  busy worker killed with SIGKILL 3 times per half: ``lost``, ``duplicated``,
  ``reexecuted_steps`` (calls made again after their result was checkpointed: must be 0),
  ``repeated_requests`` (calls in flight when their worker died, made again by design), and
  ``recovery_s`` (kill → the first of the killed worker's runs going on elsewhere; it includes
  detecting the death, ``dead_after_s`` = 3 s here).

Needs PostgreSQL: ``--postgres-url`` or ``DEVOPS_AGENT_TEST_POSTGRES_URL`` (``scripts/postgres.sh``
prints one). ``--data`` is accepted for the common benchmark interface (a folder holding the test
suite's ``replay/`` and ``fixtures_workers.py``; default ``tests/``).

    .venv/bin/python benchmarks/queue_throughput.py [--runs 100] [--chaos-runs 200] [--latency-ms 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from devops_agent.telemetry import configure_logging

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def schema(base_url: str) -> Iterator[str]:
    """A URL whose search_path is a new schema, dropped (with the queue's) afterwards."""
    name = f"bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(base_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE SCHEMA "{name}"')
    try:
        url = make_url(base_url).update_query_dict({"options": f"-csearch_path={name}"})
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "dbos_{name}" CASCADE')
        admin.dispose()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def start_latency(db_url: str, run_ids: list[str]) -> list[float]:
    """Per run: seconds from being queued (runs.created_at) to its first event."""
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT r.id, r.created_at, min(e.created_at) FROM runs r "
                    "JOIN events e ON e.run_id = r.id WHERE e.seq = 1 GROUP BY r.id, r.created_at"
                )
            ).all()
    finally:
        engine.dispose()
    wanted = set(run_ids)
    return [(first - queued).total_seconds() for rid, queued, first in rows if rid in wanted]


def cluster_for(fx: Any, url: str, tmp: Path, jenkins: Any, concurrency: int, model: bool) -> Any:
    cluster = fx.Cluster(url, tmp, jenkins.url)
    cluster.concurrency = concurrency
    cluster.max_parallel = 2
    if model:
        cluster.model = f"scripted:{fx.MODEL_SCRIPT}"
    cluster.write_config()
    return cluster


def throughput(fx: Any, base: str, jenkins: Any, workers: int, runs: int, concurrency: int) -> dict[str, Any]:
    with schema(base) as url, tempfile.TemporaryDirectory() as tmp:
        cluster = cluster_for(fx, url, Path(tmp), jenkins, concurrency, model=False)
        try:
            store = cluster.store()
            ids = [cluster.start(f"w{i}") for i in range(workers)]
            cluster.wait_ready(store, workers, timeout=300, ids=ids)
            started = time.perf_counter()
            run_ids = fx.submit_many(cluster, store, runs, prefix=f"t{workers}x", users=runs)
            fx.wait_finished(store, run_ids, 600, cluster)
            elapsed = time.perf_counter() - started
            failed = sum(1 for r in run_ids if store.get_run(r).status != "completed")
            return {
                "workers": workers,
                "seconds": elapsed,
                "per_minute": runs / elapsed * 60,
                "failed": failed,
            }
        finally:
            cluster.stop_all()


def latency(fx: Any, base: str, jenkins: Any, n: int, concurrency: int) -> list[float]:
    with schema(base) as url, tempfile.TemporaryDirectory() as tmp:
        cluster = cluster_for(fx, url, Path(tmp), jenkins, concurrency, model=False)
        try:
            store = cluster.store()
            ids = [cluster.start(f"w{i}") for i in range(2)]
            cluster.wait_ready(store, 2, timeout=300, ids=ids)
            run_ids = []
            for i in range(n):
                run_ids += fx.submit_many(cluster, store, 1, prefix=f"lat{i}x")
                fx.wait_finished(store, run_ids, 60, cluster)  # idle workers: the next waits for nothing
            return start_latency(url, run_ids)
        finally:
            cluster.stop_all()


def inprocess(fx: Any, base: str, jenkins: Any, runs: int, concurrency: int) -> dict[str, Any]:
    """The peer: the same runbooks in one process, ``concurrency`` at once (no queue)."""
    from devops_agent.agent.session import SessionService
    from devops_agent.store import Store

    with schema(base) as url, tempfile.TemporaryDirectory() as tmp:
        cluster = cluster_for(fx, url, Path(tmp), jenkins, concurrency, model=False)
        settings = cluster.settings()
        settings = settings.model_copy(
            update={"workers": settings.workers.model_copy(update={"execution": "inprocess"})}
        )
        with Store(url) as store:
            service = SessionService(settings, store)
            gate = asyncio.Semaphore(concurrency)

            async def one(i: int) -> str:
                async with gate:
                    _, final = await service.run(
                        f"durable check {i}", inputs={"runbooks": ["durable-check"], "job": f"ip{i}"}
                    )
                    return final.status

            async def all_runs() -> list[str]:
                return await asyncio.gather(*(one(i) for i in range(runs)))

            started = time.perf_counter()
            statuses = asyncio.run(all_runs())
            elapsed = time.perf_counter() - started
    return {
        "seconds": elapsed,
        "per_minute": runs / elapsed * 60,
        "failed": sum(1 for s in statuses if s != "completed"),
    }


def chaos(fx: Any, base: str, jenkins: Any, runs: int, concurrency: int, model: bool) -> tuple[Any, int]:
    with schema(base) as url, tempfile.TemporaryDirectory() as tmp:
        cluster = cluster_for(fx, url, Path(tmp), jenkins, concurrency, model=model)
        try:
            store = cluster.store()
            alive = [cluster.start("a0"), cluster.start("b0")]
            cluster.wait_ready(store, 2, timeout=300, ids=alive)
            started = time.time()
            prefix = "cm" if model else "cr"
            run_ids = fx.submit_many(
                cluster, store, runs, prefix=prefix, runbook=None if model else "durable-check"
            )
            kills = []
            for round_ in range(3):
                # A survivor is up at each kill (the replacement of the last victim is ready), so
                # recovery_s is detection + takeover, not a worker's start-up.
                if sum(1 for r in run_ids if not store.get_run(r).finished) < 4 * concurrency:
                    break  # too little left to kill a worker mid-run
                kills.append(fx.kill_when_busy(cluster, store, alive.pop(0)))
                alive.append(cluster.start(f"r{round_}"))
                cluster.wait_ready(store, 2, timeout=300, ids=alive)
            fx.wait_finished(store, run_ids, 900, cluster)
            return fx.chaos_check(cluster, store, jenkins, run_ids, kills, started, prefix=prefix), len(kills)
        finally:
            cluster.stop_all()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=None, help="folder with replay/, fixtures_workers.py")
    ap.add_argument("--postgres-url", default=os.environ.get("DEVOPS_AGENT_TEST_POSTGRES_URL"))
    ap.add_argument(
        "--runs", type=int, default=100, help="investigations per throughput figure (default 100)"
    )
    ap.add_argument(
        "--chaos-runs", type=int, default=200, help="investigations in the kill -9 phase (default 200)"
    )
    ap.add_argument("--latency-runs", type=int, default=30, help="runs queued one at a time (default 30)")
    ap.add_argument(
        "--latency-ms", type=float, default=200.0, help="delay of every Jenkins answer (default 200)"
    )
    ap.add_argument("--concurrency", type=int, default=4, help="runs one worker executes at once (default 4)")
    ap.add_argument("--workers", default="1,2,4", help="worker counts of the throughput phase")
    args = ap.parse_args(argv)
    if not args.postgres_url:
        ap.error("needs PostgreSQL: --postgres-url or DEVOPS_AGENT_TEST_POSTGRES_URL (scripts/postgres.sh)")
    if min(args.runs, args.chaos_runs, args.latency_runs, args.concurrency) < 1:
        ap.error("--runs, --chaos-runs, --latency-runs and --concurrency must be at least 1")
    configure_logging("error")
    sys.path.insert(0, str(args.data or ROOT / "tests"))
    import fixtures_workers as fx
    from fixtures_replay import ReplayServer

    base = make_url(args.postgres_url).render_as_string(hide_password=False)
    with ReplayServer() as jenkins:
        jenkins.add("GET", "/api/json", fixture="jenkins/root.json", headers={"X-Jenkins": "2.452.1"})
        jenkins.add("GET", "/crumbIssuer/api/json", fixture="jenkins/crumb.json")
        jenkins.add_prefix(
            "GET", "/job/", fixture="jenkins/build_deploy_412.json", delay_s=args.latency_ms / 1000
        )

        peer = inprocess(fx, base, jenkins, args.runs, args.concurrency)
        print(f"in-process (peer)   {args.runs} runs  {peer['seconds']:6.1f}s  {peer['per_minute']:7.1f}/min")
        per_minute: dict[str, float] = {}
        failed = peer["failed"]
        for n in (int(w) for w in args.workers.split(",")):
            t = throughput(fx, base, jenkins, n, args.runs, args.concurrency)
            per_minute[str(n)] = round(t["per_minute"], 1)
            failed += t["failed"]
            print(f"queue, {n} worker(s)  {args.runs} runs  {t['seconds']:6.1f}s  {t['per_minute']:7.1f}/min")
        waits = latency(fx, base, jenkins, args.latency_runs, args.concurrency)
        p50, p99 = percentile(waits, 0.5), percentile(waits, 0.99)
        print(f"queue latency (idle workers, {len(waits)} runs)  p50 {p50:.3f}s  p99 {p99:.3f}s")

        halves = [(args.chaos_runs - args.chaos_runs // 2, False), (args.chaos_runs // 2, True)]
        done = [chaos(fx, base, jenkins, n, args.concurrency, model) for n, model in halves if n]
        results = [r for r, _ in done]
        for (n, model), (r, k) in zip([h for h in halves if h[0]], done, strict=True):
            print(
                f"kill -9 x{k}, {n} {'model' if model else 'runbook'} runs over 2 workers  lost {r.lost}  "
                f"duplicated {r.duplicated}  reexecuted {r.reexecuted_steps}  in flight at a kill "
                f"{r.repeated_requests}  taken over {r.taken_over}  recovery {r.recovery_s}s  "
                f"stream problems {len(r.stream_problems)}  stalled workers fenced {r.fenced}"
            )
            for problem in r.stream_problems[:3]:
                print(f"  stream problem: {problem[:600]}")
    recovery = [s for r in results for s in r.recovery_s]
    figures = {
        "per_minute": per_minute,
        "inprocess_per_minute": round(peer["per_minute"], 1),
        "latency_p50_s": round(p50, 3),
        "latency_p99_s": round(p99, 3),
        "chaos_runs": sum(r.runs for r in results),
        "kills": sum(k for _, k in done),
        "lost": sum(r.lost for r in results),
        "duplicated": sum(r.duplicated for r in results),
        "reexecuted_steps": sum(r.reexecuted_steps for r in results),
        "repeated_in_flight": sum(r.repeated_requests for r in results),
        "stream_problems": sum(len(r.stream_problems) for r in results),
        "fenced": sum(r.fenced for r in results),
        "recovery_s_median": round(statistics.median(recovery), 2) if recovery else None,
        "recovery_s_max": max(recovery) if recovery else None,
        "failed": failed,
        "latency_ms": args.latency_ms,
        "concurrency": args.concurrency,
    }
    print(json.dumps(figures, sort_keys=True))
    return 0 if figures["lost"] == figures["duplicated"] == figures["reexecuted_steps"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
