"""The model critic: after the deterministic checks, a model reads each finding beside the output
of the calls it cites and says whether that output supports it, and what evidence is missing.

It has no tools and sees only what the orchestrator saw (masked), cut to an excerpt per call.
Unsupported findings become issues (``model_unsupported``) that the critic downgrades; missing
evidence sends the orchestrator back (a re-plan) while the budget lasts.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from devops_agent.agent.reasoning.answer import ModelAnswer
from devops_agent.agent.reasoning.critic import Issue
from devops_agent.agent.reasoning.ledger import Ledger

CRITIC = "critic"
CRITIC_INSTRUCTIONS = """\
You check an investigation's findings before they reach the user. For each finding you get its
claim, the lines it quotes and the output of the tool calls it cites. A finding is supported
when that output shows what it claims; it is not when the claim goes beyond it (a cause the
output does not show, a count or time it does not give). List in `missing_evidence` the evidence
that should be gathered before answering (what to read, where), only if the answer needs it.
Answer with final_result; say nothing about findings that are supported."""


class Assessment(BaseModel):
    finding: int = Field(description="the finding's number, from 1")
    supported: bool = True
    reason: str = ""


class CriticVerdict(BaseModel):
    """The model critic's review; the empty review accepts every finding."""

    assessments: list[Assessment] = Field(default_factory=list)
    missing_evidence: list[str] = Field(default_factory=list)


def critic_prompt(question: str, answer: ModelAnswer, ledger: Ledger) -> str:
    """The critic's prompt: the question, then each finding with the output it cites."""
    parts = [f"Question: {question}", "", f"Summary of the answer: {answer.summary}", ""]
    for n, finding in enumerate(answer.findings, 1):
        parts += [
            f"## Finding {n}: [{finding.severity}] {finding.title}",
            finding.detail,
            "Quoted: " + json.dumps(finding.evidence, ensure_ascii=False),
        ]
        for cid in finding.citations:
            call = ledger.get(cid)
            if call is not None:
                parts += [f"Output of {call.tool} ({cid}, {call.status}):", call.excerpt()]
        parts.append("")
    return "\n".join(parts)


def unsupported(verdict: CriticVerdict, answer: ModelAnswer) -> list[Issue]:
    """The findings the critic found unsupported, as issues."""
    out = []
    for a in verdict.assessments:
        if not a.supported and 1 <= a.finding <= len(answer.findings):
            title = answer.findings[a.finding - 1].title
            why = a.reason or "the cited output does not show it"
            out.append(Issue(a.finding - 1, title, "model_unsupported", f"the model critic: {why}"))
    return out
