"""What reasoning costs around the model: the planner's overhead over the plain tool loop, and
delegation to two specialists in parallel.

The package's scripted model plays every agent, so the figures are the agent's own work (the
pipeline, the journal, structured output, the critics, delegation), not a model's latency. Each
round runs, on a fresh session of a real SQLite store, in rotating order:

- **plain** — the plain pydantic-ai tool loop (``agent.reasoning = false``, the peer): one model
  response calls two tools, then a text answer;
- **planner** — the same calls through the planner (``--plan never``): structured answer citing
  both calls, the deterministic critic, the model critic (an empty verdict), the report;
- **delegated** — the planner asks two specialists at once (``ask_logs``, ``ask_metrics``), each
  calling its tool and answering with its report, then answers citing them.

Each tool sleeps ``--delay`` seconds (a real tool reads something). Prints one line per figure,
then one JSON object (last line) with ``plain_ms``, ``planner_ms``, ``planner_added_ms``,
``delegated_ms``, ``delegations_serial_ms`` (the two delegations' own durations added up: what
one after the other would take), ``delegations_wall_ms`` (from the first one's start to the last
one's end) and ``delegation_speedup`` (serial over wall).

    .venv/bin/python benchmarks/reasoning_overhead.py [--runs 20] [--delay 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.events import Delegation, RunEvent, RunFinished
from devops_agent.store import Store
from devops_agent.telemetry import configure_logging
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry

LOGS = "14:05:02 ERROR connection refused to db:5432"
METRICS = "api_error_rate 0.93 at 14:06"
CALLS = {
    "tool_calls": [
        {"tool": "svc_logs", "args": {"service": "api"}},
        {"tool": "svc_metrics", "args": {"service": "api"}},
    ]
}


def registry(delay: float) -> ToolRegistry:
    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("svc", "a service's logs and metrics")

        @ts.tool(read_only=True)
        def svc_logs(service: str) -> ToolResult:
            """The service's recent log lines."""
            time.sleep(delay)
            return ToolResult.ok(LOGS)

        @ts.tool(read_only=True)
        def svc_metrics(service: str) -> ToolResult:
            """The service's error rate."""
            time.sleep(delay)
            return ToolResult.ok(METRICS)

        return ts

    reg = ToolRegistry()
    reg.add_toolset("svc", build)
    for name, tool in (("logs", "svc_logs"), ("metrics", "svc_metrics")):
        reg.add_specialist(
            {"name": name, "description": f"Reads {name}.", "instructions": "Look.", "tools": [tool]}
        )
    return reg


def finding(title: str, quote: str, cite: str) -> dict[str, Any]:
    return {"severity": "high", "title": title, "evidence": [quote], "citations": [f"{{call:{cite}}}"]}


SCRIPTS: dict[str, dict[str, Any]] = {
    "plain": {"turns": [CALLS, {"text": "api cannot reach its database."}]},
    "planner": {
        "turns": [
            CALLS,
            {
                "output": {
                    "summary": "api cannot reach its database.",
                    "findings": [
                        finding("connection refused", LOGS, "svc_logs"),
                        finding("error rate 0.93", METRICS, "svc_metrics"),
                    ],
                }
            },
        ]
    },
    "delegated": {
        "turns": [
            {
                "tool_calls": [
                    {"tool": "ask_logs", "args": {"task": "what do api's logs say?"}},
                    {"tool": "ask_metrics", "args": {"task": "what does api's error rate do?"}},
                ]
            },
            {
                "output": {
                    "summary": "api cannot reach its database.",
                    "findings": [finding("refused", LOGS, "ask_logs")],
                }
            },
        ],
        "agents": {
            name: {
                "turns": [
                    {"tool_calls": [{"tool": tool, "args": {"service": "api"}}]},
                    {"output": {"summary": quote, "findings": [finding(name, quote, tool)]}},
                ]
            }
            for name, tool, quote in (("logs", "svc_logs", LOGS), ("metrics", "svc_metrics", METRICS))
        },
    },
}


def one_run(store: Store, kind: str, delay: float) -> tuple[float, list[RunEvent]]:
    settings = Settings(agent={"reasoning": kind != "plain"})
    model = ScriptedModel(Script.model_validate(SCRIPTS[kind]))
    service = SessionService(
        settings, store, registry=registry(delay), model=model, use_configured_model=False
    )
    inputs = {} if kind == "plain" else {"plan": "never"}

    async def go() -> list[RunEvent]:
        return [e async for e in service.stream("why does api fail?", mode="ask", inputs=inputs)]

    start = time.perf_counter()
    events = asyncio.run(go())
    elapsed = (time.perf_counter() - start) * 1000
    final = events[-1]
    if not isinstance(final, RunFinished) or final.status != "completed":
        raise SystemExit(f"{kind}: the run did not complete: {final}")
    return elapsed, events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="rounds (each runs all three)")
    parser.add_argument("--delay", type=float, default=0.2, help="seconds each tool takes")
    args = parser.parse_args()
    configure_logging("error")
    kinds = list(SCRIPTS)
    times: dict[str, list[float]] = {k: [] for k in kinds}
    serial: list[float] = []  # the two delegations' own durations, added up
    wall: list[float] = []  # from the first delegation's start to the last one's end
    with tempfile.TemporaryDirectory() as tmp, Store(f"sqlite:///{Path(tmp) / 'bench.db'}") as store:
        one_run(store, "delegated", args.delay)  # warm-up: imports, first connections
        for i in range(args.runs):
            for kind in kinds[i % 3 :] + kinds[: i % 3]:  # each goes first in turn
                elapsed, events = one_run(store, kind, args.delay)
                times[kind].append(elapsed)
                if kind == "delegated":
                    spans = [e for e in events if isinstance(e, Delegation)]
                    done = [e for e in spans if e.phase == "finished"]
                    serial.append(sum(e.duration_ms or 0.0 for e in done))
                    first = min(e.ts for e in spans if e.phase == "started")
                    wall.append((max(e.ts for e in done) - first).total_seconds() * 1000)
    med = {k: statistics.median(v) for k, v in times.items()}
    serial_ms = statistics.median(serial)
    figures = {
        "runs": args.runs,
        "delay_s": args.delay,
        "plain_ms": round(med["plain"], 1),
        "planner_ms": round(med["planner"], 1),
        "planner_added_ms": round(med["planner"] - med["plain"], 1),
        "delegated_ms": round(med["delegated"], 1),
        "delegations_serial_ms": round(serial_ms, 1),
        "delegations_wall_ms": round(statistics.median(wall), 1),
        "delegation_speedup": round(serial_ms / statistics.median(wall), 2),
    }
    print(f"plain tool loop (peer):      {figures['plain_ms']:8.1f} ms per run (median of {args.runs})")
    added = figures["planner_added_ms"]
    print(f"planner, same calls:         {figures['planner_ms']:8.1f} ms (+{added:.1f} ms)")
    print(f"two specialists in parallel: {figures['delegated_ms']:8.1f} ms for the whole run")
    print(
        f"  the two delegations: {figures['delegations_wall_ms']:.1f} ms together, {serial_ms:.1f} ms one "
        f"after the other ({figures['delegation_speedup']:.2f}x)"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
