"""What the model's agents answer with, and how an answer becomes the run's :class:`Report`.

The orchestrator ends with a :class:`ModelAnswer` (structured output: summary, findings that cite
the calls they rest on, hypotheses with confidence, next steps, what it could not check); a
specialist with a :class:`SpecialistReport`; a council's synthesizer with a :class:`Synthesis`.
:func:`to_report` makes the same :class:`~devops_agent.report.Report` the runbooks make: what was
read (``checks``) and what could not be (``gaps``) come from the calls themselves, not from the
model's word, so the verdict is derived from evidence as it is for a runbook.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from devops_agent.agent.reasoning.ledger import Ledger
from devops_agent.report import (
    Checked,
    CriticNotes,
    Disagreement,
    Finding,
    Gap,
    Hypothesis,
    PlanOutcome,
    Report,
)

TITLE_CHARS = 100


class ModelAnswer(BaseModel):
    """The orchestrator's answer."""

    summary: str = Field("", description="the answer in a few sentences")
    findings: list[Finding] = Field(
        default_factory=list,
        description="what the evidence shows; each cites the ids of the tool calls it rests on and "
        "quotes their output verbatim in `evidence`",
    )
    hypotheses: list[Hypothesis] = Field(
        default_factory=list, description="likely explanations the evidence does not prove, with confidence"
    )
    next_steps: list[str] = Field(default_factory=list)
    gaps: list[str] = Field(default_factory=list, description="what could not be checked, and why")


class SpecialistReport(ModelAnswer):
    """A specialist's answer to the task it was given."""

    likely_cause: str = Field("", description="the cause this specialist's evidence points to, if any")


class Synthesis(ModelAnswer):
    """A council's reconciled answer: where its members disagree is said, not hidden."""

    disagreements: list[Disagreement] = Field(default_factory=list)


def answer_checks(answer: ModelAnswer) -> list[str]:
    """The semantic checks of any answer's shape: what a model must fix before it is accepted."""
    problems = []
    for i, finding in enumerate(answer.findings, 1):
        if not finding.citations:
            problems.append(
                f"finding {i} ({finding.title!r}) cites no tool call: put the ids of the calls whose "
                "output shows it in `citations`, or make it a hypothesis"
            )
    return problems


def orchestrator_checks(answer: ModelAnswer) -> list[str]:
    return (["the answer has no summary"] if not answer.summary.strip() else []) + answer_checks(answer)


def _error_of(content: object) -> str:
    if isinstance(content, dict):
        return str(content.get("error") or content.get("hint") or "failed")
    return str(content)[:300]


def evidence_record(ledger: Ledger) -> tuple[list[Checked], list[Gap]]:
    """What the run's calls read (one check each) and what they could not (a failed call whose
    tool never succeeded later is a gap)."""
    checks: list[Checked] = []
    gaps: list[Gap] = []
    succeeded = {c.tool for c in ledger.calls.values() if not c.failed}
    for call in ledger.calls.values():
        step = f"{call.agent}/{call.call_id}" if call.agent else call.call_id
        if call.failed:
            if call.tool not in succeeded:
                gaps.append(Gap(step=step, tool=call.tool, reason=_error_of(call.content)))
            continue
        read = 1 if call.status == "success" else 0
        checks.append(Checked(step=step, tool=call.tool, read=read, unit="result", detail=call.status))
    return checks, gaps


def to_report(
    answer: ModelAnswer,
    *,
    question: str,
    ledger: Ledger,
    plan: PlanOutcome | None = None,
    critic: CriticNotes | None = None,
    disagreements: list[Disagreement] | None = None,
) -> Report:
    """The run's report from the (verified) answer and the calls behind it."""
    checks, gaps = evidence_record(ledger)
    gaps += [Gap(step="model", tool="-", reason=g) for g in answer.gaps]
    if critic is not None:
        gaps += [Gap(step="critic", tool="-", reason=f"not gathered: {m}") for m in critic.missing_evidence]
        removed = [c for c in critic.changes if c.action == "removed"]
        if removed:
            # A claim the critic took out is not a clean result: the report must not turn all-clear.
            gaps.append(
                Gap(
                    step="critic",
                    tool="-",
                    reason=f"{len(removed)} claim(s) removed as unsupported by the evidence",
                    hint="see what the critic changed",
                )
            )
    first_line = question.strip().splitlines()[0] if question.strip() else "question"
    title = first_line if len(first_line) <= TITLE_CHARS else first_line[: TITLE_CHARS - 1] + "…"
    return Report(
        title=f"Investigation: {title}",
        question=question,
        summary=answer.summary,
        findings=list(answer.findings),
        hypotheses=list(answer.hypotheses),
        next_steps=list(answer.next_steps),
        gaps=gaps,
        checks=checks,
        disagreements=list(disagreements or []),
        plan=plan,
        critic=critic,
    )
