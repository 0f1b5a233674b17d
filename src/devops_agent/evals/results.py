"""What an evaluation produced: per attempt, per case, and the summary (by tag, spread, baseline).

An :class:`Attempt` is one run of one case, scored: pass or fail (``None`` when nothing could
score it: no judge and no literal to check, or the judge failed), the judge's choice and
reasoning, the literal and section checks, the answer, every event of the run, the replayed
calls (matched or not), tools called, steps, tokens, cost and latency. A :class:`CaseResult`
gathers a case's attempts (``--repeat``): passes out of runs, and ``flaky`` when they disagree.
:func:`summarize` adds them up. Everything here is JSON (pydantic) and stored as is; rendering is
:mod:`devops_agent.evals.tables`. This module computes; it runs and prints nothing.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from devops_agent.evals.baseline import Baseline
from devops_agent.evals.checks import LiteralChecks, SectionCheck
from devops_agent.evals.judge import Judgement

ScoredBy = Literal["judge", "literals", "none"]


class Attempt(BaseModel):
    repeat: int
    passed: bool | None
    scored_by: ScoredBy
    judge: Judgement | None = None
    judge_error: str | None = None
    literals: LiteralChecks
    sections: list[SectionCheck] = Field(default_factory=list)
    status: str
    path: str | None = None
    answer: str = ""
    error: str | None = None
    tools_called: list[str] = Field(default_factory=list)
    calls: list[dict[str, Any]] = Field(default_factory=list)
    unmatched: int = 0
    steps: int = 0
    usage: dict[str, Any] | None = None
    latency_s: float = 0.0
    events: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def cost_usd(self) -> float | None:
        return (self.usage or {}).get("cost_usd")

    @property
    def tokens(self) -> int:
        return int((self.usage or {}).get("total_tokens") or 0)


class CaseResult(BaseModel):
    id: str
    kind: str
    tags: list[str] = Field(default_factory=list)
    expected: list[str] = Field(default_factory=list)
    recordings: int = 0
    reachable: int = 0
    """Recordings some call of ours can be answered with."""
    attempts: list[Attempt] = Field(default_factory=list)
    baseline: str | None = None
    """The published result for this case and model (``1/1``), when there is one."""

    @property
    def runs(self) -> int:
        return len(self.attempts)

    @property
    def passes(self) -> int:
        return sum(1 for a in self.attempts if a.passed)

    @property
    def pass_rate(self) -> float:
        return self.passes / self.runs if self.runs else 0.0

    @property
    def flaky(self) -> bool:
        return 0 < self.passes < self.runs

    @property
    def unscored(self) -> int:
        return sum(1 for a in self.attempts if a.passed is None)


class Spread(BaseModel):
    mean: float
    min: float
    max: float
    stdev: float


class TagScore(BaseModel):
    cases: int
    runs: int
    passes: int
    pass_rate: float


class BaselineComparison(BaseModel):
    source: str
    column: str
    cases: list[str]
    """The cases both we and the published run ran."""
    ours: float
    """Our pass rate on those cases."""
    theirs: float


class Summary(BaseModel):
    cases: int
    runs: int
    passes: int
    pass_rate: float
    spread: Spread
    """Pass rate of each repeat: mean, lowest, highest, standard deviation."""
    flaky: list[str] = Field(default_factory=list)
    unscored: int = 0
    by_tag: dict[str, TagScore] = Field(default_factory=dict)
    literal_runs: dict[str, int] = Field(default_factory=dict)
    """Runs by literal-check verdict: pass, fail, unscored."""
    tool_calls: int = 0
    unmatched_calls: int = 0
    recordings: int = 0
    reachable_recordings: int = 0
    tokens: int = 0
    cost_usd: float | None = None
    judge_cost_usd: float | None = None
    latency_s_mean: float = 0.0
    latency_s_max: float = 0.0
    baseline: BaselineComparison | None = None


class EvalResult(BaseModel):
    id: str
    created_at: datetime
    label: str | None = None
    target: str
    judge: str | None = None
    cases_dir: str
    mapping: str
    options: dict[str, Any] = Field(default_factory=dict)
    skipped: list[str] = Field(default_factory=list)
    """Cases left out: marked ``skip`` upstream (``--include-skipped`` runs them) or filtered."""
    summary: Summary
    cases: list[CaseResult]


def _sum_or_none(values: Iterable[float | None]) -> float | None:
    total = 0.0
    for v in values:
        if v is None:
            return None
        total += v
    return round(total, 6)


def summarize(
    cases: Sequence[CaseResult], repeat: int, baseline: BaselineComparison | None = None
) -> Summary:
    """The figures of an evaluation's case results."""
    attempts = [a for c in cases for a in c.attempts]
    per_repeat = [
        sum(1 for c in cases for a in c.attempts if a.repeat == r and a.passed) / len(cases)
        for r in range(repeat)
        if cases
    ] or [0.0]
    by_tag: dict[str, list[CaseResult]] = {}
    for c in cases:
        for tag in c.tags:
            by_tag.setdefault(tag, []).append(c)
    tags = {
        tag: TagScore(
            cases=len(group),
            runs=sum(c.runs for c in group),
            passes=sum(c.passes for c in group),
            pass_rate=round(sum(c.passes for c in group) / max(1, sum(c.runs for c in group)), 4),
        )
        for tag, group in sorted(by_tag.items())
    }
    literal_runs = {
        v: sum(1 for a in attempts if a.literals.verdict == v) for v in ("pass", "fail", "unscored")
    }
    latencies = [a.latency_s for a in attempts] or [0.0]
    judged = [a.judge for a in attempts if a.judge is not None]
    return Summary(
        cases=len(cases),
        runs=len(attempts),
        passes=sum(1 for a in attempts if a.passed),
        pass_rate=round(sum(1 for a in attempts if a.passed) / max(1, len(attempts)), 4),
        spread=Spread(
            mean=round(statistics.fmean(per_repeat), 4),
            min=round(min(per_repeat), 4),
            max=round(max(per_repeat), 4),
            stdev=round(statistics.pstdev(per_repeat), 4),
        ),
        flaky=[c.id for c in cases if c.flaky],
        unscored=sum(1 for a in attempts if a.passed is None),
        by_tag=tags,
        literal_runs=literal_runs,
        tool_calls=sum(len(a.tools_called) for a in attempts),
        unmatched_calls=sum(a.unmatched for a in attempts),
        recordings=sum(c.recordings for c in cases),
        reachable_recordings=sum(c.reachable for c in cases),
        tokens=sum(a.tokens for a in attempts),
        cost_usd=_sum_or_none(a.cost_usd for a in attempts if a.usage),
        judge_cost_usd=_sum_or_none((j.usage or {}).get("cost_usd") for j in judged) if judged else None,
        latency_s_mean=round(statistics.fmean(latencies), 3),
        latency_s_max=round(max(latencies), 3),
        baseline=baseline,
    )


def compare_baseline(
    cases: Sequence[CaseResult], baseline: Baseline, column: str
) -> BaselineComparison | None:
    """Our pass rate and the published one on the cases both ran; also sets each case's cell."""
    published = baseline.for_column(column)
    both = [c for c in cases if c.id in published and c.runs]
    for c in cases:
        if c.id in published:
            p, r = published[c.id]
            c.baseline = f"{p}/{r}"
    if not both:
        return None
    ours = sum(c.pass_rate for c in both) / len(both)
    theirs = sum(published[c.id][0] / max(1, published[c.id][1]) for c in both) / len(both)
    return BaselineComparison(
        source=baseline.source,
        column=column,
        cases=[c.id for c in both],
        ours=round(ours, 4),
        theirs=round(theirs, 4),
    )
