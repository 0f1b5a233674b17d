"""An evaluation: cases × repeats on one target, run ``parallel`` at a time, scored, summed up.

:func:`select_cases` applies ``--filter`` (a case runs when it has any of the tags; its kind is a
tag too: ``kind:investigate``) and the skip flags. :func:`evaluate` runs each case ``repeat``
times (:func:`~devops_agent.evals.runner.run_case`), scores every run (:func:`score`) and returns
the :class:`~devops_agent.evals.results.EvalResult`, compared with the published baseline for the
same model when one is given.

Scoring follows upstream: with a judge, an ask case passes on score 1 and an investigation when
its score reaches ``evaluation.correctness``; ``expected_sections`` must hold too. Without a judge
the literal checks decide, and a case they cannot decide is *unscored* (counted, never passed).
This module orchestrates; it prints nothing (``on_attempt`` hears of each finished run).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from devops_agent.errors import DevOpsAgentError
from devops_agent.evals.baseline import Baseline, column_for
from devops_agent.evals.cases import Case
from devops_agent.evals.checks import check_literals, check_sections
from devops_agent.evals.judge import Judge, Judgement
from devops_agent.evals.mapping import ToolMapping
from devops_agent.evals.results import (
    Attempt,
    CaseResult,
    EvalResult,
    ScoredBy,
    compare_baseline,
    summarize,
)
from devops_agent.evals.runner import CaseRun, EvalEnv, Target, run_case


@dataclass
class EvalOptions:
    repeat: int = 1
    parallel: int = 1
    tags: Sequence[str] = ()
    include_skipped: bool = False
    label: str | None = None
    baseline: Baseline | None = None
    baseline_column: str | None = None
    """Which column of the baseline is this target (default: matched by model name)."""
    extra: dict[str, object] = field(default_factory=dict)


def select_cases(
    cases: Sequence[Case], tags: Sequence[str], include_skipped: bool
) -> tuple[list[Case], list[str]]:
    """The cases to run, and the ids of those left out (skipped upstream, or not in ``tags``)."""
    chosen: list[Case] = []
    left: list[str] = []
    wanted = {t.lower() for t in tags}
    for case in cases:
        tagged = not wanted or wanted & {t.lower() for t in case.all_tags}
        if tagged and (include_skipped or not case.skip):
            chosen.append(case)
        else:
            left.append(case.id)
    return chosen, left


async def score(case: Case, run: CaseRun, repeat: int, judge: Judge | None) -> Attempt:
    """One run scored: the judge's verdict when there is a judge, else the literal checks."""
    # What the agent was told (the questions, the earlier turns) proves nothing when repeated.
    told = "\n".join([*(t["content"] for t in case.history), *case.questions])
    literals = check_literals(case.expected, run.judged_text, question=told)
    sections = check_sections(case.expected_sections, run.answer)
    sections_ok = all(s.ok for s in sections)
    judgement: Judgement | None = None
    judge_error: str | None = None
    passed: bool | None
    scored_by: ScoredBy
    if judge is not None:
        scored_by = "judge"
        if run.status != "completed" or not run.answer.strip():
            passed = False  # no answer: nothing to judge, and not a pass
        else:
            try:
                judgement = await judge(case.expected, run.judged_text, case.correctness.type)
            except DevOpsAgentError as exc:
                judge_error = exc.message
            except Exception as exc:  # a judge endpoint's failure must not end the evaluation
                judge_error = f"{type(exc).__name__}: {exc}"
            if judgement is None:
                passed = None
            else:
                needed = 1.0 if case.kind == "ask" else case.correctness.expected_score
                passed = judgement.score >= needed and sections_ok
    elif literals.verdict == "unscored" and run.status == "completed":
        scored_by, passed = "none", None
    else:
        scored_by = "literals"
        passed = literals.verdict == "pass" and sections_ok and run.status == "completed"
    return Attempt(
        repeat=repeat,
        passed=passed,
        scored_by=scored_by,
        judge=judgement,
        judge_error=judge_error,
        literals=literals,
        sections=sections,
        status=run.status,
        path=run.path,
        answer=run.answer,
        error=run.error,
        tools_called=run.tools_called,
        calls=run.calls,
        unmatched=run.unmatched,
        steps=run.steps,
        usage=run.usage,
        latency_s=run.latency_s,
        events=run.events,
    )


async def evaluate(
    cases: Sequence[Case],
    target: Target,
    env: EvalEnv,
    mapping: ToolMapping,
    *,
    cases_dir: Path,
    judge: Judge | None = None,
    options: EvalOptions | None = None,
    on_attempt: Callable[[Case, Attempt], None] | None = None,
) -> EvalResult:
    """Run and score every selected case ``options.repeat`` times on ``target``."""
    options = options or EvalOptions()
    chosen, skipped = select_cases(cases, options.tags, options.include_skipped)
    gate = asyncio.Semaphore(max(1, options.parallel))
    attempts: dict[str, list[Attempt]] = {c.id: [] for c in chosen}

    async def one(case: Case, repeat: int) -> None:
        async with gate:
            run = await run_case(case, target, env)
            attempt = await score(case, run, repeat, judge)
        attempts[case.id].append(attempt)
        if on_attempt is not None:
            on_attempt(case, attempt)

    # Repeats go round by round, so a run cut short still has whole repeats to compare.
    for repeat in range(options.repeat):
        await asyncio.gather(*(one(case, repeat) for case in chosen))
    results = [
        CaseResult(
            id=c.id,
            kind=c.kind,
            tags=c.all_tags,
            expected=c.expected,
            recordings=len(c.recordings),
            reachable=sum(1 for r in c.recordings if mapping.reachable(r)),
            attempts=sorted(attempts[c.id], key=lambda a: a.repeat),
        )
        for c in chosen
    ]
    comparison = None
    if options.baseline is not None and not target.offline:
        column = options.baseline_column or column_for(target.name, options.baseline.columns)
        if column is not None:
            comparison = compare_baseline(results, options.baseline, column)
    return EvalResult(
        id=uuid.uuid4().hex,
        created_at=datetime.now(UTC),
        label=options.label,
        target=target.name,
        judge=judge.name if judge else None,
        cases_dir=str(cases_dir),
        mapping=mapping.source,
        options={
            "repeat": options.repeat,
            "parallel": options.parallel,
            "filter": list(options.tags),
            "include_skipped": options.include_skipped,
            "privacy": env.privacy,
            **options.extra,
        },
        skipped=skipped,
        summary=summarize(results, options.repeat, comparison),
        cases=results,
    )
