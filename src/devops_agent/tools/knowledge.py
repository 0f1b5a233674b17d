"""The ``knowledge`` toolset: index a directory, then retrieve code context and runbook passages.

Every result carries a ``path:start-end`` citation so the model can quote evidence. The index
lives under ``settings.data_dir / "knowledge"`` (one SQLite file per collection).

``index_directory`` is declared ``read_only=True`` / risk ``safe`` on purpose: it only *reads*
the directory it is given (which must lie inside ``files.roots``, like every file tool), and the
only thing it writes is the agent's own derived index in its data dir — no user file, repository
or remote system is changed. Dense retrieval is used when the ``knowledge-dense`` extra is
installed and the collection has vectors; otherwise results are BM25. This module must not
import policies, agent or interface code.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from devops_agent.config import Settings
from devops_agent.errors import PathAccessError
from devops_agent.knowledge.index import COLLECTIONS, Hit, KnowledgeIndex
from devops_agent.knowledge.search import hybrid_search
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.paths import resolve_in_roots, roots_of
from devops_agent.tools.registry import ToolRegistry

NAME = "knowledge"
DESCRIPTION = "Index code and runbooks; retrieve cited chunks by hybrid (BM25 + optional dense) search"
MAX_LIMIT = 50
SNIPPET_CHARS = 1_500


def index_dir(settings: Settings) -> Path:
    """Where the knowledge indexes of ``settings`` live."""
    return settings.data_dir / "knowledge"


def _hit_data(hit: Hit) -> dict[str, Any]:
    text = hit.chunk.text
    return {
        "citation": hit.citation,
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


def search_collection(settings: Settings, query: str, collection: str, limit: int) -> ToolResult:
    if collection not in COLLECTIONS:
        return ToolResult.fail(
            f"unknown collection {collection!r}", hint=f"use one of {', '.join(COLLECTIONS)}"
        )
    if not query.strip():
        return ToolResult.fail("empty query", hint="describe what you are looking for")
    db = index_dir(settings) / f"{collection}.sqlite"
    if not db.exists():
        return ToolResult.empty(f"the {collection!r} collection is empty; call index_directory first")
    with KnowledgeIndex(db) as idx:
        embedder = _embedder_if_vectors(idx)
        hits = hybrid_search(idx, query, max(1, min(limit, MAX_LIMIT)), embedder)
    if not hits:
        return ToolResult.empty(f"nothing in {collection!r} matched; try other words or identifiers")
    return ToolResult.ok([_hit_data(h) for h in hits], collection=collection, dense=embedder is not None)


def _embedder_if_vectors(idx: KnowledgeIndex) -> Any:
    """The dense embedder when the extra is installed and this index has vectors, else ``None``."""
    if not idx.counts()["vectors"]:
        return None
    return _shared_embedder()


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
    def index_directory(path: str, collection: str = "code") -> ToolResult:
        """Index (or incrementally re-index) a directory into a collection: code, runbooks or postmortems.

        Only new or changed files are re-chunked; files that were deleted leave the index.
        Writes nothing but the agent's own index.
        """
        if collection not in COLLECTIONS:
            return ToolResult.fail(
                f"unknown collection {collection!r}", hint=f"use one of {', '.join(COLLECTIONS)}"
            )
        try:
            root = resolve_in_roots(path, roots)
        except PathAccessError as exc:
            return ToolResult.fail(exc.message, exc.hint)
        if not root.is_dir():
            return ToolResult.fail(f"{path}: not a directory", hint="give a directory to index")
        with KnowledgeIndex.for_collection(index_dir(settings), collection) as idx:
            stats = idx.update(root)
            counts = idx.counts()
        return ToolResult.ok(
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
                "seconds": round(stats.seconds, 3),
            }
        )

    @ts.tool(read_only=True, risk="safe")
    def retrieve_code_context(query: str, limit: int = 8) -> ToolResult:
        """Find the code chunks (functions, classes, blocks) most relevant to a question or error text.

        Each result has a ``path:start-end`` citation, the symbol and the chunk text.
        """
        return search_collection(settings, query, "code", limit)

    @ts.tool(read_only=True, risk="safe")
    def search_kb(query: str, collection: str = "runbooks", limit: int = 5) -> ToolResult:
        """Search runbooks or postmortems for passages relevant to the query, with citations."""
        return search_collection(settings, query, collection, limit)

    return ts


def register(registry: ToolRegistry) -> None:
    """Entry point of the ``devops_agent.toolsets`` group."""
    registry.add_toolset(NAME, build, DESCRIPTION)
