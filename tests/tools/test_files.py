"""The files toolset and the roots guard, on real files in a temporary directory."""

from __future__ import annotations

import gzip
import os
import time
from pathlib import Path
from typing import Any

import pytest

from devops_agent.config import Settings
from devops_agent.errors import PathAccessError
from devops_agent.tools.base import ToolResult
from devops_agent.tools.files import build
from devops_agent.tools.paths import resolve_in_roots, roots_of


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    r.mkdir()
    (r / "app.log").write_text("".join(f"line {i} INFO ok\n" for i in range(1, 11)))
    (r / "sub").mkdir()
    (r / "sub" / "worker.log").write_text("start\nERROR disk full on /var\nretry\nERROR again\nend\n")
    (r / "sub" / "notes.txt").write_text("price is a.b[1] today\nnothing here\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("TOP SECRET ERROR\n")
    return r


@pytest.fixture
def settings(root: Path) -> Settings:
    return Settings(files={"roots": [root], "max_read_bytes": 4096})


def call(settings: Settings, tool: str, **kwargs: Any) -> ToolResult:
    result = build(settings).entries[tool].function(**kwargs)
    assert isinstance(result, ToolResult)
    return result


# --- roots guard -------------------------------------------------------------------------------


def test_resolve_in_roots_accepts_inside_and_refuses_dotdot(root: Path) -> None:
    assert resolve_in_roots(str(root / "sub" / "worker.log"), [root]) == root / "sub" / "worker.log"
    with pytest.raises(PathAccessError) as info:
        resolve_in_roots(str(root / ".." / "outside" / "secret.txt"), [root])
    assert str(root) in (info.value.hint or "")
    assert "files.roots" in (info.value.hint or "")


def test_symlink_pointing_outside_is_refused(root: Path, settings: Settings) -> None:
    (root / "link.txt").symlink_to(root.parent / "outside" / "secret.txt")
    result = call(settings, "files_read", path=str(root / "link.txt"))
    assert result.status == "error"
    assert "outside the allowed roots" in (result.error or "")
    assert "devops-agent.toml" in (result.hint or "")


def test_dotdot_escape_is_refused_by_every_reader(root: Path, settings: Settings) -> None:
    escape = str(root / ".." / "outside" / "secret.txt")
    for tool, extra in [
        ("files_read", {}),
        ("files_tail", {}),
        ("files_list", {}),
        ("files_grep", {"pattern": "x"}),
    ]:
        result = call(settings, tool, path=escape, **extra)
        assert result.status == "error", tool
        assert "outside the allowed roots" in (result.error or ""), tool


def test_relative_roots_resolve_against_cwd(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(root.parent)
    settings = Settings(files={"roots": [Path("root"), Path("root/sub")]})
    assert roots_of(settings) == [root.resolve(), (root / "sub").resolve()]
    result = call(settings, "files_read", path="root/app.log", max_lines=1)
    assert result.status == "success"
    assert result.data["lines"] == [{"n": 1, "text": "line 1 INFO ok"}]


def test_grep_skips_symlinked_file_pointing_outside(root: Path, settings: Settings) -> None:
    (root / "sub" / "evil.log").symlink_to(root.parent / "outside" / "secret.txt")
    result = call(settings, "files_grep", pattern="ERROR", path=str(root))
    assert result.status == "success"
    assert all("SECRET" not in m["line"] for m in result.data["matches"])
    assert result.data["skipped"]["outside_roots"] == 1


# --- list ----------------------------------------------------------------------------------------


def test_list_flat_and_recursive_with_pattern(root: Path, settings: Settings) -> None:
    flat = call(settings, "files_list", path=str(root))
    assert [(e["name"], e["type"]) for e in flat.data["entries"]] == [("app.log", "file"), ("sub", "dir")]
    assert flat.data["entries"][0]["size"] == (root / "app.log").stat().st_size
    assert flat.data["entries"][0]["mtime"].startswith(str(time.gmtime().tm_year))

    rec = call(settings, "files_list", path=str(root), pattern="*.log", recursive=True)
    assert sorted(e["name"] for e in rec.data["entries"]) == ["app.log", os.path.join("sub", "worker.log")]


def test_list_truncates_at_limit(root: Path, settings: Settings) -> None:
    for i in range(30):
        (root / f"f{i:02}.txt").write_text("x")
    result = call(settings, "files_list", path=str(root), pattern="f*.txt", limit=10)
    assert len(result.data["entries"]) == 10
    assert result.data["truncated"] is True
    assert result.data["entries"][0]["name"] == "f00.txt"


def test_list_missing_path_fails_with_hint(root: Path, settings: Settings) -> None:
    result = call(settings, "files_list", path=str(root / "nope"))
    assert result.status == "error"
    assert result.hint


# --- read ----------------------------------------------------------------------------------------


def test_read_range_with_line_numbers(root: Path, settings: Settings) -> None:
    result = call(settings, "files_read", path=str(root / "app.log"), start_line=3, max_lines=4)
    assert result.status == "success"
    assert [ln["n"] for ln in result.data["lines"]] == [3, 4, 5, 6]
    assert result.data["lines"][0]["text"] == "line 3 INFO ok"
    assert result.data["total_lines"] == 10
    assert result.data["truncated"] is True
    assert result.data["next_start_line"] == 7


def test_read_past_end_and_empty_file(root: Path, settings: Settings) -> None:
    past = call(settings, "files_read", path=str(root / "app.log"), start_line=50)
    assert past.status == "no_data"
    assert "10 lines" in (past.hint or "")
    (root / "empty.txt").write_text("")
    assert call(settings, "files_read", path=str(root / "empty.txt")).status == "no_data"


def test_read_refuses_binary(root: Path, settings: Settings) -> None:
    (root / "blob.bin").write_bytes(b"ELF\x00\x01\x02" + os.urandom(100))
    result = call(settings, "files_read", path=str(root / "blob.bin"))
    assert result.status == "error"
    assert "binary" in (result.error or "")
    assert result.hint


def test_read_respects_max_read_bytes(root: Path, settings: Settings) -> None:
    # 100 lines of 100 bytes = 10 KB, max_read_bytes is 4096: only the first 40 lines fit.
    (root / "wide.txt").write_text("".join(f"{i:04}" + "x" * 95 + "\n" for i in range(100)))
    result = call(settings, "files_read", path=str(root / "wide.txt"), max_lines=1000)
    assert result.status == "success"
    assert len(result.data["lines"]) == 40
    assert result.data["truncated"] is True
    assert "max_read_bytes" in result.data["note"]


def test_read_directory_and_missing_file_fail(root: Path, settings: Settings) -> None:
    assert "directory" in (call(settings, "files_read", path=str(root / "sub")).error or "")
    assert "no such file" in (call(settings, "files_read", path=str(root / "missing.log")).error or "")


# --- tail ----------------------------------------------------------------------------------------


def test_tail_of_50mb_file_is_correct_and_fast(root: Path) -> None:
    big = root / "big.log"
    line_count = 1_100_000  # 47 bytes a line: ~52 MB
    with big.open("w") as fh:
        for start in range(0, line_count, 50_000):
            fh.write(
                "".join(
                    f"{i:07} request served in 12ms path=/api/items\n" for i in range(start, start + 50_000)
                )
            )
    assert big.stat().st_size > 50_000_000
    settings = Settings(files={"roots": [root]})
    started = time.perf_counter()
    result = call(settings, "files_tail", path=str(big), lines=5)
    elapsed = time.perf_counter() - started
    assert result.data["lines"] == [
        f"{i:07} request served in 12ms path=/api/items" for i in range(1_099_995, 1_100_000)
    ]
    assert elapsed < 0.5, elapsed


def test_tail_of_sparse_multi_gb_file_reads_only_the_end(root: Path) -> None:
    huge = root / "huge.log"
    with huge.open("wb") as fh:
        fh.write(b"header line\n" * 1000)  # text beyond the 8 KB binary probe
        fh.seek(4 * 1024**3)  # a 4 GiB hole: reading it all would take many seconds
        fh.write(b"".join(b"tail %d\n" % i for i in range(1000)))
    settings = Settings(files={"roots": [root]})
    started = time.perf_counter()
    result = call(settings, "files_tail", path=str(huge), lines=3)
    assert time.perf_counter() - started < 0.5
    assert result.data["lines"] == ["tail 997", "tail 998", "tail 999"]
    assert result.data["file_size_bytes"] > 4 * 1024**3


def test_tail_edge_cases(root: Path, settings: Settings) -> None:
    (root / "short.txt").write_text("a\nb\nc")  # no trailing newline, fewer lines than asked
    assert call(settings, "files_tail", path=str(root / "short.txt"), lines=10).data["lines"] == [
        "a",
        "b",
        "c",
    ]
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    assert call(settings, "files_tail", path=str(root / "crlf.txt"), lines=1).data["lines"] == ["two"]
    (root / "empty.txt").write_text("")
    assert call(settings, "files_tail", path=str(root / "empty.txt")).status == "no_data"


def test_tail_of_gz(root: Path, settings: Settings) -> None:
    with gzip.open(root / "old.log.gz", "wt") as fh:
        fh.write("".join(f"rotated {i}\n" for i in range(10_000)))
    result = call(settings, "files_tail", path=str(root / "old.log.gz"), lines=3)
    assert result.data["lines"] == ["rotated 9997", "rotated 9998", "rotated 9999"]
    assert result.data["total_lines"] == 10_000
    assert result.data["compressed"] is True


def test_tail_refuses_binary(root: Path, settings: Settings) -> None:
    (root / "core").write_bytes(b"\x7fELF\x00\x00" * 100)
    assert "binary" in (call(settings, "files_tail", path=str(root / "core")).error or "")


# --- grep ----------------------------------------------------------------------------------------


def test_grep_regex_over_tree(root: Path, settings: Settings) -> None:
    result = call(settings, "files_grep", pattern=r"ERROR \w+", path=str(root))
    assert result.status == "success"
    found = [(Path(m["file"]).name, m["line_no"], m["line"]) for m in result.data["matches"]]
    assert found == [("worker.log", 2, "ERROR disk full on /var"), ("worker.log", 4, "ERROR again")]
    assert result.data["files_scanned"] == 3


def test_grep_literal_and_ignore_case(root: Path, settings: Settings) -> None:
    literal = call(settings, "files_grep", pattern="a.b[1]", path=str(root), regex=False)
    assert [m["line"] for m in literal.data["matches"]] == ["price is a.b[1] today"]
    assert call(settings, "files_grep", pattern="error", path=str(root)).status == "no_data"
    ci = call(settings, "files_grep", pattern="error", path=str(root), ignore_case=True)
    assert [m["line_no"] for m in ci.data["matches"]] == [2, 4]


def test_grep_invalid_regex_fails_with_hint(root: Path, settings: Settings) -> None:
    result = call(settings, "files_grep", pattern="ERROR (disk", path=str(root))
    assert result.status == "error"
    assert "missing )" in (result.error or "")
    assert "regex=false" in (result.hint or "")


def test_grep_context_and_max_matches(root: Path, settings: Settings) -> None:
    ctx = call(settings, "files_grep", pattern="disk full", path=str(root / "sub" / "worker.log"), context=1)
    (match,) = ctx.data["matches"]
    assert match["before"] == ["start"]
    assert match["after"] == ["retry"]
    capped = call(settings, "files_grep", pattern="INFO", path=str(root / "app.log"), max_matches=3)
    assert [m["line_no"] for m in capped.data["matches"]] == [1, 2, 3]
    assert capped.data["truncated"] is True


def test_grep_skips_binaries_and_searches_gz(root: Path, settings: Settings) -> None:
    (root / "blob.bin").write_bytes(b"ERROR\x00" * 50)
    with gzip.open(root / "sub" / "old.log.gz", "wt") as fh:
        fh.write("fine\nERROR inside gz\n")
    result = call(settings, "files_grep", pattern="^ERROR", path=str(root))
    assert result.data["skipped"]["binary"] == 1
    lines = {(Path(m["file"]).name, m["line"]) for m in result.data["matches"]}
    assert ("old.log.gz", "ERROR inside gz") in lines
    assert not any(name == "blob.bin" for name, _ in lines)


def test_grep_caps_bytes_scanned(root: Path) -> None:
    settings = Settings(files={"roots": [root], "max_read_bytes": 1024})  # scan cap: 10 KB
    (root / "many.log").write_text("".join(f"row {i}\n" for i in range(20_000)))
    result = call(settings, "files_grep", pattern="no-such-text", path=str(root / "many.log"))
    assert result.status == "no_data"
    assert "stopped after scanning 10240 bytes" in (result.hint or "")
    assert result.metadata["bytes_scanned"] < 20_000


def test_grep_refuses_a_nested_repeat_as_logs_search_does(settings: Settings, root: Path) -> None:
    """One check serves both search tools: a nested repeat backtracks exponentially while the GIL
    is held, which no tool timeout can stop."""
    (root / "token.log").write_text("token " + "a" * 18 + "b\n")
    res = call(settings, "files_grep", pattern="(a+)+$", path=str(root))
    assert res.status == "error"
    assert "repeats a group that itself repeats" in (res.error or "")
    assert call(settings, "files_grep", pattern="(a+)+$", path=str(root), regex=False).status == "no_data"
    assert call(settings, "files_grep", pattern=r"a++b", path=str(root)).status == "success"
