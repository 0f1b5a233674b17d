"""Findings memory: recall what earlier investigations of a project concluded.

Findings live in the project store (table ``findings``, SQLite or PostgreSQL, see
:meth:`~devops_agent.store.Store.add_finding`). Retrieval ranks one project's findings with the
same code-aware BM25 as the knowledge index, built at query time from the newest ``MAX_SCAN``
findings: a project holds a few hundred findings, thousands at most, and building BM25 over a
thousand short texts takes milliseconds, so nothing is persisted or cached and a new finding is
searchable at once. Title and tags count twice (they are what a finding is about); ties go to the
newer finding. Dense retrieval is not used here: at this size it would cost a model load for
little gain.

Runs of the agent set :data:`CURRENT_SESSION` so a finding records the session it came from.
Every finding is stored through :func:`add_finding`, which cuts secrets out of it: a finding
outlives its session and is recalled into others, and secrets are never stored. This module must
not import policies, agent or interface code (the privacy scrubber is detection, not policy).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from devops_agent.config import Settings
from devops_agent.errors import UserError
from devops_agent.knowledge.lexical import Bm25
from devops_agent.knowledge.tokenize import term_counts
from devops_agent.secrets.scrubber import scrub
from devops_agent.store import Store
from devops_agent.store.records import FindingRecord

MAX_SCAN = 5_000
DEFAULT_PROJECT = "default"

CURRENT_SESSION: ContextVar[str | None] = ContextVar("devops_agent_current_session", default=None)
"""The id of the session whose run is executing (set by the session service around a run)."""


def project_name(settings: Settings) -> str:
    """``settings.project``, else the current directory's name (``default`` at the file-system root)."""
    if settings.project and settings.project.strip():
        return settings.project.strip()
    return Path.cwd().name or DEFAULT_PROJECT


@dataclass(frozen=True)
class MemoryHit:
    """A recalled finding and its BM25 score for the query."""

    finding: FindingRecord
    score: float


def add_finding(store: Store, finding: FindingRecord) -> FindingRecord:
    """Remember ``finding``; return it as stored, with its id.

    Whoever adds it (``memory add``, the model's ``add_finding``), secrets are cut out of its
    title, summary, evidence, tags and source (``[REDACTED_SECRET]``, the scrubber every stored
    text goes through), and empty evidence items and tags are dropped. A title of several lines
    is a :class:`UserError`.
    """
    if len(finding.title.strip().splitlines()) > 1:
        raise UserError(
            "a finding's title is one line", hint="say what was wrong in one line; details go in the summary"
        )

    def clean(items: Sequence[str]) -> tuple[str, ...]:
        return tuple(scrub(t.strip()).text for t in items if t.strip())

    scrubbed = dataclasses.replace(
        finding,
        title=scrub(finding.title).text,
        summary=scrub(finding.summary).text,
        evidence=clean(finding.evidence),
        tags=clean(finding.tags),
        source=scrub(finding.source).text if finding.source else finding.source,
    )
    return store.add_finding(scrubbed)


def finding_text(f: FindingRecord) -> str:
    """What a finding is searched by: title and tags twice, then summary, evidence and source."""
    head = f"{f.title}\n{' '.join(f.tags)}"
    return "\n".join([head, head, f.summary, *f.evidence, f.source or ""])


def rank_findings(findings: Sequence[FindingRecord], query: str, limit: int = 5) -> list[MemoryHit]:
    """The ``limit`` findings that best match ``query`` (``findings`` newest first), best first."""
    bm25 = Bm25((n, term_counts(finding_text(f))) for n, f in enumerate(findings))
    scores = bm25.scores(query)
    # Among equal scores the lower index, i.e. the newer finding, comes first.
    best = sorted(scores, key=lambda n: (-scores[n], n))[:limit]
    return [MemoryHit(findings[n], scores[n]) for n in best if scores[n] > 0]


def search_memory(
    store: Store, project: str, query: str, limit: int = 5, *, scan: int = MAX_SCAN
) -> list[MemoryHit]:
    """The findings of ``project`` most related to ``query``, best first."""
    return rank_findings(store.list_findings(project, limit=scan), query, limit)
