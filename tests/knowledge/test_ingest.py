"""Ingest fixes from the knowledge review: unreadable paths, concurrent writers, exact line
numbers, Unicode tokens, parent .gitignore files, skip reporting, on-disk search caches and the
binary/encoding rule. Permission tests run the walk in a child process; as root, that child drops
the capabilities that let root ignore file modes (``setpriv``), so the modes are really enforced.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from devops_agent.errors import StoreError
from devops_agent.knowledge import index as index_module
from devops_agent.knowledge.chunking import chunk_text
from devops_agent.knowledge.index import KnowledgeIndex
from devops_agent.knowledge.tokenize import tokenize
from devops_agent.knowledge.walker import Skipped, decode_text, walk
from fixtures_knowledge import unprivileged, write_file

_WALK = """
import json, sys
from pathlib import Path
from devops_agent.knowledge.walker import walk
skipped = []
files = [p.as_posix() for p in walk(Path(sys.argv[1]), skipped=skipped)]
print(json.dumps({"files": files, "skipped": [str(s) for s in skipped]}))
"""

_UPDATE = """
import dataclasses, json, sys
from pathlib import Path
from devops_agent.knowledge.index import KnowledgeIndex
with KnowledgeIndex(Path(sys.argv[2])) as idx:
    print(json.dumps(dataclasses.asdict(idx.update(Path(sys.argv[1])))))
"""


def _walk_unprivileged(root: Path) -> dict[str, object]:
    return unprivileged(_WALK.replace("sys.argv[1]", repr(str(root))))


# -- #1 and #14: unreadable directories and files -------------------------------------------------


def test_walk_skips_and_reports_a_directory_that_can_be_listed_but_not_entered(tmp_path: Path) -> None:
    root = tmp_path / "t1"
    write_file(root, "a.py", "x = 1\n")
    write_file(root, "sub/b.py", "y = 2\n")
    os.chmod(root / "sub", 0o644)  # what `chmod -R 644` leaves: readable, no execute bit
    try:
        got = _walk_unprivileged(root)
    finally:
        os.chmod(root / "sub", 0o755)
    assert got == {"files": ["a.py"], "skipped": ["sub/ (unreadable: Permission denied)"]}


def test_walk_of_an_unusable_root_reports_it_and_raises_nothing(tmp_path: Path) -> None:
    for mode in (0o444, 0o000):
        root = tmp_path / f"root{mode:o}"
        write_file(root, "a.py", "x = 1\n")
        os.chmod(root, mode)
        try:
            got = _walk_unprivileged(root)
        finally:
            os.chmod(root, 0o755)
        assert got == {"files": [], "skipped": ["./ (unreadable: Permission denied)"]}


def test_unreadable_files_and_directories_are_reported_and_keep_their_chunks(tmp_path: Path) -> None:
    root = tmp_path / "t12"
    write_file(root, "ok.py", "def ok(): pass\n")
    write_file(root, "hidden.py", "def secret_func(): pass\n")
    write_file(root, "locked/x.py", "def in_locked(): pass\n")
    db = tmp_path / "code.sqlite"
    with KnowledgeIndex(db) as idx:
        assert idx.update(root).files_indexed == 3
    os.chmod(root / "hidden.py", 0o000)
    os.chmod(root / "locked", 0o000)
    (root / "ok.py").touch()
    try:
        stats = unprivileged(
            _UPDATE.replace("sys.argv[1]", repr(str(root))).replace("sys.argv[2]", repr(str(db)))
        )
    finally:
        os.chmod(root / "hidden.py", 0o644)
        os.chmod(root / "locked", 0o755)
    assert stats["skipped"] == [
        "hidden.py (unreadable: Permission denied)",
        "locked/ (unreadable: Permission denied)",
    ]
    assert stats["skipped_count"] == 2
    assert stats["files_removed"] == 0
    with KnowledgeIndex(db) as idx:
        assert sorted(idx.paths()) == ["hidden.py", "locked/x.py", "ok.py"]
        assert idx.lexical("in_locked", 1)[0].chunk.path == "locked/x.py"


def test_a_file_whose_read_fails_is_reported_and_keeps_its_chunks(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_file(root, "a.py", "def alpha(): pass\n")
    with KnowledgeIndex(tmp_path / "code.sqlite") as idx:
        idx.update(root)
        write_file(root, "a.py", "def alpha_changed(): pass\n")
        source = index_module.DirectorySource(root)
        docs = list(source.documents())

        def refuse() -> bytes:
            raise PermissionError(13, "Permission denied")

        class Refusing:
            key = source.key

            def documents(self) -> list[index_module.Document]:
                return [index_module.Document(d.path, d.stamp, refuse) for d in docs]

        stats = idx.update_from(Refusing())
        assert stats.skipped == ["a.py (unreadable: Permission denied)"]
        assert stats.files_removed == 0
        assert idx.lexical("alpha", 1)[0].chunk.path == "a.py"


# -- #2: two writers ----------------------------------------------------------------------------------


def test_a_writer_blocked_past_the_busy_timeout_gets_a_store_error_with_a_hint(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_file(root, "a.py", "def a(): pass\n")
    db = tmp_path / "code.sqlite"
    with KnowledgeIndex(db) as first, KnowledgeIndex(db, busy_timeout_s=0.2) as second:
        first._db.execute("BEGIN IMMEDIATE")  # an update in progress holds the write lock
        with pytest.raises(StoreError) as exc:
            second.update(root)
        first._db.rollback()
        assert "another index run is in progress" in exc.value.one_line()
        assert second.update(root).files_indexed == 1  # the lock is free again


def test_a_second_update_of_the_same_root_waits_and_then_sees_the_first_ones_work(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for i in range(5):
        write_file(root, f"m{i}.py", f"def f{i}(): pass\n")
    db = tmp_path / "code.sqlite"
    errors: list[BaseException] = []
    started = threading.Event()

    def slow_update() -> None:
        with KnowledgeIndex(db) as idx:

            def tick(_stats: object) -> None:
                started.set()
                time.sleep(0.1)

            try:
                idx.update(root, on_file=tick)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

    worker = threading.Thread(target=slow_update)
    worker.start()
    assert started.wait(10)
    with KnowledgeIndex(db) as idx:
        stats = idx.update(root)  # waits for the lock, then finds everything indexed already
    worker.join()
    assert errors == []
    assert (stats.files_seen, stats.files_indexed) == (5, 0)


# -- #4: line numbers are \n lines ------------------------------------------------------------------


def test_form_feeds_and_other_breaks_do_not_shift_lines() -> None:
    py = chunk_text(
        "ff.py", 'import os\n\x0c\n\ndef target_function():\n    """Docstring."""\n    return os.getcwd()\n'
    )
    fn = next(c for c in py if c.symbol == "target_function")
    assert (fn.start_line, fn.end_line) == (4, 6)
    assert fn.text == 'def target_function():\n    """Docstring."""\n    return os.getcwd()'
    md = chunk_text(
        "notes.md", "# Notes\n\nIntro\x0cpage \u2028 more\n\n## Deep section\n\nfind the marker_word here\n"
    )
    deep = next(c for c in md if c.symbol == "Notes > Deep section")
    assert (deep.start_line, deep.end_line) == (5, 7)
    crlf = chunk_text("w.md", "# A\r\ntext\r\n# B\r\nmore\r\n")
    assert [(c.symbol, c.start_line, c.end_line, c.text) for c in crlf] == [
        ("A", 1, 2, "# A\ntext"),
        ("B", 3, 4, "# B\nmore"),
    ]


def test_a_python_file_with_lone_carriage_returns_is_one_line_as_editors_show_it() -> None:
    chunks = chunk_text("cr.py", "def a():\r    return 1\r")
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 1)]


# -- #5: Unicode tokens -----------------------------------------------------------------------------

# Outputs of the ASCII-only tokenizer these were captured from; they must not change.
ASCII_TOKENS = {
    "getHTTPResponse_code": ["gethttpresponse_code", "get", "http", "response", "code"],
    "parse_v2Header": ["parse_v2header", "parse", "header"],
    "XMLHttpRequest2": ["xmlhttprequest2", "xml", "http", "request"],
    "__init__": ["init"],
    "_private_var": ["private_var", "private", "var"],
    "HTTPError": ["httperror", "http", "error"],
    "v1beta1": ["v1beta1", "beta"],
    "IOError404Handler": ["ioerror404handler", "io", "error", "404", "handler"],
    "snake_case_Name": ["snake_case_name", "snake", "case", "name"],
    "ALL_CAPS_CONST": ["all_caps_const", "caps", "const"],
    "x": [],
    "a1b2c3": ["a1b2c3"],
    "3abc def": ["abc", "def"],
    "src/devops_agent/knowledge/index.py:12": [
        "src",
        "devops_agent",
        "devops",
        "agent",
        "knowledge",
        "index",
        "py",
    ],
    "don't re-use k8s": ["don", "re", "use", "k8s"],
    "ABCdef": ["abcdef", "ab", "cdef"],
    "fooBAR": ["foobar", "foo", "bar"],
    "Console.print()": ["console", "print"],
}


@pytest.mark.parametrize(("text", "expected"), ASCII_TOKENS.items())
def test_ascii_tokens_are_unchanged(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_unicode_words_are_whole_tokens_and_cjk_runs_give_pairs() -> None:
    assert tokenize("Zürich") == ["zürich"]
    assert tokenize("München échec") == ["münchen", "échec"]
    assert tokenize("東京") == ["東京"]
    assert tokenize("東京都") == ["東京都", "東京", "京都"]
    assert tokenize("naïveParser_ÜberKlasse") == [
        "naïveparser_überklasse",
        "naïve",
        "parser",
        "über",
        "klasse",
    ]
    assert tokenize("Москва_сити") == ["москва_сити", "москва", "сити"]
    assert tokenize("\ufb01le") == ["file"]  # NFKC: the ligature is two letters


def test_a_unicode_query_finds_its_word_and_not_an_ascii_tail_of_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_file(root, "dc.md", "# Failover\n\nThe Zürich datacenter uses 東京 as its standby.\n")
    write_file(root, "enrich.py", "def enrich_record(r):\n    return r  # adds rich metadata\n")
    with KnowledgeIndex(tmp_path / "code.sqlite") as idx:
        idx.update(root)
        assert {h.chunk.path for h in idx.lexical("Zürich", 5)} == {"dc.md"}
        assert {h.chunk.path for h in idx.lexical("東京", 5)} == {"dc.md"}


# -- #6: ignore rules from above the root -----------------------------------------------------------


def _repo(tmp_path: Path) -> Path:
    top = tmp_path / "repo"
    (top / ".git" / "info").mkdir(parents=True)  # what `git init` leaves; the walk runs no git
    write_file(top, ".gitignore", "*.env\n*.log\nsvc/\n/svc/keep/\nbuild\n")
    write_file(top, ".git/info/exclude", "secret.txt\n")
    write_file(top, "svc/.gitignore", "!debug.log\n")
    write_file(top, "svc/config/prod.env", "DB_PASSWORD=prod-s3cret\n")
    write_file(top, "svc/debug.log", "kept: the nearer .gitignore re-includes it\n")
    write_file(top, "svc/trace.log", "ERROR token=tok_live_123\n")
    write_file(top, "svc/secret.txt", "s\n")
    write_file(top, "svc/app.py", "def handler(): pass\n")
    write_file(top, "svc/keep/k.py", "k = 1\n")
    write_file(top, "svc/build/b.py", "b = 1\n")
    return top


def test_a_subdirectory_of_a_git_work_tree_honours_the_ignore_files_above_it(tmp_path: Path) -> None:
    top = _repo(tmp_path)
    got = sorted(p.as_posix() for p in walk(top / "svc"))
    # svc/ itself is ignored above it but was named on purpose; the unanchored `build` still
    # applies below it; `/svc/keep/` is anchored at the top and matches a directory below svc.
    assert got == ["app.py", "debug.log"]


def test_the_work_tree_top_honours_info_exclude(tmp_path: Path) -> None:
    top = _repo(tmp_path)
    write_file(top, "secret.txt", "s\n")
    write_file(top, "README.md", "# hi\n")
    assert sorted(p.as_posix() for p in walk(top)) == ["README.md"]


def test_a_worktree_git_file_points_to_the_shared_info_exclude(tmp_path: Path) -> None:
    main = tmp_path / "main"
    write_file(main, ".git/info/exclude", "*.secret\n")
    write_file(main, ".git/worktrees/wt/commondir", "../..\n")
    wt = tmp_path / "wt"
    write_file(wt, ".git", f"gitdir: {main / '.git' / 'worktrees' / 'wt'}\n")
    write_file(wt, "a.py", "a = 1\n")
    write_file(wt, "b.secret", "b\n")
    assert [p.as_posix() for p in walk(wt)] == ["a.py"]


# -- #7: default skips never hide the root, and are reported --------------------------------------


def test_a_root_named_like_a_skipped_directory_is_indexed_and_skips_below_are_reported(
    tmp_path: Path,
) -> None:
    root = tmp_path / "coverage"
    write_file(root, "__init__.py", "class CoverageData: pass\n")
    write_file(root, "build/out.py", "x = 1\n")
    write_file(root, "__pycache__/m.pyc", "x\n")
    skipped: list[Skipped] = []
    assert [p.as_posix() for p in walk(root, skipped=skipped)] == ["__init__.py"]
    assert [str(s) for s in skipped] == ["build/ (default skip list)"]  # caches are not worth a line
    with KnowledgeIndex(tmp_path / "code.sqlite") as idx:
        stats = idx.update(root)
    assert (stats.files_indexed, stats.skipped, stats.skipped_count) == (1, ["build/ (default skip list)"], 1)


def test_the_skipped_list_is_capped_and_counted(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for i in range(index_module.MAX_SKIPPED_LISTED + 5):
        write_file(root, f"p{i:02}/dist/x.py", "x = 1\n")
    write_file(root, "big.txt", "x" * 2_000_000)
    with KnowledgeIndex(tmp_path / "code.sqlite") as idx:
        stats = idx.update(root)
    assert stats.skipped_count == index_module.MAX_SKIPPED_LISTED + 6
    assert len(stats.skipped) == index_module.MAX_SKIPPED_LISTED
    assert stats.skipped[0] == "big.txt (over 1,000,000 bytes)"


# -- #8: search structures persist across processes -------------------------------------------------


def test_search_structures_load_from_disk_until_the_content_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    write_file(
        root, "net/retry.py", "class RetryPolicy:\n    def backoff_delay(self, attempt):\n        return 2\n"
    )
    write_file(root, "db/pool.py", "def acquire_connection(pool):\n    return pool.get()\n")
    write_file(root, "docs/run.md", "# Failover\nPromote the replica.\n")
    db = tmp_path / "code.sqlite"
    with KnowledgeIndex(db) as idx:
        idx.update(root)
        built = (idx.lexical("retry backoff", 5), idx.file_lexical("acquire pool", 5))
        symbols = idx.symbols().files_defining("backoff_delay")
        assert all(idx.cache_file(w).is_file() for w in ("bm25", "files", "symbols"))

    def no_rebuild(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("rebuilt although the cache matches")

    with monkeypatch.context() as m:
        m.setattr(index_module, "Bm25", no_rebuild)
        m.setattr(index_module, "SymbolTable", no_rebuild)
        with KnowledgeIndex(db) as idx:
            assert (idx.lexical("retry backoff", 5), idx.file_lexical("acquire pool", 5)) == built
            assert idx.symbols().files_defining("backoff_delay") == symbols == ["net/retry.py"]

    write_file(root, "net/jitter.py", "def retry_jitter():\n    return 1\n")
    with KnowledgeIndex(db) as idx:
        idx.update(root)
        assert idx.lexical("retry_jitter", 1)[0].chunk.path == "net/jitter.py"  # stale cache not used
        assert idx.symbols().files_defining("retry_jitter") == ["net/jitter.py"]
    idx_file = KnowledgeIndex(db)
    idx_file.cache_file("bm25").write_bytes(b"damaged")
    assert idx_file.lexical("retry_jitter", 1)[0].chunk.path == "net/jitter.py"  # rebuilt
    idx_file.close()


# -- #17: byte order marks and the binary/encoding rule --------------------------------------------


def test_bom_markdown_keeps_its_first_heading_and_latin1_files_are_text(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_file(root, "bom.md", "\ufeff# Rollback guide\n\nUndo the deploy.\n".encode())
    write_file(root, "short.txt", "Zurich caf\xe9\n".encode("latin-1"))
    write_file(root, "long.txt", ("filler line\n" * 800 + "Zurich caf\xe9\n").encode("latin-1"))
    write_file(root, "blob.bin", b"abc\x00def")
    assert sorted(p.as_posix() for p in walk(root)) == ["bom.md", "long.txt", "short.txt"]
    with KnowledgeIndex(tmp_path / "code.sqlite") as idx:
        idx.update(root)
        assert idx.lexical("rollback guide", 1)[0].chunk.symbol == "Rollback guide"
        assert {h.chunk.path for h in idx.lexical("café", 5)} == {"short.txt", "long.txt"}
    assert decode_text("\ufeffé".encode()) == "é"
    assert decode_text(b"caf\xe9") == "café"


@pytest.mark.parametrize(("text", "lines"), [("a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n", 5), ("a = 1\nb = 2", 2)])
def test_the_outline_spans_the_files_lines_as_an_editor_counts_them(
    tmp_path: Path, text: str, lines: int
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "mod.py").write_text(text)
    idx = KnowledgeIndex(tmp_path / "code.sqlite")
    try:
        idx.update(tmp_path / "src")
        outline = [h.chunk for h in idx.lexical("mod", 20) if h.chunk.kind == "outline"]
    finally:
        idx.close()
    assert [(c.start_line, c.end_line) for c in outline] == [(1, lines)]
