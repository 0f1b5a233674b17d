"""A persistent, incremental chunk index for one collection (``code``, ``runbooks``, ``postmortems``).

Storage is one SQLite file per collection (``<dir>/<collection>.sqlite``): stdlib, a single file
to back up or delete, transactional updates, and fast enough (see docs/knowledge.md for the
measurements). Each document row (a file, a Confluence page) keeps its source's change stamp and
the SHA-256 of its content; :meth:`KnowledgeIndex.update_from` re-chunks only documents whose
stamp changed *and* whose hash differs, and drops documents the source no longer holds
(:meth:`KnowledgeIndex.update` is the same for a directory). Chunk term counts are stored so the
in-memory BM25 index is rebuilt from the database without re-reading sources; vectors (optional)
are float32 blobs.

What a search needs in memory (the chunk BM25, the file BM25 and the symbol table) takes seconds
to build on a large collection, so it is also kept on disk next to the SQLite file
(``<collection>.<what>.cache``), stamped with the index's content state (a token that changes
with every update), and a new process loads it instead of rebuilding; a stale or unreadable
cache is rebuilt and rewritten. The cache files hold JSON and raw numbers only (no pickle), and
deleting them is always safe.

Writers take SQLite's write lock for a whole update (an update is one transaction) and wait up to
``BUSY_TIMEOUT_S`` for another writer to finish; past that the error says another index run holds
the collection. Readers never wait: SQLite's WAL mode gives them the last committed state.

Each file also gets an ``outline`` chunk (its path and the symbols it defines), which lets a query
naming a module or a class find the file, and is what the dense embedder reads when only one
vector per file is affordable. This module must not import policies, agent or interface code.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import struct
import time
import uuid
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any

from devops_agent.errors import StoreError
from devops_agent.knowledge.chunking import PROSE, Chunk, chunk_text, language_of
from devops_agent.knowledge.lexical import Bm25
from devops_agent.knowledge.sources import DirectorySource, Document, Source
from devops_agent.knowledge.symbols import SymbolTable
from devops_agent.knowledge.tokenize import term_counts
from devops_agent.knowledge.walker import Skipped, decode_text, report_skips

COLLECTIONS = ("code", "runbooks", "postmortems")
# How long an update waits for another writer of the same collection (an index run takes minutes
# on a large tree) before giving up with "another index run is in progress".
BUSY_TIMEOUT_S = 600.0
MAX_SKIPPED_LISTED = 20
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY, root TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, stamp TEXT NOT NULL DEFAULT '',
    url TEXT, title TEXT, UNIQUE (root, path));
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, kind TEXT NOT NULL, symbol TEXT NOT NULL,
    language TEXT NOT NULL, text TEXT NOT NULL, terms TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
CREATE TABLE IF NOT EXISTS vectors (
    chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE, model TEXT NOT NULL,
    vec BLOB NOT NULL);
"""
# Columns added after the first release, with how to fill them in an existing index. A file's
# stamp is what DirectorySource computes, so upgrading an index re-reads nothing.
_ADDED_COLUMNS = (
    ("stamp", "TEXT NOT NULL DEFAULT ''", "UPDATE files SET stamp = size || ':' || mtime_ns"),
    ("url", "TEXT", None),
    ("title", "TEXT", None),
    ("chunker", "INTEGER NOT NULL DEFAULT 0", None),
)
# What a file's chunks were made by: bump it whenever chunking or tokenization changes what a
# file's chunks or terms hold, so that the next update re-chunks every file once, even those
# whose content did not change (0: an index written before the number was recorded).
CHUNKER_VERSION = 1


@dataclass(frozen=True)
class Hit:
    """A retrieved chunk with its score, the root (source) it was indexed from and its page URL."""

    chunk: Chunk
    score: float
    root: str
    url: str | None = None
    title: str | None = None

    @property
    def citation(self) -> str:
        """``path:start-end`` for files; ``URL § heading (lines a-b)`` for web pages."""
        if self.url:
            c = self.chunk
            return f"{self.url} § {c.symbol} (lines {c.start_line}-{c.end_line})"
        return self.chunk.citation

    @property
    def key(self) -> tuple[str, str, str]:
        """Identifies the chunk across roots (two indexed trees may both hold ``src/app.py:1-9``)
        and from the file's outline, which spans a short file's lines exactly as its one chunk."""
        return (self.root, self.citation, self.chunk.kind)


@dataclass
class IndexStats:
    """What one update did; "files" are the source's documents (files, Confluence pages)."""

    files_seen: int = 0
    files_indexed: int = 0  # new or changed files that were (re-)chunked
    files_removed: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    seconds: float = 0.0
    # What was left out and why ("PATH (reason)"): unreadable files and directories first (the
    # index keeps what it held for them), then directories on the default skip list and files
    # over the size limit; at most MAX_SKIPPED_LISTED of them, skipped_count says how many in all.
    skipped: list[str] = field(default_factory=list)
    skipped_count: int = 0

    def note_skips(self, skips: Sequence[Skipped]) -> None:
        ordered = sorted(skips, key=lambda s: not s.unreadable)  # stable: walk order within each
        self.skipped = [str(s) for s in ordered[:MAX_SKIPPED_LISTED]]
        self.skipped_count = len(skips)


def outline_chunk(path: str, chunks: Sequence[Chunk], n_lines: int, language: str | None = None) -> Chunk:
    """A synthetic chunk naming the file and the symbols it defines (spans the whole file)."""
    symbols = list(dict.fromkeys(c.symbol for c in chunks if c.kind not in {"window", "module"}))
    text = path + "\n" + "\n".join(symbols)
    return Chunk(path, 1, max(1, n_lines), "outline", path, text, language or language_of(path))


def collection_file(directory: Path, collection: str) -> Path:
    """The SQLite file of ``collection`` in ``directory`` (whether or not it exists yet)."""
    if not collection.isidentifier():
        raise ValueError(f"collection name {collection!r} must be an identifier")
    return directory / f"{collection}.sqlite"


class KnowledgeIndex:
    """One collection's chunks in a SQLite file, with cached in-memory BM25 and vectors."""

    def __init__(self, db_path: Path, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        self.path = db_path
        self._db = sqlite3.connect(db_path, timeout=busy_timeout_s)
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.executescript(_SCHEMA)
        self._upgrade()
        self._bm25: tuple[int, Bm25] | None = None
        self._file_bm25: tuple[int, Bm25, list[str]] | None = None
        self._symbols: tuple[int, SymbolTable] | None = None
        self._vectors: tuple[int, str, Any] | None = None

    @classmethod
    def for_collection(cls, directory: Path, collection: str) -> KnowledgeIndex:
        return cls(collection_file(directory, collection))

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> KnowledgeIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _upgrade(self) -> None:
        """Add the columns an index written by an older version lacks."""
        have = {row[1] for row in self._db.execute("PRAGMA table_info(files)")}
        with self._db:
            for name, decl, fill in _ADDED_COLUMNS:
                if name not in have:
                    self._db.execute(f"ALTER TABLE files ADD COLUMN {name} {decl}")
                    if fill:
                        self._db.execute(fill)

    # -- writing -----------------------------------------------------------------------------
    def _generation(self) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

    def _bump(self) -> None:
        """Count a change, and renew the state token that keys the on-disk caches: a generation
        number alone would repeat in a collection deleted and indexed again."""
        self._db.executemany(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [("generation", str(self._generation() + 1)), ("state", uuid.uuid4().hex)],
        )

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """One write transaction, begun by taking the write lock (so what it reads first is what
        it changes); a lock still held by another writer after the busy timeout is a StoreError."""
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                yield
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            raise StoreError(
                f"the index {self.path} is being written by another process",
                hint="another index run is in progress; retry when it finishes",
            ) from exc

    def update(
        self,
        root: Path,
        files: Iterable[Path] | None = None,
        on_file: Callable[[IndexStats], None] | None = None,
    ) -> IndexStats:
        """Bring the index in line with the directory ``root`` (see :meth:`update_from`).

        ``files`` (paths relative to ``root``) replaces :func:`walk` as the complete list of what
        should be indexed; indexed files of this root that are not in it leave the index.
        """
        return self.update_from(DirectorySource(root, files), on_file)

    def update_from(self, source: Source, on_file: Callable[[IndexStats], None] | None = None) -> IndexStats:
        """Bring the index in line with ``source``: (re-)chunk new/changed documents, drop vanished ones.

        The whole update is one transaction: when the source fails half-way (a Confluence
        server error on page 3), the index keeps its previous state. ``on_file`` is called with
        the running stats after each document (for progress display).
        """
        started = time.perf_counter()
        key = source.key
        stats = IndexStats()
        seen: set[str] = set()
        with self._writing(), report_skips() as skips:
            known = {
                path: (fid, sha, stamp, chunker == CHUNKER_VERSION)
                for fid, path, sha, stamp, chunker in self._db.execute(
                    "SELECT id, path, sha256, stamp, chunker FROM files WHERE root = ?", (key,)
                )
            }
            for doc in source.documents():
                if doc.path in seen:  # a source naming one document twice: the first one counts
                    continue
                seen.add(doc.path)
                stats.files_seen += 1
                if on_file is not None:
                    on_file(stats)
                old = known.get(doc.path)
                if old and old[2] == doc.stamp and old[3]:
                    continue
                try:
                    data = doc.read()
                except OSError as exc:  # keeps what the index held for it, and says so
                    skips.append(Skipped(doc.path, f"unreadable: {exc.strerror or exc}", unreadable=True))
                    continue
                sha = hashlib.sha256(data).hexdigest()
                if old and old[1] == sha and old[3]:  # touched but unchanged: the new stamp only
                    self._db.execute(
                        "UPDATE files SET stamp = ?, mtime_ns = ? WHERE id = ?",
                        (doc.stamp, doc.modified_ns, old[0]),
                    )
                    continue
                if old:
                    stats.chunks_removed += self._delete_file(old[0])
                stats.chunks_added += self._add_document(key, doc, data, sha)
                stats.files_indexed += 1
            unreadable = [s for s in skips if s.unreadable]
            for path, (fid, *_rest) in known.items():
                # A file or directory that cannot be read now may be readable again later: it
                # keeps its chunks (reported in ``skipped``) rather than vanish from the index.
                if path not in seen and not any(s.covers(path) for s in unreadable):
                    stats.chunks_removed += self._delete_file(fid)
                    stats.files_removed += 1
            if stats.files_indexed or stats.files_removed:
                self._bump()
            stats.note_skips(skips)
        stats.seconds = time.perf_counter() - started
        return stats

    def roots(self) -> list[str]:
        """The sources indexed in this collection (their keys: directory paths, Confluence spaces)."""
        return [r[0] for r in self._db.execute("SELECT DISTINCT root FROM files ORDER BY root")]

    def forget(self, key: str) -> IndexStats:
        """Drop every document of the source ``key`` (e.g. a deleted directory), in one transaction."""
        started = time.perf_counter()
        stats = IndexStats()
        with self._writing():
            for (fid,) in self._db.execute("SELECT id FROM files WHERE root = ?", (key,)).fetchall():
                stats.chunks_removed += self._delete_file(fid)
                stats.files_removed += 1
            if stats.files_removed:
                self._bump()
        stats.seconds = time.perf_counter() - started
        return stats

    def _delete_file(self, file_id: int) -> int:
        n = self._db.execute("SELECT COUNT(*) FROM chunks WHERE file_id = ?", (file_id,)).fetchone()[0]
        self._db.execute("DELETE FROM files WHERE id = ?", (file_id,))
        return int(n)

    def _add_document(self, root: str, doc: Document, data: bytes, sha: str) -> int:
        text = decode_text(data)
        chunks = chunk_text(doc.path, text, doc.language)
        # lines as an editor counts them: a final newline ends the last line, it starts none
        n_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        chunks.append(outline_chunk(doc.path, chunks, max(1, n_lines), doc.language))
        cur = self._db.execute(
            "INSERT INTO files(root, path, sha256, size, mtime_ns, stamp, url, title, chunker) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (root, doc.path, sha, len(data), doc.modified_ns, doc.stamp, doc.url, doc.title, CHUNKER_VERSION),
        )
        fid = cur.lastrowid
        rows = []
        for c in chunks:
            # The path and symbol are part of every chunk's terms: they are what people search by.
            terms = term_counts(f"{c.path} {c.symbol}\n{c.text}" if c.kind != "outline" else c.text)
            rows.append(
                (fid, c.start_line, c.end_line, c.kind, c.symbol, c.language, c.text, json.dumps(terms))
            )
        self._db.executemany(
            "INSERT INTO chunks(file_id, start_line, end_line, kind, symbol, language, text, terms) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        return len(rows)

    # -- reading -----------------------------------------------------------------------------
    def definition_rows(self, paths: Sequence[str]) -> list[tuple[int, str, str, str, str, str]]:
        """``(chunk_id, root, path, kind, symbol, text)`` of the chunks of ``paths`` that may
        define names (functions, methods, classes, blocks, module code), with the text only for
        classes and module code (where the defined names are read from the text)."""
        rows: list[tuple[int, str, str, str, str, str]] = []
        for start in range(0, len(paths), 500):  # stay under SQLite's limit on bound parameters
            part = paths[start : start + 500]
            rows += self._db.execute(
                "SELECT c.id, f.root, f.path, c.kind, c.symbol, "
                "CASE WHEN c.kind IN ('class', 'module') THEN c.text ELSE '' END "
                "FROM files f JOIN chunks c ON c.file_id = f.id "
                f"WHERE f.path IN ({','.join('?' * len(part))}) "
                "AND c.kind IN ('function', 'method', 'class', 'block', 'module')",
                part,
            ).fetchall()
        return rows

    def counts(self) -> dict[str, int]:
        files = self._db.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        chunks = self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        vectors = self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        return {"files": int(files), "chunks": int(chunks), "vectors": int(vectors)}

    def paths(self) -> list[str]:
        """Relative paths of every indexed file."""
        return [r[0] for r in self._db.execute("SELECT path FROM files ORDER BY path")]

    def roots_of(self, paths: Sequence[str]) -> dict[str, list[str]]:
        """The roots each of ``paths`` (relative) is indexed under, in root order."""
        found: dict[str, list[str]] = {}
        for start in range(0, len(paths), 500):  # SQLite caps the number of bound parameters
            part = list(paths[start : start + 500])
            marks = ",".join("?" * len(part))
            for root, path in self._db.execute(
                f"SELECT root, path FROM files WHERE path IN ({marks}) ORDER BY root", part
            ):
                found.setdefault(path, []).append(root)
        return found

    def bm25(self) -> Bm25:
        """The BM25 index of all chunks, rebuilt only when the collection changed."""
        gen = self._generation()
        if self._bm25 is None or self._bm25[0] != gen:

            def build() -> list[Any]:
                rows = self._db.execute("SELECT id, terms FROM chunks")
                return [Bm25((cid, json.loads(terms)) for cid, terms in rows)]

            (bm25,) = self._through_cache("bm25", build)
            self._bm25 = (gen, bm25)
        return self._bm25[1]

    def file_bm25(self) -> tuple[Bm25, list[str]]:
        """BM25 over whole files (the summed term counts of each file's chunks, outline excluded)
        and the path of each of its document ids; rebuilt only when the collection changed.

        In a collection holding code, only code files take part: long prose files (changelogs,
        release notes) would otherwise set the length norm and the rarity of words for the code
        (on the SWE-bench DEV benchmark, file Recall@5 of the fused ranking 0.810 with them, 0.824
        without). Prose stays searchable chunk by chunk; a prose-only collection uses all files.
        """
        gen = self._generation()
        if self._file_bm25 is None or self._file_bm25[0] != gen:
            bm25, paths = self._through_cache("files", self._build_file_bm25)
            self._file_bm25 = (gen, bm25, paths)
        return self._file_bm25[1], self._file_bm25[2]

    def _build_file_bm25(self) -> list[Any]:
        """[file BM25, path of each of its document ids] (see :meth:`file_bm25`)."""
        paths = dict(self._db.execute("SELECT id, path FROM files"))
        prose = tuple(sorted(PROSE))
        marks = ",".join("?" * len(prose))
        has_code = self._db.execute(
            f"SELECT 1 FROM chunks WHERE language NOT IN ({marks}) LIMIT 1", prose
        ).fetchone()
        rows = self._db.execute(
            "SELECT file_id, terms FROM chunks WHERE kind != 'outline'"
            + (f" AND language NOT IN ({marks})" if has_code else ""),
            prose if has_code else (),
        )
        totals: dict[int, Counter[str]] = {}
        for fid, terms in rows:
            totals.setdefault(fid, Counter()).update(json.loads(terms))
        order = sorted(totals)
        bm25 = Bm25((n, totals[fid]) for n, fid in enumerate(order))
        return [bm25, [paths[fid] for fid in order]]

    def file_lexical(self, query: str, limit: int = 10) -> list[tuple[str, float]]:
        """The best whole files for ``query`` by BM25, as ``(path, score)``."""
        bm25, paths = self.file_bm25()
        return [(paths[doc], score) for doc, score in bm25.search(query, limit)]

    def symbols(self) -> SymbolTable:
        """Which files define which names (see :mod:`devops_agent.knowledge.symbols`), cached."""
        gen = self._generation()
        if self._symbols is None or self._symbols[0] != gen:

            def build() -> list[Any]:
                rows = self._db.execute(
                    "SELECT f.path, c.kind, c.symbol, "
                    "CASE WHEN c.kind IN ('class', 'module') THEN c.text ELSE '' END "
                    "FROM chunks c JOIN files f ON f.id = c.file_id "
                    "WHERE c.kind IN ('function', 'method', 'class', 'block', 'module')"
                )
                return [SymbolTable(rows)]

            (table,) = self._through_cache("symbols", build)
            self._symbols = (gen, table)
        return self._symbols[1]

    # -- on-disk caches ----------------------------------------------------------------------
    def cache_file(self, what: str) -> Path:
        """Where the on-disk cache ``what`` (``bm25``, ``files``, ``symbols``) of this index lives."""
        return self.path.with_name(f"{self.path.stem}.{what}.cache")

    def _cache_key(self) -> str:
        """The content state the caches must match: read *before* the rows they are built from,
        so a cache never claims a newer state than its content."""
        row = self._db.execute("SELECT value FROM meta WHERE key = 'state'").fetchone()
        if row is None:  # written before the state token existed: the counters stand in for it
            n, last = self._db.execute("SELECT COUNT(*), MAX(id) FROM chunks").fetchone()
            return f"legacy:{self._generation()}:{n}:{last}"
        return f"{row[0]}:{self._generation()}"

    def _through_cache(self, what: str, build: Callable[[], list[Any]]) -> list[Any]:
        """``build()``'s parts, loaded from the cache file ``what`` when it matches the content
        state; otherwise built and written there (a cache that cannot be written is no error)."""
        key = self._cache_key()
        path = self.cache_file(what)
        parts = load_cache(path, key)
        if parts is None:
            parts = build()
            with contextlib.suppress(OSError, TypeError, ValueError):
                save_cache(path, key, parts)
        return parts

    def get_hits(self, scored: Sequence[tuple[int, float]]) -> list[Hit]:
        """Hits for ``(chunk_id, score)`` pairs, in the given order."""
        if not scored:
            return []
        ids = [cid for cid, _ in scored]
        marks = ",".join("?" * len(ids))
        rows = self._db.execute(
            "SELECT c.id, f.root, f.path, c.start_line, c.end_line, c.kind, c.symbol, c.text, c.language, "
            f"f.url, f.title FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
            ids,
        ).fetchall()
        by_id = {r[0]: r for r in rows}
        hits = []
        for cid, score in scored:
            r = by_id.get(cid)
            if r is not None:
                hits.append(Hit(Chunk(r[2], r[3], r[4], r[5], r[6], r[7], r[8]), score, r[1], r[9], r[10]))
        return hits

    def lexical(self, query: str, limit: int = 10) -> list[Hit]:
        """The best chunks for ``query`` by BM25."""
        return self.get_hits(self.bm25().search(query, limit))

    # -- vectors (optional extra) -------------------------------------------------------------
    def embed_missing(
        self,
        embedder: Any,
        kinds: Sequence[str] | None = None,
        suffixes: Sequence[str] | None = None,
        batch: int = 256,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Embed chunks that have no vector yet; returns how many.

        ``kinds`` (chunk kinds) and ``suffixes`` (file name endings) limit what is embedded, for
        when embedding every chunk on a CPU would take too long (e.g. outlines of ``.py`` files).
        """
        from devops_agent.knowledge.dense import to_blob

        where = "" if not kinds else f" AND c.kind IN ({','.join('?' * len(kinds))})"
        todo = [
            row
            for row in self._db.execute(
                "SELECT c.id, f.path, c.symbol, c.text FROM chunks c JOIN files f ON f.id = c.file_id "
                f"WHERE c.id NOT IN (SELECT chunk_id FROM vectors){where}",
                tuple(kinds or ()),
            )
            if not suffixes or row[1].endswith(tuple(suffixes))
        ]
        done = 0
        for start in range(0, len(todo), batch):
            part = todo[start : start + batch]
            vecs = embedder.embed([f"{p} {s}\n{t}" for _, p, s, t in part])
            with self._writing():
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors(chunk_id, model, vec) VALUES (?, ?, ?)",
                    [(row[0], embedder.name, to_blob(v)) for row, v in zip(part, vecs, strict=True)],
                )
            done += len(part)
            if progress:
                progress(done)
        if done:
            with self._writing():
                self._bump()
        return done

    def dense(self, embedder: Any, query: str, limit: int = 10) -> list[Hit]:
        """The nearest embedded chunks to ``query`` (only chunks that have vectors take part)."""
        from devops_agent.knowledge.dense import VectorMatrix, from_blobs

        gen = self._generation()
        if self._vectors is None or self._vectors[:2] != (gen, embedder.name):
            rows = self._db.execute("SELECT chunk_id, vec FROM vectors WHERE model = ?", (embedder.name,))
            ids, blobs = [], []
            for cid, blob in rows:
                ids.append(cid)
                blobs.append(blob)
            self._vectors = (gen, embedder.name, VectorMatrix(ids, from_blobs(blobs)))
        matrix = self._vectors[2]
        return self.get_hits(matrix.search(embedder.embed([query])[0], limit))


# -- the cache file format -----------------------------------------------------------------------
# A magic line, the header's length (8 bytes, little-endian), a JSON header, then raw array bytes.
# The header names the content state (key) and describes each part: a JSON value, or an object of
# an allowed class whose attributes are JSON values or ``{str: array}`` maps (BM25 postings, stored
# as one concatenated array per map). Loading instantiates only the allowed classes and runs no
# code from the file, unlike pickle.
_CACHE_MAGIC = b"devops-agent knowledge cache v1\n"
_CACHE_CLASSES: dict[str, type[Any]] = {"Bm25": Bm25, "SymbolTable": SymbolTable}


def save_cache(path: Path, key: str, parts: Sequence[Any]) -> None:
    """Write ``parts`` (JSON values, or objects of the allowed classes) for the state ``key``.

    Raises TypeError for a part it cannot store; the file is replaced atomically.
    """
    blobs: list[bytes] = []
    described = [_describe_part(part, blobs) for part in parts]
    header = json.dumps({"key": key, "parts": described, "blobs": [len(b) for b in blobs]}).encode()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as fh:
            fh.write(_CACHE_MAGIC + struct.pack("<Q", len(header)) + header)
            for blob in blobs:
                fh.write(blob)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def load_cache(path: Path, key: str) -> list[Any] | None:
    """The parts saved in ``path`` for the state ``key``; None when missing, stale or damaged."""
    try:
        with path.open("rb") as fh:
            if fh.read(len(_CACHE_MAGIC)) != _CACHE_MAGIC:
                return None
            (size,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(size))
            if header.get("key") != key:
                return None
            blobs = [fh.read(n) for n in header["blobs"]]
        if any(len(b) != n for b, n in zip(blobs, header["blobs"], strict=True)):
            return None  # cut short
        return [_rebuild_part(d, blobs) for d in header["parts"]]
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError, struct.error):
        return None


def _describe_part(part: Any, blobs: list[bytes]) -> dict[str, Any]:
    name = type(part).__name__
    if _CACHE_CLASSES.get(name) is not type(part):
        json.dumps(part)  # TypeError when it is no JSON value either
        return {"json": part}
    attrs: dict[str, Any] = {}
    for attr, value in vars(part).items():
        arrays = list(value.values()) if isinstance(value, dict) else []
        if arrays and all(isinstance(a, array) and a.typecode == arrays[0].typecode for a in arrays):
            blobs.append(b"".join(a.tobytes() for a in arrays))
            attrs[attr] = {
                "typecode": arrays[0].typecode,
                "keys": list(value),
                "lengths": [len(a) for a in arrays],
                "blob": len(blobs) - 1,
            }
        else:
            json.dumps(value)
            attrs[attr] = {"json": value}
    return {"class": name, "attrs": attrs}


def _rebuild_part(described: dict[str, Any], blobs: list[bytes]) -> Any:
    if "json" in described:
        return described["json"]
    cls = _CACHE_CLASSES[described["class"]]
    obj = object.__new__(cls)  # as pickle does: the attributes below are the whole state
    for attr, value in described["attrs"].items():
        if "json" in value:
            setattr(obj, attr, value["json"])
            continue
        flat: array[Any] = array(value["typecode"])
        flat.frombytes(blobs[value["blob"]])
        mapping = _Slices(flat, value["keys"], value["lengths"])
        setattr(obj, attr, mapping)
    return obj


class _Slices(Mapping[str, "array[Any]"]):
    """A read-only ``{key: array}`` map over one flat array, slicing a key's part when it is
    looked up: loading a million BM25 posting lists then costs one dict of offsets, not a
    million array objects (a query touches a handful of them)."""

    def __init__(self, flat: array[Any], keys: Sequence[str], lengths: Sequence[int]) -> None:
        self._ends = array("q", accumulate(lengths))
        if len(keys) != len(self._ends) or (self._ends[-1] if keys else 0) != len(flat):
            raise ValueError("array lengths do not add up")
        self._flat = flat
        self._index = dict(zip(keys, range(len(keys)), strict=True))

    def __getitem__(self, key: str) -> array[Any]:
        i = self._index[key]
        return self._flat[self._ends[i - 1] if i else 0 : self._ends[i]]

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)
