"""Framework overhead per tool step and time to first event, with the scripted model.

Runs a session of N sequential tool steps (a no-op read-only tool, so tool time is ~0 and the
scripted model answers instantly) through the full stack: session service, SQLite store
(every event, message and tool call persisted), middleware (span, breaker, cap, log) and mode
guard. The same N steps also run on a bare pydantic-ai Agent with the same model and tool in
the same process, as the peer: the difference is what our layers cost.

Two paths of ours are measured, each against the bare runtime in the same round: the plain model
loop (``agent.reasoning = false``), the path these figures have always measured, and the default
path since issue 25, the reasoning planner (orchestrator agent with structured output, plan desk,
specialists offered as tools, critic). The headline keys are the plain loop's; the planner's
carry a ``planner_`` prefix.

Prints one line per figure, then a JSON object (last line) with ``step_overhead_ms``,
``first_event_ms`` and the bare-runtime figures. Targets: <= 5 ms per step, <= 50 ms to first event.

    .venv/bin/python benchmarks/runtime_overhead.py [--steps 40] [--repeat 7]
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

from pydantic_ai import Agent

from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.events import RunFinished
from devops_agent.store import Store
from devops_agent.telemetry import configure_logging
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry


def registry() -> ToolRegistry:
    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("bench")

        @ts.tool(read_only=True)
        def noop(i: int) -> ToolResult:
            """Do nothing."""
            return ToolResult.ok({"i": i})

        return ts

    reg = ToolRegistry()
    reg.add_toolset("bench", build)
    return reg


def make_script(steps: int) -> Script:
    turns: list[dict[str, Any]] = [{"tool_calls": [{"tool": "noop", "args": {"i": i}}]} for i in range(steps)]
    turns.append({"text": "done"})
    return Script.model_validate({"turns": turns})


async def ours(service: SessionService, steps: int) -> tuple[float, float]:
    t0 = time.perf_counter()
    first = 0.0
    async for event in service.stream("benchmark", mode="ask"):
        if first == 0.0:
            first = time.perf_counter() - t0
        if isinstance(event, RunFinished):
            assert event.status == "completed", event
    return time.perf_counter() - t0, first


async def bare(steps: int) -> float:
    toolset = registry().build(Settings())["bench"].to_pydantic_ai()
    agent = Agent(ScriptedModel(make_script(steps)), toolsets=[toolset])
    t0 = time.perf_counter()
    async with agent.run_stream_events("benchmark") as stream:
        async for _ in stream:
            pass
    return time.perf_counter() - t0


def main() -> None:
    configure_logging("warning")  # as the CLI does: info lines are off by default
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=40, help="tool steps per run")
    parser.add_argument("--repeat", type=int, default=7, help="runs per figure (median reported)")
    parser.add_argument(
        "--data", type=Path, default=None, help="unused: this benchmark generates its own load"
    )
    args = parser.parse_args()

    figures: dict[str, tuple[list[float], list[float]]] = {"loop": ([], []), "planner": ([], [])}
    bare_step: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        with Store(url) as store:
            for _ in range(args.repeat + 1):  # first round warms imports and caches
                for path, (steps_ms, firsts) in figures.items():
                    settings = Settings(
                        database_url=url,
                        data_dir=Path(tmp),
                        model={"max_tool_steps": args.steps + 5},
                        agent={"reasoning": path == "planner"},
                    )
                    service = SessionService(
                        settings, store, registry=registry(), model=ScriptedModel(make_script(args.steps))
                    )
                    total, first = asyncio.run(ours(service, args.steps))
                    steps_ms.append(total / args.steps * 1000)
                    firsts.append(first * 1000)
                b = asyncio.run(bare(args.steps))
                bare_step.append(b / args.steps * 1000)
    bare_ms = statistics.median(bare_step[1:])
    result: dict[str, Any] = {}
    for path, (steps_ms, firsts) in figures.items():
        prefix = "" if path == "loop" else "planner_"
        step_ms = statistics.median(steps_ms[1:])
        result[f"{prefix}step_overhead_ms"] = round(step_ms, 3)
        result[f"{prefix}first_event_ms"] = round(statistics.median(firsts[1:]), 3)
        result[f"{prefix}added_by_devops_agent_ms"] = round(step_ms - bare_ms, 3)
    result |= {
        "bare_pydantic_ai_step_ms": round(bare_ms, 3),
        "steps": args.steps,
        "repeat": args.repeat,
        "store": "sqlite",
    }
    for path, prefix in (("plain model loop", ""), ("reasoning planner (default)", "planner_")):
        print(
            f"{path}: step_overhead_ms (full stack, per tool step, median of {args.repeat}): "
            f"{result[prefix + 'step_overhead_ms']}"
        )
        print(f"{path}: added by our layers per step: {result[prefix + 'added_by_devops_agent_ms']}")
        print(f"{path}: first_event_ms: {result[prefix + 'first_event_ms']}")
    print(f"bare pydantic-ai per step, same run: {result['bare_pydantic_ai_step_ms']}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
