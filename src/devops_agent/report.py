"""The structured report every run ends with, and its Markdown rendering.

Both paths produce the same :class:`Report`: the offline runbook engine builds it from analyzer
findings, and the model loop will fill it from the model's structured output. A report always
says what could not be gathered (``gaps``), so an empty findings list is never mistaken for a
clean bill of health.

Foundation, so the agent, the runbook engine and the interfaces all build and print the same
report. This module holds data and pure formatting only: it must not call tools, models or the
store, and it must not import from the runbook engine, the agent or any interface.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from devops_agent.evidence import Evidence, TimelineEntry, build_timeline, entry

Severity = Literal["critical", "high", "medium", "low", "info"]
Verdict = Literal["problems_found", "all_clear", "inconclusive"]
"""What a report concludes, derived from its evidence (see :func:`derive_verdict`)."""

SEVERITY_ORDER: tuple[Severity, ...] = ("critical", "high", "medium", "low", "info")
"""Most severe first; the rank of a severity is its index here."""


def _now() -> datetime:
    return datetime.now(UTC)


class Finding(BaseModel):
    """One thing the investigation found, with the evidence that shows it."""

    severity: Severity
    title: str
    detail: str = ""
    evidence: list[str] = Field(default_factory=list, description="quoted lines from tool output")
    source: str = Field("", description="the tool (and runbook step) the evidence came from")
    next_steps: list[str] = Field(default_factory=list)
    citations: list[str] = Field(
        default_factory=list, description="ids of the tool calls whose output shows this finding"
    )


Confidence = Literal["high", "medium", "low"]


class Hypothesis(BaseModel):
    """A likely explanation the evidence points to but does not prove."""

    statement: str
    confidence: Confidence = "low"
    citations: list[str] = Field(default_factory=list, description="tool call ids it leans on")
    why: str = Field("", description="what supports it, and what would confirm or refute it")


class Disagreement(BaseModel):
    """Where specialists (a council) came to different conclusions: each one's position."""

    topic: str
    positions: dict[str, str] = Field(default_factory=dict, description="specialist -> what it concluded")
    resolution: str = Field("", description="how the synthesizer weighed them, or that it could not")


class PlanStepOutcome(BaseModel):
    """One step of the plan the run followed, and how it went."""

    title: str
    status: Literal["pending", "running", "done", "skipped", "failed"]
    mutating: bool = False


class PlanOutcome(BaseModel):
    """The plan a person approved (or the policy ran), each step's status and the deviations."""

    goal: str
    revision: int = 1
    approved_by: str = ""
    steps: list[PlanStepOutcome] = Field(default_factory=list)
    deviations: list[str] = Field(default_factory=list)


class CriticChange(BaseModel):
    """What the critic did to one claim, and why."""

    title: str
    action: Literal["removed", "downgraded", "quote_removed", "citation_removed"]
    reasons: list[str] = Field(default_factory=list)


class CriticNotes(BaseModel):
    """What verification checked and changed before the answer was returned."""

    rounds: int = 0
    replans: int = 0
    max_replans: int = 0
    model_critic: bool = False
    model_critic_error: str | None = None
    issues_fixed_by_replan: list[str] = Field(default_factory=list)
    changes: list[CriticChange] = Field(default_factory=list)
    missing_evidence: list[str] = Field(default_factory=list)


class Gap(BaseModel):
    """Something the run tried to gather or analyze and could not, and what to do about it."""

    step: str
    tool: str
    reason: str
    hint: str | None = None


class Checked(BaseModel):
    """What one check read inside the report's window: the evidence an all-clear rests on.

    ``read`` counts what was read in the window (log lines, series, commits, entries; a snapshot
    of current state counts 1). Zero is no evidence, unless ``empty_is_answer``: a repository's
    history with no commit in the window is an answer, a log with no line in it is not.
    """

    model_config = ConfigDict(frozen=True)

    step: str
    tool: str
    read: int = Field(ge=0)
    unit: str
    detail: str = ""
    empty_is_answer: bool = False

    @property
    def counts_as_read(self) -> bool:
        """Whether this check read something that supports a conclusion."""
        return self.read > 0 or self.empty_is_answer


def derive_verdict(findings: Iterable[Finding], gaps: Iterable[Gap], checks: Iterable[Checked]) -> Verdict:
    """The verdict the evidence supports.

    ``problems_found``: a finding above info. ``all_clear``: at least one check, every check read
    data in the window (:attr:`Checked.counts_as_read`) and nothing could not be gathered.
    ``inconclusive``: anything else — a check that read nothing is not a clean result.
    """
    if any(f.severity != "info" for f in findings):
        return "problems_found"
    checked = list(checks)
    if not checked or any(True for _ in gaps) or not all(c.counts_as_read for c in checked):
        return "inconclusive"
    return "all_clear"


class Report(BaseModel):
    """The final answer of a run: summary, ranked findings, next steps, gaps and what was read."""

    title: str
    question: str = ""
    summary: str = ""
    findings: list[Finding] = Field(default_factory=list)
    next_steps: list[str] = Field(default_factory=list)
    gaps: list[Gap] = Field(default_factory=list)
    checks: list[Checked] = Field(default_factory=list, description="what each check read in the window")
    runbooks: list[str] = Field(default_factory=list)
    generated_at: datetime = Field(default_factory=_now)
    host: str | None = None
    window: str | None = None
    stats: dict[str, Any] = Field(default_factory=dict)
    inputs_from_question: dict[str, str] = Field(
        default_factory=dict, description="inputs read from the question's words, not given as options"
    )
    hypotheses: list[Hypothesis] = Field(default_factory=list)
    disagreements: list[Disagreement] = Field(default_factory=list)
    plan: PlanOutcome | None = None
    critic: CriticNotes | None = None
    timeline: list[TimelineEntry] = Field(
        default_factory=list, description="the incident's moments and the tool calls, in time order"
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def verdict(self) -> Verdict:
        """Derived from findings, gaps and checks on every read: it cannot claim more than they show."""
        return derive_verdict(self.findings, self.gaps, self.checks)


@dataclass(frozen=True)
class CallMoment:
    """One tool call of a run as the timeline sees it: when it ran and what it showed."""

    tool_call_id: str
    tool: str
    started_at: datetime
    ended_at: datetime
    status: str
    evidence: Evidence | None = None
    step: str = ""


def incident_timeline(
    calls: Sequence[CallMoment],
    findings: Sequence[Finding] = (),
    *,
    alert_start: datetime | None = None,
    alert_label: str = "",
) -> list[TimelineEntry]:
    """The run's timeline: the alert's start, the moments the calls' evidence dates (anomalies,
    error onsets and bursts, commits, deploys), each call, and each finding at the time the last
    call it rests on (its citations, else its ``source`` tool) came back. Bounded and in time
    order (:func:`devops_agent.evidence.build_timeline`)."""
    entries: list[TimelineEntry] = []
    if alert_start is not None:
        entries.append(entry(alert_start, "alert_start", alert_label or "the alert started"))
    for call in calls:
        what = f"{call.tool} ({call.step})" if call.step else call.tool
        entries.append(entry(call.started_at, "tool_call", f"{what}: {call.status}", call.tool_call_id))
        if call.evidence is not None:
            entries += call.evidence.for_call(call.tool_call_id).timeline
    by_id = {c.tool_call_id: c for c in calls}
    for finding in findings:
        behind = [by_id[c] for c in finding.citations if c in by_id]
        if not behind and finding.source:
            behind = [c for c in calls if finding.source.startswith(c.tool) or c.tool in finding.source]
        if behind:
            last = max(behind, key=lambda c: c.ended_at)
            label = f"[{finding.severity.upper()}] {finding.title}"
            entries.append(entry(last.ended_at, "finding", label, last.tool_call_id))
    return build_timeline(entries)


VERDICT_WORDS: dict[Verdict, str] = {
    "problems_found": "problems found",
    "all_clear": "all clear: every check read its source in the window and found nothing wrong",
    "inconclusive": "inconclusive: could not tell, some checks read no data (see what could not be gathered)",
}


def severity_rank(severity: Severity) -> int:
    """0 for critical up to 4 for info."""
    return SEVERITY_ORDER.index(severity)


def rank_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Findings ordered by severity, most severe first; ties keep their original order."""
    return sorted(findings, key=lambda f: severity_rank(f.severity))


def _read_words(checks: Sequence[Checked]) -> str:
    """``1,204 log lines, 3 series`` — what the checks read, summed per unit."""
    totals: dict[str, int] = {}
    for check in checks:
        totals[check.unit] = totals.get(check.unit, 0) + check.read
    return ", ".join(f"{n:,} {unit}" for unit, n in totals.items())


def summarize(
    findings: list[Finding],
    *,
    host: str | None = None,
    window: str | None = None,
    gaps: Sequence[Gap] = (),
    checks: Sequence[Checked] = (),
) -> str:
    """One paragraph from the evidence: the verdict, counts by severity, the top finding, what was
    read, and what could not be gathered (the first reason) when that makes the answer uncertain."""
    where = f" on {host}" if host else ""
    when = f" ({window})" if window else ""
    verdict = derive_verdict(findings, gaps, checks)
    problems = [f for f in rank_findings(findings) if f.severity != "info"]
    read = _read_words(checks)
    if verdict == "problems_found":
        counts = Counter(f.severity for f in problems)
        by_sev = ", ".join(f"{counts[s]} {s}" for s in SEVERITY_ORDER if counts[s])
        noun = "problem" if len(problems) == 1 else "problems"
        text = (
            f"Found {len(problems)} {noun}{where}{when}: {by_sev}. "
            f"Most severe: [{problems[0].severity.upper()}] {problems[0].title}."
        )
    elif verdict == "all_clear":
        text = (
            f"No problems found{where}{when}: every check read its source in the window ({read}) "
            "and nothing is above info."
        )
    else:
        if read and any(c.read for c in checks):
            text = (
                f"Inconclusive{where}{when}: no problem in what was read ({read}), "
                "but not everything could be checked"
            )
        else:
            text = f"Inconclusive{where}{when}: nothing could be read"
        first = next(iter(gaps), None)
        text += f" — {_one_line(first.reason)}." if first is not None else "."
    if gaps:
        noun = "item" if len(gaps) == 1 else "items"
        text += f" {len(gaps)} {noun} could not be gathered; see the last section."
    return text


def _fence(lines: list[str]) -> str:
    # A fence longer than any backtick run in the content, so quoted output cannot close it early.
    longest = max((_longest_backticks(line) for line in lines), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([f"{fence}text", *lines, fence])


def _longest_backticks(line: str) -> int:
    best = run = 0
    for ch in line:
        run = run + 1 if ch == "`" else 0
        best = max(best, run)
    return best


def _one_line(text: str) -> str:
    return " ".join(text.split())


def render_markdown(report: Report) -> str:
    """The report as Markdown; every section is present even when it is empty."""
    out: list[str] = [f"# {_one_line(report.title)}", ""]
    if report.question:
        out += [f"**Question:** {_one_line(report.question)}", ""]
    if report.inputs_from_question:
        named = ", ".join(f"{k} `{_one_line(v)}`" for k, v in report.inputs_from_question.items())
        out += [f"**Taken from the question:** {named} (not given as an option; name it to override)", ""]
    summary = report.summary or summarize(report.findings, gaps=report.gaps, checks=report.checks)
    out += ["## Summary", "", f"**Verdict:** {VERDICT_WORDS[report.verdict]}", "", summary, ""]

    out += ["## Findings", ""]
    ranked = rank_findings(report.findings)
    if not ranked:
        out += ["No findings.", ""]
    for finding in ranked:
        out += [f"### [{finding.severity.upper()}] {_one_line(finding.title)}", ""]
        if finding.detail:
            out += [finding.detail, ""]
        if finding.evidence:
            out += [_fence(finding.evidence), ""]
        if finding.source:
            out += [f"*Source: {finding.source}*", ""]
        if finding.citations:
            out += ["*Cites: " + ", ".join(f"`{c}`" for c in finding.citations) + "*", ""]
        if finding.next_steps:
            out += ["Next steps:", *(f"- {step}" for step in finding.next_steps), ""]

    out += _hypotheses(report.hypotheses) + _disagreements(report.disagreements) + _timeline(report.timeline)

    out += ["## Next steps", ""]
    if report.next_steps:
        out += [f"{i}. {step}" for i, step in enumerate(report.next_steps, 1)] + [""]
    else:
        out += ["None suggested.", ""]

    out += ["## What was read", ""]
    if report.checks:
        for check in report.checks:
            line = f"- **{check.step}** (`{check.tool}`): {check.read:,} {check.unit}"
            out.append(line + (f" — {_one_line(check.detail)}" if check.detail else ""))
        out.append("")
    else:
        out += ["Nothing was recorded as read: the report cannot be an all-clear.", ""]

    out += ["## What could not be gathered", ""]
    if report.gaps:
        for gap in report.gaps:
            line = f"- **{gap.step}** (`{gap.tool}`): {_one_line(gap.reason)}"
            if gap.hint:
                line += f" — {_one_line(gap.hint)}"
            out.append(line)
        out.append("")
    else:
        out += ["Nothing — every step succeeded.", ""]

    out += _plan(report.plan) + _critic(report.critic)

    footer = [f"generated {report.generated_at.strftime('%Y-%m-%d %H:%M:%S %Z').strip()}"]
    if report.runbooks:
        footer.insert(0, "runbooks: " + ", ".join(report.runbooks))
    out += ["---", "", "*" + " · ".join(footer) + "*", ""]
    return "\n".join(out)


# The sections below appear only when a report has them (a model's or a council's report), so a
# runbook report renders as it always did, and every report renders by this one function.


def _hypotheses(hypotheses: Sequence[Hypothesis]) -> list[str]:
    if not hypotheses:
        return []
    out = ["## Hypotheses", ""]
    for h in hypotheses:
        line = f"- **{h.confidence}** — {_one_line(h.statement)}"
        if h.why:
            line += f" ({_one_line(h.why)})"
        if h.citations:
            line += " · cites " + ", ".join(f"`{c}`" for c in h.citations)
        out.append(line)
    return [*out, ""]


def _disagreements(disagreements: Sequence[Disagreement]) -> list[str]:
    if not disagreements:
        return []
    out = ["## Disagreements", ""]
    for d in disagreements:
        out.append(f"- **{_one_line(d.topic)}**")
        out += [f"  - {who}: {_one_line(said)}" for who, said in d.positions.items()]
        if d.resolution:
            out.append(f"  - weighed: {_one_line(d.resolution)}")
    return [*out, ""]


def _timeline(timeline: Sequence[TimelineEntry]) -> list[str]:
    # The incident's moments only: every tool call is in the run's events already.
    moments = [e for e in timeline if e.kind != "tool_call"]
    if not moments:
        return []
    out = ["## Timeline", ""]
    for e in moments:
        when = e.at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
        cites = f" · `{e.tool_call_id}`" if e.tool_call_id else ""
        out.append(f"- {when} UTC — {e.kind.replace('_', ' ')}: {_one_line(e.label)}{cites}")
    return [*out, ""]


_STEP_MARK = {"done": "✓", "failed": "✗", "skipped": "–", "running": "…", "pending": " "}


def _plan(plan: PlanOutcome | None) -> list[str]:
    if plan is None:
        return []
    who = f", approved by {plan.approved_by}" if plan.approved_by else ""
    out = ["## Plan", "", f"**Goal:** {_one_line(plan.goal)} (revision {plan.revision}{who})", ""]
    for i, step in enumerate(plan.steps, 1):
        change = " · changes things" if step.mutating else ""
        out.append(f"{i}. [{_STEP_MARK[step.status]}] {_one_line(step.title)} — {step.status}{change}")
    out.append("")
    if plan.deviations:
        out += ["Deviations from the plan:", *(f"- {_one_line(d)}" for d in plan.deviations), ""]
    return out


def _critic(critic: CriticNotes | None) -> list[str]:
    if critic is None:
        return []
    how = "deterministic checks" + (" and a model critic" if critic.model_critic else "")
    if critic.model_critic_error:
        how += f" (the model critic failed: {_one_line(critic.model_critic_error)})"
    out = [
        "## What the critic changed",
        "",
        f"Checked by {how}; {critic.replans} of {critic.max_replans} re-plans used.",
        "",
    ]
    if critic.issues_fixed_by_replan:
        out += ["Fixed by a re-plan:", *(f"- {_one_line(i)}" for i in critic.issues_fixed_by_replan), ""]
    if critic.changes:
        for change in critic.changes:
            why = "; ".join(_one_line(r) for r in change.reasons)
            out.append(f"- {change.action}: {_one_line(change.title)} — {why}")
        out.append("")
    elif not critic.issues_fixed_by_replan:
        out += ["Nothing: every finding is supported by the calls it cites.", ""]
    if critic.missing_evidence:
        out += ["Evidence still missing:", *(f"- {_one_line(m)}" for m in critic.missing_evidence), ""]
    return out
