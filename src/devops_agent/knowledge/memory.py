"""Findings memory: recall what earlier investigations of a project concluded.

Findings live in the project store (table ``findings``, SQLite or PostgreSQL, see
:meth:`~devops_agent.store.Store.add_finding`). Retrieval ranks one project's findings with the
same code-aware BM25 as the knowledge index, built at query time from the newest ``MAX_SCAN``
findings: a project holds a few hundred findings, thousands at most, and building BM25 over a
thousand short texts takes milliseconds, so nothing is persisted or cached and a new finding is
searchable at once. Title and tags count twice (they are what a finding is about); ties go to the
newer finding. Dense retrieval is not used here: at this size it would cost a model load for
little gain.

Runs of the agent set :data:`CURRENT_SESSION` so a finding records the session it came from;
this module must not import policies, agent or interface code.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from devops_agent.config import Settings
from devops_agent.knowledge.lexical import Bm25
from devops_agent.knowledge.tokenize import term_counts
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
