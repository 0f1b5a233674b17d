"""The structured report every run ends with, and its Markdown rendering.

Both paths produce the same :class:`Report`: the offline runbook engine builds it from analyzer
findings, and the model loop will fill it from the model's structured output. A report always
says what could not be gathered (``gaps``), so an empty findings list is never mistaken for a
clean bill of health.

This module holds data and pure formatting only: it must not call tools, models or the store,
and it must not import from the runbook engine or any interface.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

Severity = Literal["critical", "high", "medium", "low", "info"]

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


class Gap(BaseModel):
    """Something the run tried to gather or analyze and could not, and what to do about it."""

    step: str
    tool: str
    reason: str
    hint: str | None = None


class Report(BaseModel):
    """The final answer of a run: summary, ranked findings, next steps and gaps."""

    title: str
    question: str = ""
    summary: str = ""
    findings: list[Finding] = Field(default_factory=list)
    next_steps: list[str] = Field(default_factory=list)
    gaps: list[Gap] = Field(default_factory=list)
    runbooks: list[str] = Field(default_factory=list)
    generated_at: datetime = Field(default_factory=_now)
    host: str | None = None
    window: str | None = None
    stats: dict[str, Any] = Field(default_factory=dict)
    inputs_from_question: dict[str, str] = Field(
        default_factory=dict, description="inputs read from the question's words, not given as options"
    )


def severity_rank(severity: Severity) -> int:
    """0 for critical up to 4 for info."""
    return SEVERITY_ORDER.index(severity)


def rank_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Findings ordered by severity, most severe first; ties keep their original order."""
    return sorted(findings, key=lambda f: severity_rank(f.severity))


def summarize(
    findings: list[Finding], *, host: str | None = None, window: str | None = None, gaps: int = 0
) -> str:
    """One paragraph from the findings: counts by severity, the top finding, host and window."""
    where = f" on {host}" if host else ""
    when = f" ({window})" if window else ""
    problems = [f for f in rank_findings(findings) if f.severity != "info"]
    if problems:
        counts = Counter(f.severity for f in problems)
        by_sev = ", ".join(f"{counts[s]} {s}" for s in SEVERITY_ORDER if counts[s])
        noun = "problem" if len(problems) == 1 else "problems"
        text = (
            f"Found {len(problems)} {noun}{where}{when}: {by_sev}. "
            f"Most severe: [{problems[0].severity.upper()}] {problems[0].title}."
        )
    elif findings:
        noun = "check" if len(findings) == 1 else "checks"
        text = f"No problems found{where}{when}: {len(findings)} informational {noun}, nothing above info."
    else:
        text = f"No findings{where}{when}."
    if gaps:
        noun = "item" if gaps == 1 else "items"
        text += f" {gaps} {noun} could not be gathered; see the last section."
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
    out += ["## Summary", "", report.summary or summarize(report.findings, gaps=len(report.gaps)), ""]

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
        if finding.next_steps:
            out += ["Next steps:", *(f"- {step}" for step in finding.next_steps), ""]

    out += ["## Next steps", ""]
    if report.next_steps:
        out += [f"{i}. {step}" for i, step in enumerate(report.next_steps, 1)] + [""]
    else:
        out += ["None suggested.", ""]

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

    footer = [f"generated {report.generated_at.strftime('%Y-%m-%d %H:%M:%S %Z').strip()}"]
    if report.runbooks:
        footer.insert(0, "runbooks: " + ", ".join(report.runbooks))
    out += ["---", "", "*" + " · ".join(footer) + "*", ""]
    return "\n".join(out)
