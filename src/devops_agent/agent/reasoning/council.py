"""A council: several specialists on one question, a synthesizer that reconciles them, and the
disagreements said out loud.

The members answer independently (:meth:`Team.council`); the synthesizer reads their reports and
writes one :class:`Synthesis`. A synthesizer may smooth over a conflict, so
:func:`disagreements_of` also compares the members deterministically — one reports problems and
another none, or they name different likely causes — and :func:`merge_disagreements` adds each
conflict the synthesizer did not state, marked as not reconciled.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from devops_agent.agent.reasoning.answer import Synthesis, answer_checks
from devops_agent.agent.reasoning.delegation import Consultation
from devops_agent.agent.reasoning.ledger import normalize
from devops_agent.report import Disagreement

SYNTHESIZER = "synthesizer"
SYNTHESIZER_INSTRUCTIONS = """\
Several specialists investigated the same question independently; their reports follow. Write
one answer with final_result: keep each finding with the citations and quotations its specialist
gave (never invent a call id or a quotation), and where the specialists disagree — about what is
wrong, or its cause — list it in `disagreements` with each one's position and how you weigh them.
Never hide a disagreement by picking one side silently."""
NOT_RECONCILED = "not reconciled by the synthesizer: weigh the evidence of each position"


def synthesis_prompt(question: str, members: Sequence[Consultation]) -> str:
    """The synthesizer's prompt: the question and every member's report (or its failure)."""
    parts = [f"Question: {question}", ""]
    for c in members:
        body: Any = c.report.model_dump(mode="json") if c.report is not None else {"failed": c.error}
        parts += [
            f"## Report of the {c.specialist} specialist",
            json.dumps(body, ensure_ascii=False, indent=1),
            "",
        ]
    return "\n".join(parts)


def _problems(c: Consultation) -> bool:
    return c.report is not None and any(f.severity != "info" for f in c.report.findings)


def disagreements_of(members: Sequence[Consultation]) -> list[Disagreement]:
    """Conflicts between members' reports found without a model."""
    answered = [c for c in members if c.report is not None]
    out: list[Disagreement] = []
    flags = {c.specialist: _problems(c) for c in answered}
    if len(set(flags.values())) > 1:
        out.append(
            Disagreement(
                topic="whether anything is wrong",
                positions={
                    name: (f"problems found: {_top(c)}" if flags[name] else "found no problem")
                    for name, c in ((c.specialist, c) for c in answered)
                },
            )
        )
    causes = {
        c.specialist: c.report.likely_cause.strip()
        for c in answered
        if c.report and c.report.likely_cause.strip()
    }
    if len({normalize(v).lower() for v in causes.values()}) > 1:
        out.append(Disagreement(topic="the likely cause", positions=causes))
    return out


def _top(c: Consultation) -> str:
    assert c.report is not None
    worst = [f for f in c.report.findings if f.severity != "info"]
    return worst[0].title if worst else ""


def merge_disagreements(synthesis: Synthesis, found: Sequence[Disagreement]) -> list[Disagreement]:
    """The synthesizer's disagreements, and each conflict found here that none of them covers
    (one covers it when it states the position of every member involved)."""
    merged = list(synthesis.disagreements)
    for d in found:
        covered = any(set(d.positions) <= set(s.positions) for s in synthesis.disagreements)
        if not covered:
            merged.append(d.model_copy(update={"resolution": NOT_RECONCILED}))
    return merged


def synthesis_checks(synthesis: Synthesis) -> list[str]:
    return answer_checks(synthesis)
