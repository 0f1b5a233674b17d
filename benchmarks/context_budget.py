"""A scripted long investigation against a 32k-token model: does every request fit, and is what
the first steps found still in the final report?

The run is real: the session service, the model runner with its context policies, the tool
pipeline (large results digested by type, the raw kept), the store (SQLite in a temporary
directory). Only the model is scripted, and one tool: ``logs_fetch(step)`` returns ~200 KB of
real log lines (Loghub-2k, read from ``--data`` at run time, a different system each step) with
one planted incident per step (``ledger-db-<step>`` refusing connections, a handful of lines
among thousands). The scripted model, at each of ``--steps`` (60) steps, notes what it can see of
the latest result ("Finding: step N: …" when the planted incident is visible to it) and calls the
next step; at the end it writes its report from every finding still in its context.

Measured, for the budget's own counter set to the model's tokenizer and to the calibrated
estimate (the two ways a real model is counted), and for a naive peer in the same run (the
oldest turns dropped until the request fits, no summaries):

* ``over_window`` — requests whose real size (tiktoken o200k on what the model received:
  messages, tool definitions, instructions) exceeds the 32,768-token window (must be 0);
* ``early_findings_kept`` — the fraction of the first ``--early`` (10) steps' findings present in
  the final report;
* tokens sent per request with the budget, and without it (the whole history with digests, as
  the budget counted it before compacting; and with the output cap only, as before this work);
* ``tokens_saved`` — tokens not sent over the run thanks to the budget; compaction time per
  request (mean, p95, max).

LAST line: JSON with ``over_window``, ``early_findings_kept``, ``tokens_saved`` (the tokenizer
run) and every configuration's figures.

    .venv/bin/python benchmarks/context_budget.py [--data DIR] [--steps 60] [--kb 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel  # noqa: E402

from bench_data import DEFAULT, data_dir  # noqa: E402
from devops_agent.agent.session import SessionService  # noqa: E402
from devops_agent.analysis.logline import extract_message, is_error  # noqa: E402
from devops_agent.config import Settings  # noqa: E402
from devops_agent.events import ContextCompacted, RunFinished  # noqa: E402
from devops_agent.policies.context.compaction import split_units  # noqa: E402
from devops_agent.policies.context.tokens import (  # noqa: E402
    TiktokenCounter,
    count_messages,
    count_tools,
)
from devops_agent.policies.limits import cap_result  # noqa: E402
from devops_agent.store import Store  # noqa: E402
from devops_agent.telemetry import configure_logging  # noqa: E402
from devops_agent.tools.base import ToolResult, ToolsetBuilder  # noqa: E402
from devops_agent.tools.registry import ToolRegistry  # noqa: E402

WINDOW = 32_768
MODEL = "bench:32k"
FINDING = re.compile(r"Finding: step (\d+):")
PLANTED = re.compile(r"ledger-db-(\d+)")


def payloads(data: Path, steps: int, kb: int, seed: int = 7) -> list[str]:
    """One ~``kb`` KB log per step: Loghub lines of one system that report no error (the
    background), a noisier recurring error (more lines), and the step's incident (fewer lines):
    the incident is the second error group of its result, visible in the digest while it is
    fresh, not in its one-line headline once compacted."""
    root = data_dir(data, "loghub2k")
    systems = sorted(p for p in root.glob("*/*_2k.log"))
    if not systems:
        raise SystemExit(f"context_budget.py: --data {data}: no loghub2k/*/*_2k.log files")
    rng = random.Random(seed)
    out = []
    for step in range(1, steps + 1):
        raw = systems[(step - 1) % len(systems)].read_text(errors="replace").splitlines()
        lines = [ln for ln in raw if ln.strip() and not is_error(*extract_message(ln))]
        text: list[str] = []
        size = 0
        while size < kb * 1024:
            line = rng.choice(lines)
            text.append(line)
            size += len(line) + 1
        planted = [
            (40, "ERROR cache: timeout talking to redis-main after 500ms (attempt {n})"),
            (12, f"ERROR payments: connection to ledger-db-{step}:5432 refused (ECONNREFUSED) tx={{n}}"),
        ]
        for count, template in planted:
            for _ in range(count):
                stamp = f"2024-05-01T10:{step % 60:02d}:{rng.randrange(60):02d}Z"
                text.insert(rng.randrange(len(text)), f"{stamp} {template.format(n=rng.randrange(10**6))}")
        out.append("\n".join(text))
    return out


def registry(texts: list[str]) -> ToolRegistry:
    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("bench", "benchmark logs")

        @ts.tool(read_only=True)
        def logs_fetch(step: int) -> ToolResult:
            """Fetch the logs of one step of the investigation."""
            return ToolResult.ok(texts[step - 1])

        return ts

    reg = ToolRegistry()
    reg.add_toolset("bench", build)
    return reg


@dataclass
class Observer:
    """The scripted model: notes findings, calls the next step, reports; measures what it got."""

    steps: int
    trim: Any = None
    """The peer's sliding window: what the model reads of the history it was sent."""
    counter: TiktokenCounter = field(default_factory=lambda: TiktokenCounter("o200k_base"))
    step: int = 0
    sent: list[int] = field(default_factory=list)
    report: str = ""

    def measure(self, messages: list[ModelMessage], info: AgentInfo) -> None:
        tools = count_tools(self.counter, info.function_tools)
        instructions = self.counter.count(info.instructions or "")
        self.sent.append(tools + instructions + count_messages(self.counter, messages))

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if self.trim is not None:
            messages = self.trim(messages)
        self.measure(messages, info)
        self.step += 1
        parts: list[Any] = []
        latest = messages[-1] if messages else None
        if isinstance(latest, ModelRequest):
            seen = " ".join(str(getattr(p, "content", "")) for p in latest.parts)
            for n in sorted({int(x) for x in PLANTED.findall(seen)}):
                parts.append(TextPart(f"Finding: step {n}: ledger-db-{n} refused connections."))
        if self.step <= self.steps:
            parts.append(ToolCallPart("logs_fetch", {"step": self.step}, tool_call_id=f"c{self.step}"))
            return ModelResponse(parts=parts)
        everything = " ".join(str(getattr(p, "content", "")) for m in messages for p in m.parts) + " ".join(
            p.content for p in parts if isinstance(p, TextPart)
        )
        found = sorted({int(n) for n in FINDING.findall(everything)})
        self.report = "Report.\n" + "\n".join(
            f"Finding: step {n}: ledger-db-{n} refused connections." for n in found
        )
        return ModelResponse(parts=[TextPart(self.report)])

    async def stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        response = self.respond(messages, info)
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        texts = [p.content for p in response.parts if isinstance(p, TextPart)]
        if texts:
            yield " ".join(texts)
        if calls:
            yield {
                i: DeltaToolCall(name=c.tool_name, json_args=json.dumps(c.args), tool_call_id=c.tool_call_id)
                for i, c in enumerate(calls)
            }


def naive_window(limit: int, counter: TiktokenCounter) -> Any:
    """The peer: drop the oldest turns (a call with its result) until the request fits; no summary."""

    def process(messages: list[ModelMessage]) -> list[ModelMessage]:
        head, units = split_units(messages)
        while len(units) > 1 and count_messages(counter, head + [m for u in units for m in u]) > limit:
            units.pop(0)
        return head + [m for u in units for m in u]

    return process


def settings_for(root: Path, counter: str, budget: bool) -> Settings:
    return Settings(
        database_url=f"sqlite:///{root / 'bench.db'}",
        data_dir=root,
        model={
            "name": MODEL,
            "max_tool_steps": 200,
            "profiles": {MODEL: {"context_window": WINDOW, "max_output": 4096, "tokenizer": "o200k_base"}},
        },
        context={"budget": budget, "token_counter": "estimate" if counter == "estimate" else "auto"},
    )


def run(texts: list[str], steps: int, early: int, mode: str) -> dict[str, Any]:
    """One investigation; ``mode``: ``tokenizer`` or ``estimate`` (our budget counting with the
    model's tokenizer or the calibrated estimate), ``naive`` (the peer, no budget: the model reads
    the latest turns that fit, as a client-side sliding window would send them)."""
    observer = Observer(
        steps, trim=naive_window(WINDOW - 4096, TiktokenCounter("o200k_base")) if mode == "naive" else None
    )
    model = FunctionModel(observer.respond, stream_function=observer.stream, model_name=MODEL)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        settings = settings_for(root, mode, budget=mode != "naive")
        started = time.perf_counter()
        with Store(settings.resolved_database_url()) as store:
            service = SessionService(settings, store, registry=registry(texts), model=model, privacy=False)
            events, final = asyncio.run(service.run("Why do payments fail?", mode="ask"))
        elapsed = time.perf_counter() - started
    assert isinstance(final, RunFinished)
    found = {int(n) for n in FINDING.findall(observer.report)}
    context = (final.usage or {}).get("context") or {}
    out: dict[str, Any] = {
        "status": final.status,
        "requests": len(observer.sent),
        "over_window": sum(1 for t in observer.sent if t > WINDOW),
        "early_findings_kept": round(len([n for n in found if n <= early]) / early, 3),
        "findings_kept": round(len(found) / steps, 3),
        "sent_max": max(observer.sent or [0]),
        "sent_mean": round(statistics.fmean(observer.sent or [0])),
        "sent_total": sum(observer.sent),
        "compaction_events": sum(1 for e in events if isinstance(e, ContextCompacted)),
        "seconds": round(elapsed, 2),
    }
    if context:
        out |= {
            "full_max": context["tokens_full_max"],
            "full_total": context["tokens_full_total"],
            "over_window_without_budget": context["over_window_without_budget"],
            "compaction_ms_mean": context["compaction_ms_mean"],
            "compaction_ms_p95": context["compaction_ms_p95"],
            "compaction_ms_max": context["compaction_ms_max"],
            "tokens_saved": context["tokens_full_total"] - context["tokens_sent_total"],
        }
    errors = [getattr(e, "message", "") for e in events if e.type == "error"]
    if errors:
        out["error"] = errors[0]
    return out


def capped_only(texts: list[str], cap_chars: int) -> dict[str, Any]:
    """What the run would send without digests or budget (the output cap only, as before)."""
    counter = TiktokenCounter("o200k_base")
    per = [counter.count(json.dumps(cap_result(ToolResult.ok(t), cap_chars).data)) for t in texts]
    totals = [sum(per[:k]) for k in range(1, len(per) + 1)]
    return {
        "per_result": round(statistics.fmean(per)),
        "over_window": sum(1 for t in totals if t > WINDOW),
        "last_request": totals[-1],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--kb", type=int, default=200)
    ap.add_argument("--early", type=int, default=10)
    args = ap.parse_args()
    configure_logging("warning")
    texts = payloads(args.data, args.steps, args.kb)
    print(
        f"{args.steps} tool calls × {statistics.fmean(len(t) for t in texts) / 1024:.0f} KB each, "
        f"window {WINDOW:,} tokens"
    )
    results = {mode: run(texts, args.steps, args.early, mode) for mode in ("tokenizer", "estimate", "naive")}
    results["cap_only"] = capped_only(texts, Settings().tools.output_cap_chars)
    for mode, r in results.items():
        print(f"{mode:10} " + ", ".join(f"{k}={v}" for k, v in r.items()))
    ours = results["tokenizer"]
    print(
        json.dumps(
            {
                "over_window": max(results["tokenizer"]["over_window"], results["estimate"]["over_window"]),
                "early_findings_kept": ours["early_findings_kept"],
                "tokens_saved": ours.get("tokens_saved", 0),
                "runs": results,
            }
        )
    )


if __name__ == "__main__":
    main()
