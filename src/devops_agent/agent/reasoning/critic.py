"""The deterministic critic: every finding checked against the calls it cites, before any model.

For each finding of an answer (:func:`check_answer`):

* every cited call exists (some agent of the run made it);
* it does not rest only on failed calls;
* each quoted evidence line appears verbatim (whitespace aside) in a cited call's output;
* each number and time it states appears in a cited call's output. A number the model computed
  (bytes to GiB, a count of lines) is not read evidence: it is flagged, and the model may quote
  the line instead. Bare counts below ten and numbers from the question are not checked.

:func:`apply_issues` is what happens when a re-plan did not fix them: a finding with no valid
citation left is removed; a fabricated quotation is dropped; a finding whose quotation, numbers
or times do not match (or that the model critic found unsupported) is downgraded to a
low-confidence hypothesis. Every change is listed. This module reads evidence; it calls nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from devops_agent.agent.reasoning.answer import ModelAnswer
from devops_agent.agent.reasoning.ledger import Ledger, normalize
from devops_agent.report import CriticChange, Finding, Hypothesis

CheckName = Literal[
    "no_citation",
    "unknown_citation",
    "failed_call_only",
    "quote_not_found",
    "number_mismatch",
    "time_mismatch",
    "model_unsupported",
]

_TIME = re.compile(
    r"(?<![\d:])(?:\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?|\d{1,2}:\d{2}(?::\d{2})?)(?![\d:])"
)
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(%|ms|s|m|h|d|x|[KMGT]i?B)?(?![\w%])")
SMALL_COUNT = 10
"""Bare integers below this are counts a model reads off a list, not values it quotes."""


@dataclass(frozen=True)
class Issue:
    """One thing wrong with one finding (``finding`` is its index in the answer)."""

    finding: int
    title: str
    check: CheckName
    detail: str
    quote: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def _numbers(text: str) -> list[tuple[str, str]]:
    """``(value, as written)`` for each number worth checking in ``text`` (times taken out first)."""
    text = _TIME.sub(" ", text)
    out = []
    for m in _NUMBER.finditer(text):
        value, unit = m.group(1).replace(",", ""), m.group(2)
        if not unit and "." not in value and int(value) < SMALL_COUNT:
            continue
        out.append((value, m.group(0)))
    return out


def _number_in(value: str, haystack: str) -> bool:
    plain = re.sub(r"(?<=\d),(?=\d{3})", "", haystack)
    return re.search(rf"(?<![\d.]){re.escape(value)}(?!\d)", plain) is not None


def check_finding(index: int, finding: Finding, ledger: Ledger, question: str = "") -> list[Issue]:
    """What is wrong with one finding, by the evidence of the calls it cites."""
    title = finding.title

    def issue(check: CheckName, detail: str, quote: str | None = None) -> Issue:
        return Issue(index, title, check, detail, quote)

    if not finding.citations:
        return [issue("no_citation", "cites no tool call")]
    issues: list[Issue] = []
    known = [c for c in finding.citations if ledger.get(c) is not None]
    for cid in finding.citations:
        if cid not in known:
            issues.append(issue("unknown_citation", f"cites call {cid}, which no agent of this run made"))
    usable = [c for c in known if not ledger.calls[c].failed]
    if known and not usable:
        tools = ", ".join(sorted({ledger.calls[c].tool for c in known}))
        issues.append(
            issue("failed_call_only", f"rests only on failed call(s) of {tools}: they read nothing")
        )
    if not usable:
        return issues
    for quote in finding.evidence:
        if not ledger.found_in(quote, usable):
            issues.append(
                issue("quote_not_found", f"quotes {quote!r}, which no cited call's output contains", quote)
            )
    haystack = ledger.text_of(usable)
    asked = normalize(question)
    claim = f"{finding.title}\n{finding.detail}"
    for m in _TIME.finditer(claim):
        if normalize(m.group(0)) not in haystack and m.group(0) not in asked:
            issues.append(
                issue("time_mismatch", f"states the time {m.group(0)}, which the cited output does not show")
            )
    for value, written in _numbers(claim):
        if not _number_in(value, haystack) and not _number_in(value, asked):
            issues.append(issue("number_mismatch", f"states {written}, which the cited output does not show"))
    return issues


def check_answer(answer: ModelAnswer, ledger: Ledger, question: str = "") -> list[Issue]:
    """Every issue of every finding of ``answer``."""
    return [i for n, f in enumerate(answer.findings) for i in check_finding(n, f, ledger, question)]


_REMOVE: frozenset[CheckName] = frozenset({"no_citation", "unknown_citation", "failed_call_only"})


def apply_issues(
    answer: ModelAnswer, issues: Sequence[Issue], ledger: Ledger
) -> tuple[ModelAnswer, list[CriticChange]]:
    """``answer`` with unsupported claims removed or downgraded, and the list of what changed."""
    by_finding: dict[int, list[Issue]] = {}
    for i in issues:
        by_finding.setdefault(i.finding, []).append(i)
    findings: list[Finding] = []
    hypotheses = list(answer.hypotheses)
    changes: list[CriticChange] = []
    for n, finding in enumerate(answer.findings):
        found = by_finding.get(n, [])
        if not found:
            findings.append(finding)
            continue
        reasons = [i.detail for i in found]
        valid = [c for c in finding.citations if (e := ledger.get(c)) is not None and not e.failed]
        if not valid:
            changes.append(CriticChange(title=finding.title, action="removed", reasons=reasons))
            continue
        dropped = [i.detail for i in found if i.check == "unknown_citation"]
        if dropped:
            changes.append(CriticChange(title=finding.title, action="citation_removed", reasons=dropped))
        bad_quotes = {i.quote for i in found if i.check == "quote_not_found"}
        kept = finding.model_copy(
            update={"citations": valid, "evidence": [q for q in finding.evidence if q not in bad_quotes]}
        )
        if bad_quotes:
            changes.append(
                CriticChange(
                    title=finding.title,
                    action="quote_removed",
                    reasons=[i.detail for i in found if i.check == "quote_not_found"],
                )
            )
        if any(i.check not in _REMOVE for i in found):
            statement = finding.title + (f": {finding.detail}" if finding.detail else "")
            hypotheses.append(
                Hypothesis(statement=statement, confidence="low", citations=valid, why="; ".join(reasons))
            )
            changes.append(CriticChange(title=finding.title, action="downgraded", reasons=reasons))
        else:
            findings.append(kept)
    return answer.model_copy(update={"findings": findings, "hypotheses": hypotheses}), changes


def describe(issues: Iterable[Issue]) -> list[str]:
    """One line per issue, for the re-plan feedback and the report."""
    return [f"finding {i.finding + 1} ({i.title!r}): {i.detail}" for i in issues]
