"""Triage fan-out: how long triaging a ticket takes as the number of linked Jenkins builds grows.

The offline triage runbook (``devops_agent.runbooks.triage``) runs with the real Jira and Jenkins
tools, through the real tool pipeline, against the replay server of the test suite
(``tests/replay``: documented vendor responses on 127.0.0.1) with a fixed delay per response.
Each build costs three Jenkins calls (console, test report, build info); the ticket four more
calls (ticket, related search, KB, memory). In the same run it times: a ticket with one build, a
ticket with ``--builds`` builds at the in-flight cap (8), and the same ticket one call at a time
(cap 1) as the baseline. Figures: ``ratio`` = many builds / one build (target < 2 with 10 builds
at 200 ms), ``speedup`` = sequential / capped, ``peak_in_flight`` (must not exceed the cap).

The fixtures ship with the tests; ``--data`` is accepted for the common benchmark interface and
only used to find them when given (a folder holding ``replay/fixtures``).

    .venv/bin/python benchmarks/triage_fanout.py [--builds 10] [--latency-ms 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from devops_agent.telemetry import configure_logging

ROOT = Path(__file__).resolve().parent.parent


def timed(url: str, key: str, max_parallel: int) -> tuple[float, Any]:
    from replay.triage import Harness

    started = time.perf_counter()
    report = Harness(url).run(key, max_parallel=max_parallel, step_budget=200)
    return time.perf_counter() - started, report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--data", type=Path, default=None, help="folder holding replay/fixtures (default: tests/)"
    )
    ap.add_argument("--builds", type=int, default=10, help="builds linked from the ticket (default 10)")
    ap.add_argument("--latency-ms", type=float, default=200.0, help="delay of every response (default 200)")
    ap.add_argument("--parallel", type=int, default=8, help="in-flight cap (default 8, the runbook's)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure; the median is reported")
    args = ap.parse_args(argv)
    if args.builds < 1 or args.repeat < 1 or args.parallel < 1:
        ap.error("--builds, --repeat and --parallel must be at least 1")
    configure_logging("warning")  # as the CLI does: a log line per tool call is off by default
    sys.path.insert(0, str(args.data or ROOT / "tests"))
    from fixtures_replay import ReplayServer
    from replay.triage import fan_out_ticket

    one_s: list[float] = []
    many_s: list[float] = []
    seq_s: list[float] = []
    peak = 0
    with ReplayServer() as srv:
        fan_out_ticket(srv, "OPS-301", 1)
        fan_out_ticket(srv, "OPS-310", args.builds)
        srv.delay_s = args.latency_ms / 1000
        srv.watch("/")
        for _ in range(args.repeat):
            one_s.append(timed(srv.url, "OPS-301", args.parallel)[0])
            srv.peak["/"] = 0
            elapsed, report = timed(srv.url, "OPS-310", args.parallel)
            many_s.append(elapsed)
            peak = max(peak, srv.peak["/"])
            if len(report.stats["builds"]) != args.builds:
                print(
                    f"error: triage saw {len(report.stats['builds'])} of {args.builds} builds",
                    file=sys.stderr,
                )
                return 1
            seq_s.append(timed(srv.url, "OPS-310", 1)[0])

    one, many, seq = (statistics.median(x) for x in (one_s, many_s, seq_s))
    figures = {
        "builds": args.builds,
        "latency_ms": args.latency_ms,
        "one_build_s": round(one, 3),
        "many_builds_s": round(many, 3),
        "sequential_s": round(seq, 3),
        "ratio": round(many / one, 2),
        "speedup": round(seq / many, 2),
        "peak_in_flight": peak,
        "cap": args.parallel,
    }
    print(f"one build:                      {one:.2f} s")
    print(
        f"{args.builds} builds, {args.parallel} in flight:        {many:.2f} s  ({many / one:.2f}x one build)"
    )
    print(f"{args.builds} builds, one call at a time:   {seq:.2f} s  (capped run {seq / many:.1f}x faster)")
    print(f"peak requests in flight:        {peak} (cap {args.parallel})")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
