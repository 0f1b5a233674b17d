"""The ``knowledge`` toolset: index a directory, retrieve code context and runbook passages, and
remember / recall the findings of investigations.

Every result carries a citation (``path:start-end``, or the page URL for Confluence pages) so the
model can quote evidence. The index lives under ``settings.data_dir / "knowledge"`` (one SQLite
file per collection); findings live in the project store (``Store.from_settings``), per project.

``index_directory`` is declared ``read_only=True`` / risk ``safe`` on purpose: it only *reads*
the directory it is given (which must lie inside ``files.roots``, like every file tool), and the
only thing it writes is the agent's own derived index in its data dir — no user file, repository
or remote system is changed. Dense retrieval is used when the ``knowledge-dense`` extra is
installed and the collection has vectors; otherwise results are BM25. Ranked results say so in
their metadata (``ranked``), so the output cap drops their lowest ranks first.

``add_finding`` is read-only / ``safe`` for the same reason: the only thing it writes is a row of
the agent's own findings memory in its store; no user file or remote system changes, so an
investigation in ``ask`` mode can still record what it learned. This module must not import
policies, agent or interface code.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from devops_agent.config import Settings
from devops_agent.errors import DevOpsAgentError, PathAccessError
from devops_agent.knowledge import memory
from devops_agent.knowledge.index import COLLECTIONS, Hit, KnowledgeIndex, collection_file
from devops_agent.knowledge.memory import CURRENT_SESSION, MemoryHit, project_name
from devops_agent.knowledge.search import FILE_CANDIDATES, hybrid_search, search_files
from devops_agent.store import Store
from devops_agent.store.records import FindingRecord
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.paths import resolve_in_roots, roots_of
from devops_agent.tools.registry import ToolRegistry

NAME = "knowledge"
DESCRIPTION = (
    "Index code and runbooks; retrieve cited chunks by hybrid (BM25 + optional dense) search; "
    "remember and recall investigation findings"
)
MAX_LIMIT = 50
SNIPPET_CHARS = 1_500
MAX_TITLE_CHARS = 300
MAX_SUMMARY_CHARS = 8_000
MAX_EVIDENCE = 30
MAX_EVIDENCE_CHARS = 2_000
MAX_TAGS = 30
# How long index_directory waits for another index run of the collection to finish. Shorter than
# the tool timeout (tools.timeout_s), so a second call says "in progress" rather than timing out
# while a worker thread stays blocked on the lock.
INDEX_BUSY_TIMEOUT_S = 10.0


def index_dir(settings: Settings) -> Path:
    """Where the knowledge indexes of ``settings`` live."""
    return settings.data_dir / "knowledge"


def collection_db(settings: Settings, collection: str) -> Path:
    """The index file of one collection of ``settings`` (it may not exist yet)."""
    return collection_file(index_dir(settings), collection)


def _hit_data(hit: Hit) -> dict[str, Any]:
    text = hit.chunk.text
    web = {"url": hit.url, "title": hit.title} if hit.url else {}
    return {
        "citation": hit.citation,
        **web,
        "path": hit.chunk.path,
        "root": hit.root,
        "start_line": hit.chunk.start_line,
        "end_line": hit.chunk.end_line,
        "kind": hit.chunk.kind,
        "symbol": hit.chunk.symbol,
        "score": round(hit.score, 4),
        "text": text[:SNIPPET_CHARS],
        "truncated": len(text) > SNIPPET_CHARS,
    }


def _index_first(collection: str) -> str:
    return (
        f"nothing is indexed in the {collection!r} collection; "
        f"call index_directory(path, collection={collection!r}) first"
    )


def _search(
    settings: Settings,
    query: str,
    collection: str,
    run: Callable[[KnowledgeIndex, Any, int], ToolResult],
    limit: int,
) -> ToolResult:
    """``run(index, embedder, limit)`` on ``collection`` once the checks every search shares
    pass: a known collection, a query, something indexed; ``limit`` clamped to 1..``MAX_LIMIT``;
    the embedder when the collection has vectors, else None."""
    if collection not in COLLECTIONS:
        return ToolResult.fail(
            f"unknown collection {collection!r}", hint=f"use one of {', '.join(COLLECTIONS)}"
        )
    if not query.strip():
        return ToolResult.fail("empty query", hint="describe what you are looking for")
    db = collection_db(settings, collection)
    if not db.exists():
        return ToolResult.empty(_index_first(collection))
    with KnowledgeIndex(db) as idx:
        counts = idx.counts()
        # every root forgotten, or a first index that was interrupted: "no match" would mislead
        if not counts["files"]:
            return ToolResult.empty(_index_first(collection))
        embedder = _shared_embedder() if counts["vectors"] else None
        return run(idx, embedder, max(1, min(limit, MAX_LIMIT)))


def search_collection(settings: Settings, query: str, collection: str, limit: int) -> ToolResult:
    """The best chunks of ``collection`` for ``query`` (:func:`hybrid_search`), as hit data."""

    def run(idx: KnowledgeIndex, embedder: Any, limit: int) -> ToolResult:
        hits = hybrid_search(idx, query, limit, embedder)
        if not hits:
            return ToolResult.empty(f"nothing in {collection!r} matched; try other words or identifiers")
        # ranked best first: the output cap then drops the lowest ranks, not a long list's middle
        return ToolResult.ok(
            [_hit_data(h) for h in hits], collection=collection, dense=embedder is not None, ranked="hits"
        )

    return _search(settings, query, collection, run, limit)


def locate_files(settings: Settings, query: str, limit: int) -> ToolResult:
    """The code collection's files for ``query``, best first (:func:`search_files`), each with the
    roots it is indexed under and its best-matching chunk by BM25 (a citation), when it has one:
    a function or block before the file's outline, which only names what the file defines."""

    def run(idx: KnowledgeIndex, embedder: Any, limit: int) -> ToolResult:
        files = search_files(idx, query, limit, embedder)
        if not files:
            return ToolResult.empty("no file in 'code' matched; try other words or identifiers")
        roots = idx.roots_of(files)
        best: dict[str, Hit] = {}
        for h in idx.lexical(query, FILE_CANDIDATES):  # a file's outline only when nothing else matched
            if h.chunk.path not in best or best[h.chunk.path].chunk.kind == "outline" != h.chunk.kind:
                best[h.chunk.path] = h
        data = []
        for rank, path in enumerate(files, start=1):
            hit = best.get(path)
            data.append(
                {
                    "rank": rank,
                    "path": path,
                    "roots": roots.get(path, []),
                    "best_chunk": hit.citation if hit else None,
                    "symbol": hit.chunk.symbol if hit and hit.chunk.kind != "outline" else None,
                }
            )
        return ToolResult.ok(data, collection="code", dense=embedder is not None, ranked="files")

    return _search(settings, query, "code", run, limit)


def finding_data(f: FindingRecord, score: float | None = None) -> dict[str, Any]:
    """A finding as tool / ``--json`` output."""
    data: dict[str, Any] = {
        "id": f.id,
        "project": f.project,
        "title": f.title,
        "summary": f.summary,
        "evidence": list(f.evidence),
        "tags": list(f.tags),
        "source": f.source,
        "session": f.session_id,
        "created_at": f.created_at.isoformat(timespec="seconds"),
    }
    if score is not None:
        data["score"] = round(score, 4)
    return data


def check_finding(
    title: str, summary: str, evidence: list[str] | None, tags: list[str] | None
) -> ToolResult | None:
    """A failed result when a finding is too large to be a finding, else ``None``."""
    if len(title) > MAX_TITLE_CHARS:
        return ToolResult.fail(
            f"title has {len(title)} characters (max {MAX_TITLE_CHARS})", hint="a one-line title"
        )
    if len(summary) > MAX_SUMMARY_CHARS:
        return ToolResult.fail(
            f"summary has {len(summary)} characters (max {MAX_SUMMARY_CHARS})",
            hint="summarize: cause, fix, how it was confirmed; cite the evidence instead of pasting it",
        )
    items = [*(evidence or []), *(tags or [])]
    too_many = len(evidence or []) > MAX_EVIDENCE or len(tags or []) > MAX_TAGS
    if too_many or any(len(e) > MAX_EVIDENCE_CHARS for e in items):
        return ToolResult.fail(
            f"at most {MAX_EVIDENCE} evidence items and {MAX_TAGS} tags, each evidence item or "
            f"tag at most {MAX_EVIDENCE_CHARS} characters",
            hint="give citations, URLs or short excerpts",
        )
    return None


def remember(settings: Settings, finding: FindingRecord) -> ToolResult:
    """Store ``finding`` in the project store (secrets cut out: :func:`memory.add_finding`)."""
    try:
        with Store.from_settings(settings) as store:
            saved = memory.add_finding(store, finding)
    except DevOpsAgentError as exc:
        return ToolResult.fail(exc.message, exc.hint)
    return ToolResult.ok(finding_data(saved))


def recall(settings: Settings, query: str, limit: int, project: str | None = None) -> ToolResult:
    """The findings of the project most related to ``query``."""
    if not query.strip():
        return ToolResult.fail("empty query", hint="describe the symptom, service or error")
    name = project or project_name(settings)
    try:
        with Store.from_settings(settings) as store:
            hits: list[MemoryHit] = memory.search_memory(store, name, query, max(1, min(limit, MAX_LIMIT)))
            none_yet = not hits and not store.list_findings(name, limit=1)
    except DevOpsAgentError as exc:
        return ToolResult.fail(exc.message, exc.hint)
    if none_yet:
        return ToolResult.empty(
            f"project {name!r} has no findings yet; add_finding records one once something is confirmed",
            project=name,
        )
    if not hits:
        return ToolResult.empty(f"no finding of project {name!r} matched; try other words", project=name)
    return ToolResult.ok([finding_data(h.finding, h.score) for h in hits], project=name, ranked="hits")


@functools.cache
def _shared_embedder() -> Any:
    # Loading the model takes seconds: once per process, not once per call.
    try:
        from devops_agent.knowledge.dense import MiniLMEmbedder
    except ImportError:
        return None
    return MiniLMEmbedder()


def build(settings: Settings) -> ToolsetBuilder:
    """The knowledge toolset for ``settings``."""
    ts = ToolsetBuilder(NAME, DESCRIPTION)
    roots = roots_of(settings)

    @ts.tool(read_only=True, risk="safe")
    def index_directory(
        path: str, collection: Literal["code", "runbooks", "postmortems"] = "code"
    ) -> ToolResult:
        """Index (or incrementally re-index) a directory into a collection: code, runbooks or postmortems.

        Only new or changed files are re-chunked; files that were deleted leave the index.
        Writes nothing but the agent's own index. A first index of a large tree can take minutes:
        if the call times out, indexing goes on in the background and a search finds what it
        committed once it finishes; a call made meanwhile says an index run is in progress.

        Args:
            path: directory to index; it must lie inside the allowed roots (`files.roots`).
            collection: "code" (searched by retrieve_code_context), "runbooks" or "postmortems"
                (searched by search_kb).
        """
        if collection not in COLLECTIONS:
            return ToolResult.fail(
                f"unknown collection {collection!r}", hint=f"use one of {', '.join(COLLECTIONS)}"
            )
        try:
            root = resolve_in_roots(path, roots)
        except PathAccessError as exc:
            return ToolResult.fail(exc.message, exc.hint)
        if not root.exists():
            return ToolResult.fail(f"{path}: no such directory", hint="check the path; list its parent first")
        if not root.is_dir():
            return ToolResult.fail(f"{path}: not a directory", hint="give a directory to index")
        try:
            with KnowledgeIndex(collection_db(settings, collection), INDEX_BUSY_TIMEOUT_S) as idx:
                stats = idx.update(root)
                counts = idx.counts()
        except DevOpsAgentError as exc:  # another index run holds the collection
            return ToolResult.fail(exc.message, exc.hint)
        result = ToolResult.ok(
            {
                "collection": collection,
                "root": str(root),
                "files_seen": stats.files_seen,
                "files_indexed": stats.files_indexed,
                "files_removed": stats.files_removed,
                "chunks_added": stats.chunks_added,
                "chunks_removed": stats.chunks_removed,
                "total_files": counts["files"],
                "total_chunks": counts["chunks"],
                "skipped": stats.skipped,
                "skipped_count": stats.skipped_count,
                "seconds": round(stats.seconds, 3),
            }
        )
        if not stats.files_seen:
            result.hint = f"no indexable text file under {root} (binary, ignored or skipped files only)"
        return result

    @ts.tool(read_only=True, risk="safe")
    def retrieve_code_context(query: str, limit: int = 8) -> ToolResult:
        """Find the code chunks (functions, classes, blocks) most relevant to a question or error text.

        Searches the "code" collection (fill it with index_directory). Each result has a
        ``path:start-end`` citation (``path`` is relative to the result's ``root``), the symbol
        and the chunk text (its first 1,500 characters; ``truncated`` says when cut).

        Args:
            query: a question, an error message, a stack trace or identifiers.
            limit: most results, 1 to 50, best first.
        """
        return search_collection(settings, query, "code", limit)

    @ts.tool(read_only=True, risk="safe")
    def locate_code_files(query: str, limit: int = 10) -> ToolResult:
        """Rank the files of the "code" collection that a question, issue or stack trace is about.

        File-level search for "which file do I change / read first": whole-file and chunk BM25,
        the files the text names, the files defining the code names it mentions, modules its
        first line names, and the modules whose tests match it best. Each result has the file's
        ``path``, the ``roots`` it is indexed under and its best-matching chunk (``best_chunk``,
        a ``path:start-end`` citation to read with retrieve_code_context or the file tools).

        Args:
            query: an issue or bug report, a question, an error message or a stack trace.
            limit: most files, 1 to 50, best first.
        """
        return locate_files(settings, query, limit)

    @ts.tool(read_only=True, risk="safe")
    def search_kb(
        query: str, collection: Literal["runbooks", "postmortems"] = "runbooks", limit: int = 5
    ) -> ToolResult:
        """Search runbooks or postmortems for passages relevant to the query, with citations.

        Args:
            query: the symptom, alert, service or procedure to look up.
            collection: "runbooks" or "postmortems" (filled by index_directory or Confluence).
            limit: most results, 1 to 50, best first.
        """
        return search_collection(settings, query, collection, limit)

    @ts.tool(read_only=True, risk="safe")
    def add_finding(
        title: str, summary: str, evidence: list[str] | None = None, tags: list[str] | None = None
    ) -> ToolResult:
        """Remember a confirmed finding of this investigation for later investigations of the project.

        Writes only the agent's own memory; secrets are cut out before it is stored.

        Args:
            title: one line (at most 300 characters), what was wrong.
            summary: the cause, the fix or workaround and how it was confirmed (at most 8,000
                characters).
            evidence: citations, URLs or short excerpts (at most 30, each at most 2,000 characters).
            tags: services, components, error types (at most 30).
        """
        failed = check_finding(title, summary, evidence, tags)
        if failed is not None:
            return failed
        finding = FindingRecord(
            project=project_name(settings),
            title=title,
            summary=summary,
            evidence=tuple(evidence or ()),
            tags=tuple(tags or ()),
            source="agent",
            session_id=CURRENT_SESSION.get(),
        )
        return remember(settings, finding)

    @ts.tool(read_only=True, risk="safe")
    def search_memory(query: str, limit: int = 5) -> ToolResult:
        """Recall findings of earlier investigations of this project related to a symptom, service or error.

        Each result has the finding's id, title, summary, evidence, tags, when it was recorded,
        the session it came from and a relevance score.

        Args:
            query: the symptom, service, error or component.
            limit: most findings, 1 to 50, best first.
        """
        return recall(settings, query, limit)

    return ts


def register(registry: ToolRegistry) -> None:
    """Entry point of the ``devops_agent.toolsets`` group."""
    registry.add_toolset(NAME, build, DESCRIPTION)
