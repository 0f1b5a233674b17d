"""Agent evaluation on HolmesGPT's dev cases and ours: scripted plumbing, the model-free score,
and a real model's score when an endpoint is configured.

``--scripted`` (CI, no model): every dev case (skip flags included) and every case of ours
(``benchmarks/eval_cases.py``, built now) runs three ways through the real session service and
tool pipeline, privacy guard on: a scripted model answering right from the recorded evidence, one
answering wrong (both judged by the scripted judge), and the offline runbooks (no model, scored
by the literal checks; by ``--judge`` too when one is named). Figures: ``cases``,
``right_passed`` (right answers that pass), ``wrong_failed`` (wrong answers the judge rejects),
``offline_pass_rate`` (model-free passes over all cases; a case the literals cannot decide counts
as not passed), ``offline_scorable``, ``unmatched_calls``, ``canary_leaks`` (model requests that
held the canary's password or e-mail: must be 0).

``--model M --judge J``: the real figure for a session with an endpoint: ``pass_rate`` of model M
on the same cases, judged by J, beside the published baseline for M where there is one. Peer in
the same run: the offline runbooks on the same cases (no peer program exists: HolmesGPT's own
numbers are the published baseline).

    .venv/bin/python benchmarks/agent_eval.py --scripted [--data DIR] [--parallel 4]
    .venv/bin/python benchmarks/agent_eval.py --model openai:gpt-4.1 --judge openai:gpt-4.1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo

from devops_agent.agent.scripted import ScriptedModel
from devops_agent.config import Settings, load_settings
from devops_agent.evals.cases import Case, load_cases
from devops_agent.evals.harness import EvalOptions
from devops_agent.evals.judge import resolve_judge
from devops_agent.evals.mapping import ToolMapping
from devops_agent.evals.results import EvalResult
from devops_agent.evals.runner import Target, offline_target
from devops_agent.evals.scripted import right_model, wrong_model
from devops_agent.evals.session import model_target, run_evaluation
from devops_agent.telemetry import configure_logging

sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_cases  # noqa: E402 - a script beside this one, not a package
from bench_data import DEFAULT, data_dir  # noqa: E402

FOLDER = "holmesgpt_evals"


class Watched(ScriptedModel):
    """A scripted model that keeps every text it was sent (prompts and tool results)."""

    def __init__(self, inner: ScriptedModel, seen: list[str]) -> None:
        super().__init__(inner.script)
        self.seen = seen

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> Any:
        self._keep(messages)
        return super()._respond(messages, info)

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> Any:
        self._keep(messages)
        async for chunk in super()._stream(messages, info):
            yield chunk

    def _keep(self, messages: list[ModelMessage]) -> None:
        for m in messages:
            if isinstance(m, ModelRequest):
                for p in m.parts:
                    if isinstance(p, ToolReturnPart | UserPromptPart):
                        self.seen.append(json.dumps(p.content, default=str))


def settings_in(workdir: Path) -> Settings:
    """Settings of a clean run: data under ``workdir``, nothing of the caller's configuration."""
    return Settings(data_dir=workdir / "data")


def all_cases(dev: Path | None, own: Path) -> list[Case]:
    return [*(load_cases(dev) if dev else []), *load_cases(own)]


def _line(name: str, result: EvalResult, seconds: float) -> None:
    s = result.summary
    print(
        f"{name:<16} pass {s.passes}/{s.runs} = {s.pass_rate:.1%}  literals {s.literal_runs}  "
        f"unmatched {s.unmatched_calls}/{s.tool_calls}  {seconds:.1f} s"
    )


async def scripted(dev: Path | None, own: Path, parallel: int, judge: str | None) -> dict[str, Any]:
    """The three scripted runs; the figures of the JSON line."""
    cases = all_cases(dev, own)
    mapping = ToolMapping.load()
    seen: list[str] = []
    scripted_judge = resolve_judge("scripted")
    out: dict[str, Any] = {"cases": len(cases)}
    with tempfile.TemporaryDirectory() as tmp:
        settings = settings_in(Path(tmp))
        options = EvalOptions(parallel=parallel, include_skipped=True)
        runs: dict[str, EvalResult] = {}
        for target in (
            Target("scripted-right", lambda c: Watched(right_model(c, mapping), seen)),
            Target("scripted-wrong", lambda c: Watched(wrong_model(c, mapping), seen)),
            offline_target(),
        ):
            started = time.monotonic()
            the_judge = (
                scripted_judge if target.name != "offline" else (resolve_judge(judge) if judge else None)
            )
            result = await run_evaluation(
                settings,
                own,
                target,
                judge=the_judge,
                options=EvalOptions(parallel=options.parallel, include_skipped=True),
                mapping=mapping,
                cases=cases,
                privacy=True,
            )
            runs[target.name] = result
            _line(target.name, result, time.monotonic() - started)
    right, wrong, offline = runs["scripted-right"], runs["scripted-wrong"], runs["offline"]
    wrong_attempts = [a for c in wrong.cases for a in c.attempts]
    out["right_passed"] = right.summary.passes
    out["wrong_failed"] = sum(1 for a in wrong_attempts if a.judge is not None and a.judge.choice == "B")
    out["wrong_passed_by_rule"] = wrong.summary.passes
    out["offline_pass_rate"] = offline.summary.pass_rate
    out["offline_passed"] = offline.summary.passes
    out["offline_scorable"] = offline.summary.runs - offline.summary.unscored
    out["unmatched_calls"] = right.summary.unmatched_calls
    out["canary_leaks"] = sum(
        1 for text in seen if eval_cases.CANARY_SECRET in text or eval_cases.CANARY_EMAIL in text
    )
    out["recordings_reachable"] = f"{right.summary.reachable_recordings}/{right.summary.recordings}"
    print(f"right answers passing: {out['right_passed']}/{len(cases)}")
    print(
        f"wrong answers the judge rejects: {out['wrong_failed']}/{len(cases)} "
        f"({out['wrong_passed_by_rule']} still pass: upstream asserts no score on them)"
    )
    print(
        f"model-free (offline runbooks): {offline.summary.passes}/{len(cases)} = "
        f"{offline.summary.pass_rate:.1%}"
        f" ({out['offline_scorable']} decidable by literals)"
    )
    print(f"canary values the model read: {out['canary_leaks']}")
    return out


async def real(
    dev: Path | None, own: Path, model: str, judge: str, parallel: int, repeat: int
) -> dict[str, Any]:
    """A configured model on the cases, and the offline runbooks beside it."""
    cases = all_cases(dev, own)
    settings = load_settings(None, model={"name": model}).settings  # the config file and environment
    the_judge = resolve_judge(judge, settings.evals.judge)
    out: dict[str, Any] = {"cases": len(cases), "model": model, "judge": judge}
    for target in (model_target(settings), offline_target()):
        started = time.monotonic()
        result = await run_evaluation(
            settings,
            dev or own,
            target,
            judge=the_judge,
            options=EvalOptions(parallel=parallel, repeat=repeat),
            cases=cases,
        )
        _line(target.name, result, time.monotonic() - started)
        key = "offline" if target.offline else "model"
        out[f"{key}_pass_rate"] = result.summary.pass_rate
        out[f"{key}_spread"] = result.summary.spread.model_dump()
        if result.summary.baseline:
            b = result.summary.baseline
            print(f"published {b.column} on {len(b.cases)} shared cases: {b.theirs:.1%}; ours {b.ours:.1%}")
            out["baseline"] = b.model_dump()
        out[f"{key}_cost_usd"] = result.summary.cost_usd
        out[f"{key}_judge_cost_usd"] = result.summary.judge_cost_usd
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT, help="benchmark data (holds holmesgpt_evals/)")
    parser.add_argument("--scripted", action="store_true", help="CI: scripted models and judge, no endpoint")
    parser.add_argument("--model", help="provider:model to evaluate (needs an endpoint)")
    parser.add_argument("--judge", help="provider:model that judges (with --model; optional with --scripted)")
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--own-only", action="store_true", help="only our cases (no benchmark data needed)")
    args = parser.parse_args(argv)
    if not args.scripted and not args.model:
        parser.error("give --scripted, or --model with --judge")
    if args.model and not args.judge:
        parser.error("--model needs --judge (the model that scores the answers)")
    configure_logging("error")
    dev = None if args.own_only else data_dir(args.data, FOLDER, "cases_index.jsonl")
    with tempfile.TemporaryDirectory() as tmp:
        own = Path(tmp) / "ours"
        eval_cases.build(own)
        if args.scripted:
            figures = asyncio.run(scripted(dev, own, args.parallel, args.judge))
        else:
            figures = asyncio.run(real(dev, own, args.model, args.judge, args.parallel, args.repeat))
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
