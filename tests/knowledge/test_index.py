"""Index: BM25 finds the obvious chunk in a real tree; re-indexing is incremental by content hash."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from devops_agent.knowledge.index import KnowledgeIndex
from devops_agent.knowledge.lexical import Bm25
from devops_agent.knowledge.tokenize import term_counts

FILES = {
    "billing/invoice.py": (
        "def render_invoice_pdf(invoice):\n"
        "    '''Render an invoice as a PDF document.'''\n"
        "    return pdf.render(invoice.lines)\n"
    ),
    "net/retry.py": (
        "class RetryPolicy:\n"
        "    def backoff_delay(self, attempt):\n"
        "        return min(self.cap, self.base * 2 ** attempt)\n"
    ),
    "db/pool.py": "def acquire_connection(pool, timeout):\n    return pool.get(timeout=timeout)\n",
    "docs/runbook.md": "# Database failover\nPromote the replica.\n# Disk full\nRotate logs.\n",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture
def index(tmp_path: Path) -> KnowledgeIndex:
    idx = KnowledgeIndex.for_collection(tmp_path / "kn", "code")
    yield idx  # type: ignore[misc]
    idx.close()


def test_bm25_ranks_obvious_chunk_first(tree: Path, index: KnowledgeIndex) -> None:
    index.update(tree)
    top = index.lexical("exponential backoff delay for retries", 3)
    assert top[0].chunk.path == "net/retry.py"
    assert top[0].chunk.symbol == "RetryPolicy"
    top = index.lexical("render_invoice_pdf", 1)
    assert top[0].citation == "billing/invoice.py:1-3"
    top = index.lexical("how to do a database failover", 1)
    assert top[0].chunk.symbol == "Database failover"


def test_bm25_math_matches_formula() -> None:
    docs = [(1, term_counts("alpha beta")), (2, term_counts("beta gamma gamma")), (3, term_counts("delta"))]
    bm = Bm25(docs, k1=1.2, b=0.75)
    scores = bm.scores("gamma")
    import math

    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    avgdl = (2 + 3 + 1) / 3
    expected = idf * 2 * 2.2 / (2 + 1.2 * (1 - 0.75 + 0.75 * 3 / avgdl))
    assert scores == pytest.approx({2: expected}, rel=1e-6)


def test_incremental_reindex_touch_change_delete(tree: Path, index: KnowledgeIndex) -> None:
    first = index.update(tree)
    assert first.files_indexed == 4
    assert first.files_removed == 0
    before = index.counts()

    again = index.update(tree)
    assert (again.files_indexed, again.chunks_added, again.chunks_removed) == (0, 0, 0)

    touched = tree / "db/pool.py"
    st = touched.stat()
    os.utime(touched, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    assert index.update(tree).files_indexed == 0  # same content: hash says unchanged

    touched.write_text(FILES["db/pool.py"] + "\n\ndef release_connection(pool, conn):\n    pool.put(conn)\n")
    changed = index.update(tree)
    assert changed.files_indexed == 1
    assert changed.chunks_removed == 2  # the old function chunk and its outline
    assert changed.chunks_added == 3
    assert index.lexical("release_connection", 1)[0].chunk.symbol == "release_connection"
    assert index.counts()["chunks"] == before["chunks"] + 1

    (tree / "net/retry.py").unlink()
    gone = index.update(tree)
    assert gone.files_removed == 1
    assert gone.files_indexed == 0
    assert all(h.chunk.path != "net/retry.py" for h in index.lexical("backoff delay retry", 10))
    assert index.counts()["files"] == 3


def test_index_persists_across_instances(tree: Path, tmp_path: Path) -> None:
    with KnowledgeIndex.for_collection(tmp_path / "kn2", "runbooks") as idx:
        idx.update(tree)
    with KnowledgeIndex.for_collection(tmp_path / "kn2", "runbooks") as idx:
        assert idx.counts()["files"] == 4
        assert idx.lexical("rotate logs disk", 1)[0].chunk.symbol == "Disk full"
        assert idx.update(tree).files_indexed == 0


def test_collection_name_must_be_identifier(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="identifier"):
        KnowledgeIndex.for_collection(tmp_path, "../etc")


def test_files_chunked_by_an_older_chunker_are_rechunked_once(tree: Path, tmp_path: Path) -> None:
    """A new release that chunks differently must not leave an existing index's unchanged files
    with the old chunks: they are re-chunked on the next update, once."""
    import sqlite3

    path = tmp_path / "kn3" / "runbooks.sqlite"
    with KnowledgeIndex.for_collection(tmp_path / "kn3", "runbooks") as idx:
        idx.update(tree)
    # What an index written before chunker versions looks like: no column, and stale chunks.
    db = sqlite3.connect(path)
    with db:
        if any(row[1] == "chunker" for row in db.execute("PRAGMA table_info(files)")):
            db.execute("ALTER TABLE files DROP COLUMN chunker")
        db.execute(
            "UPDATE chunks SET text = 'stale', symbol = 'stale' WHERE file_id = "
            "(SELECT id FROM files WHERE path = 'docs/runbook.md') AND kind != 'outline'"
        )
    db.close()
    with KnowledgeIndex.for_collection(tmp_path / "kn3", "runbooks") as idx:
        again = idx.update(tree)
        assert again.files_indexed == 4  # unchanged content, but chunked by an older chunker
        assert idx.lexical("rotate logs disk", 1)[0].chunk.symbol == "Disk full"
        assert idx.update(tree).files_indexed == 0  # once
        assert idx.counts()["files"] == 4
