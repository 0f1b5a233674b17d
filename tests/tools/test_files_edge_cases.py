"""The files toolset at its edges: escapes by a path swapped after the roots check, reads that hang
or run unbounded, mangled text. Real files, FIFOs and symlinks in a temporary directory."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devops_agent.config import Settings
from devops_agent.tools import files as files_mod
from devops_agent.tools.base import ToolResult

MAX = 4096


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    (r / "sub").mkdir(parents=True)
    (r / "sub" / "app.log").write_text("inside line ERROR\n")
    (r / "plain.log").write_text("inside plain ERROR\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "app.log").write_text("TOP SECRET ERROR\n")
    (tmp_path / "outside" / "plain.log").write_text("TOP SECRET ERROR\n")
    return r


@pytest.fixture
def settings(root: Path) -> Settings:
    return Settings(files={"roots": [root], "max_read_bytes": MAX})


def call(settings: Settings, tool: str, **kwargs: Any) -> ToolResult:
    result = files_mod.build(settings).entries[tool].function(**kwargs)
    assert isinstance(result, ToolResult)
    return result


def in_thread(fn: Callable[[], ToolResult], timeout: float = 5.0) -> ToolResult | None:
    """``fn()`` in a daemon thread; ``None`` when it is still running after ``timeout``."""
    box: list[ToolResult] = []
    t = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    t.start()
    t.join(timeout)
    return box[0] if box else None


# --- a path swapped for a symlink between the roots check and the open --------------------------


def swap_after_check(monkeypatch: pytest.MonkeyPatch, swap: Callable[[], None]) -> None:
    """Run ``swap`` right after the first roots check approves a path: the race, made certain."""
    original = files_mod.resolve_in_roots
    done: list[bool] = []

    def checked_then_swapped(path: str, roots: list[Path]) -> Path:
        resolved = original(path, roots)
        if not done:
            done.append(True)
            swap()
        return resolved

    monkeypatch.setattr(files_mod, "resolve_in_roots", checked_then_swapped)


@pytest.mark.parametrize(
    ("tool", "extra"), [("files_read", {}), ("files_tail", {}), ("files_grep", {"pattern": "ERROR"})]
)
def test_parent_directory_swapped_for_symlink_after_check_is_not_followed(
    root: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch, tool: str, extra: dict[str, Any]
) -> None:
    def swap() -> None:
        shutil.rmtree(root / "sub")
        (root / "sub").symlink_to(root.parent / "outside")

    swap_after_check(monkeypatch, swap)
    result = call(settings, tool, path=str(root / "sub" / "app.log"), **extra)
    assert "TOP SECRET" not in json.dumps(result.model_dump())
    assert result.status == "error"
    assert "changed while it was being opened" in (result.error or "")


@pytest.mark.parametrize(
    ("tool", "extra"), [("files_read", {}), ("files_tail", {}), ("files_grep", {"pattern": "ERROR"})]
)
def test_file_swapped_for_symlink_after_check_is_not_followed(
    root: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch, tool: str, extra: dict[str, Any]
) -> None:
    def swap() -> None:
        (root / "plain.log").unlink()
        (root / "plain.log").symlink_to(root.parent / "outside" / "plain.log")

    swap_after_check(monkeypatch, swap)
    result = call(settings, tool, path=str(root / "plain.log"), **extra)
    assert "TOP SECRET" not in json.dumps(result.model_dump())
    assert result.status == "error"


def test_symlinks_inside_the_roots_still_work(root: Path, settings: Settings) -> None:
    (root / "link.log").symlink_to(root / "sub" / "app.log")
    (root / "linkdir").symlink_to(root / "sub")
    assert call(settings, "files_read", path=str(root / "link.log")).data["lines"][0]["text"] == (
        "inside line ERROR"
    )
    assert call(settings, "files_tail", path=str(root / "linkdir" / "app.log")).status == "success"
    grep = call(settings, "files_grep", pattern="inside line", path=str(root))
    assert {m["file"] for m in grep.data["matches"]} == {
        str(root / "link.log"),
        str(root / "sub" / "app.log"),
    }


# --- reads that hang or run unbounded ----------------------------------------------------------


def test_grep_of_a_fifo_answers_instead_of_hanging(root: Path, settings: Settings) -> None:
    fifo = root / "pipe"
    os.mkfifo(fifo)
    result = in_thread(lambda: call(settings, "files_grep", pattern="x", path=str(fifo)))
    if result is None:  # unblock the stuck reader so the thread ends
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        pytest.fail("files_grep blocked on a FIFO")
    assert result.status == "error"
    assert "not a regular file" in (result.error or "")


def test_grep_of_a_directory_skips_fifos_and_counts_them(root: Path, settings: Settings) -> None:
    os.mkfifo(root / "sub" / "pipe")
    result = in_thread(lambda: call(settings, "files_grep", pattern="inside", path=str(root)))
    assert result is not None
    assert result.status == "success"
    assert result.data["skipped"]["not_regular"] == 1


def test_gz_tail_is_bounded_by_max_read_bytes(root: Path, settings: Settings) -> None:
    with gzip.open(root / "big.log.gz", "wb") as fh:
        for i in range(3000):
            fh.write(f"{i:05d} ".encode() + b"x" * 994 + b"\n")
    result = call(settings, "files_tail", path=str(root / "big.log.gz"), lines=1000)
    assert result.status == "success"
    assert sum(len(line) for line in result.data["lines"]) <= MAX
    assert result.data["lines"][-1].startswith("02999 ")
    assert result.data["truncated"] is True
    assert "max_read_bytes" in result.data["note"]


def test_one_enormous_line_is_not_read_past_the_budget(root: Path, settings: Settings) -> None:
    (root / "minified.js").write_bytes(b"a" * 4_000_000)
    grep = call(settings, "files_grep", pattern="zzz", path=str(root / "minified.js"))
    assert grep.status == "no_data"
    assert grep.metadata["bytes_scanned"] <= MAX * 11  # budget is 10 x max_read_bytes
    assert "stopped after scanning" in (grep.hint or "")
    read = call(settings, "files_read", path=str(root / "minified.js"))
    assert read.status == "success"
    assert "line cut" in read.data["lines"][0]["text"]
    assert read.data["truncated"] is True
    assert read.data["total_lines"] is None


def test_grep_walk_stops_after_the_file_cap(
    root: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    many = root / "many"
    many.mkdir()
    for i in range(20):
        (many / f"{i:02d}.bin").write_bytes(b"\0")
    (many / "zz.log").write_text("needle\n")
    monkeypatch.setattr(files_mod, "LIST_SCAN_CAP", 5)
    result = call(settings, "files_grep", pattern="needle", path=str(many))
    assert result.status == "no_data"
    assert "stopped after looking at 5 files" in (result.hint or "")
    assert result.metadata["skipped"]["binary"] == 5


def test_flat_list_does_not_claim_it_stopped_early(
    root: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files_mod, "LIST_SCAN_CAP", 3)
    for i in range(5):
        (root / "sub" / f"f{i}.txt").write_text("x")
    result = call(settings, "files_list", path=str(root / "sub"))
    assert len(result.data["entries"]) == 6
    assert "note" not in result.data


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every directory")
def test_recursive_list_of_unreadable_directory_says_permission_denied(
    root: Path, settings: Settings
) -> None:
    locked = root / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        result = call(settings, "files_list", path=str(locked), recursive=True)
    finally:
        locked.chmod(0o755)
    assert result.status == "error"
    assert "permission denied" in (result.error or "")


# --- text --------------------------------------------------------------------------------------


def test_non_utf8_bytes_are_escaped_not_all_replaced(root: Path, settings: Settings) -> None:
    (root / "latin1.log").write_bytes("café crème\n".encode("latin-1"))
    text = call(settings, "files_read", path=str(root / "latin1.log")).data["lines"][0]["text"]
    assert "\ufffd" not in text
    assert text == "caf\\xe9 cr\\xe8me"
    tail = call(settings, "files_tail", path=str(root / "latin1.log")).data["lines"]
    assert tail == ["caf\\xe9 cr\\xe8me"]
    grep = call(settings, "files_grep", pattern="cr\\xe8me", regex=False, path=str(root / "latin1.log"))
    assert grep.status == "success"


# --- system: cgroup limits ---------------------------------------------------------------------
