"""The git toolset against a real repository built in a temporary directory with real commits."""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from devops_agent.config import Settings
from devops_agent.tools.base import ToolResult
from devops_agent.tools.git import build

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

DATES = ["2024-01-01T10:00:00+00:00", "2024-02-01T10:00:00+00:00", "2024-03-01T10:00:00+02:00"]


def git(repo: Path, *args: str, **env: str) -> str:
    full_env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", **env}
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True, env=full_env)
    return out.stdout.decode()


def commit(repo: Path, message: str, date: str, author: str, email: str) -> str:
    git(repo, "add", "-A")
    git(
        repo,
        "commit",
        "-q",
        "-m",
        message,
        GIT_AUTHOR_NAME=author,
        GIT_AUTHOR_EMAIL=email,
        GIT_COMMITTER_NAME=author,
        GIT_COMMITTER_EMAIL=email,
        GIT_AUTHOR_DATE=date,
        GIT_COMMITTER_DATE=date,
    )
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    (r / "README.md").write_text("# demo\n")
    (r / "app.py").write_text("import os\nTIMEOUT = 30\nprint('hi')\n")
    commit(r, "initial import", DATES[0], "Alice", "alice@example.com")
    (r / "app.py").write_text("import os\nTIMEOUT = 5\nprint('hi')\n")
    commit(r, "lower timeout", DATES[1], "Bob", "bob@example.com")
    (r / "docs").mkdir()
    (r / "docs" / "guide.md").write_text("".join(f"step {i}: check the service\n" for i in range(1, 41)))
    commit(r, "add guide", DATES[2], "Carol", "carol@example.com")
    return r


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(files={"roots": [tmp_path]})


def call(settings: Settings, tool: str, **kwargs: Any) -> ToolResult:
    result = build(settings).entries[tool].function(**kwargs)
    assert isinstance(result, ToolResult)
    return result


def test_log_lists_commits_with_numstat(repo: Path, settings: Settings) -> None:
    result = call(settings, "git_log", repo=str(repo))
    assert result.status == "success"
    commits = result.data["commits"]
    assert [c["subject"] for c in commits] == ["add guide", "lower timeout", "initial import"]
    assert commits[0]["sha"] == git(repo, "rev-parse", "HEAD").strip()
    assert commits[0]["short_sha"] == commits[0]["sha"][: len(commits[0]["short_sha"])]
    assert commits[0]["files"] == [
        {"path": "docs/guide.md", "insertions": 40, "deletions": 0, "binary": False}
    ]
    assert commits[1]["author"] == "Bob"
    assert commits[1]["author_email"] == "bob@example.com"
    assert (commits[1]["insertions"], commits[1]["deletions"]) == (1, 1)
    assert datetime.fromisoformat(commits[0]["authored"]) == datetime.fromisoformat(DATES[2])


def test_log_filters_by_since_until_path_and_limit(repo: Path, settings: Settings) -> None:
    since = call(settings, "git_log", repo=str(repo), since="2024-01-15")
    assert [c["subject"] for c in since.data["commits"]] == ["add guide", "lower timeout"]
    until = call(settings, "git_log", repo=str(repo), until="2024-01-15")
    assert [c["subject"] for c in until.data["commits"]] == ["initial import"]
    by_path = call(settings, "git_log", repo=str(repo), path="app.py")
    assert [c["subject"] for c in by_path.data["commits"]] == ["lower timeout", "initial import"]
    limited = call(settings, "git_log", repo=str(repo), limit=1)
    assert limited.data["count"] == 1
    assert limited.data["limit_reached"] is True
    none = call(settings, "git_log", repo=str(repo), since="2030-01-01")
    assert none.status == "no_data"


def test_diff_default_range_and_truncation(repo: Path, settings: Settings) -> None:
    result = call(settings, "git_diff", repo=str(repo))
    assert result.status == "success"
    assert result.data["files"] == [
        {"path": "docs/guide.md", "insertions": 40, "deletions": 0, "binary": False}
    ]
    assert "+step 40: check the service" in result.data["patch"]
    assert result.data["truncated"] is False

    small = call(settings, "git_diff", repo=str(repo), rev_range="HEAD~2..HEAD", max_bytes=1000)
    assert small.data["truncated"] is True
    assert len(small.data["patch"].encode()) <= 1000
    assert small.data["files_changed"] == 2

    app_only = call(settings, "git_diff", repo=str(repo), rev_range="HEAD~2..HEAD", path="app.py")
    assert "-TIMEOUT = 30" in app_only.data["patch"]
    assert "+TIMEOUT = 5" in app_only.data["patch"]
    assert [f["path"] for f in app_only.data["files"]] == ["app.py"]


def test_diff_of_uncommitted_changes_and_no_changes(repo: Path, settings: Settings) -> None:
    assert call(settings, "git_diff", repo=str(repo), rev_range="HEAD").status == "no_data"
    (repo / "README.md").write_text("# demo\nedited\n")
    result = call(settings, "git_diff", repo=str(repo), rev_range="HEAD")
    assert "+edited" in result.data["patch"]


def test_diff_refuses_option_injection(repo: Path, settings: Settings, tmp_path: Path) -> None:
    target = tmp_path / "pwned.txt"
    result = call(settings, "git_diff", repo=str(repo), rev_range=f"--output={target}")
    assert result.status == "error"
    assert "starts with '-'" in (result.error or "")
    assert result.hint
    assert not target.exists()


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_diff_of_a_first_commit_is_against_the_empty_tree(
    tmp_path: Path, settings: Settings, object_format: str
) -> None:
    one = tmp_path / "one"
    one.mkdir()
    try:
        git(one, "init", "-q", "-b", "main", f"--object-format={object_format}")
    except subprocess.CalledProcessError:
        pytest.skip(f"this git cannot create {object_format} repositories")
    (one / "README.md").write_text("# demo\nhello\n")
    commit(one, "initial import", DATES[0], "Alice", "alice@example.com")
    for rev_range in ("HEAD~1..HEAD", "HEAD^..HEAD", "HEAD^!"):
        result = call(settings, "git_diff", repo=str(one), rev_range=rev_range)
        assert result.status == "success", (rev_range, result.error)
        assert result.data["rev_range"] == rev_range
        assert result.data["files"] == [
            {"path": "README.md", "insertions": 2, "deletions": 0, "binary": False}
        ]
        assert "+hello" in result.data["patch"]
        assert "first commit" in result.data["note"]


def test_diff_of_an_empty_first_commit_is_no_data(tmp_path: Path, settings: Settings) -> None:
    one = tmp_path / "one"
    one.mkdir()
    git(one, "init", "-q", "-b", "main")
    git(one, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "init")
    assert call(settings, "git_diff", repo=str(one)).status == "no_data"


def test_diff_of_the_root_commit_deep_in_history(repo: Path, settings: Settings) -> None:
    result = call(settings, "git_diff", repo=str(repo), rev_range="HEAD~2^!")
    assert [f["path"] for f in result.data["files"]] == ["README.md", "app.py"]
    later = call(settings, "git_diff", repo=str(repo), rev_range="HEAD~1^!")  # has a parent
    assert [f["path"] for f in later.data["files"]] == ["app.py"]
    assert "note" not in later.data


def test_diff_unknown_revision(repo: Path, settings: Settings) -> None:
    result = call(settings, "git_diff", repo=str(repo), rev_range="nope..HEAD")
    assert result.status == "error"
    assert "nope" in (result.error or "")
    assert "git_log" in (result.hint or "")


def test_blame_attributes_lines_to_their_commits(repo: Path, settings: Settings) -> None:
    result = call(settings, "git_blame", repo=str(repo), path="app.py", start_line=1, end_line=3)
    assert result.status == "success"
    lines = result.data["lines"]
    assert [ln["line_no"] for ln in lines] == [1, 2, 3]
    assert [ln["author"] for ln in lines] == ["Alice", "Bob", "Alice"]
    assert lines[1]["text"] == "TIMEOUT = 5"
    assert lines[1]["summary"] == "lower timeout"
    assert lines[1]["author_email"] == "bob@example.com"
    assert datetime.fromisoformat(lines[0]["date"]) == datetime.fromisoformat(DATES[0])
    assert lines[0]["sha"] == lines[2]["sha"] != lines[1]["sha"]


def test_blame_errors(repo: Path, settings: Settings) -> None:
    too_far = call(settings, "git_blame", repo=str(repo), path="app.py", start_line=10, end_line=20)
    assert too_far.status == "error"
    assert too_far.hint
    missing = call(settings, "git_blame", repo=str(repo), path="nope.py", start_line=1, end_line=2)
    assert missing.status == "error"
    assert (
        call(settings, "git_blame", repo=str(repo), path="app.py", start_line=3, end_line=1).status == "error"
    )


def test_status_clean_then_dirty(repo: Path, settings: Settings) -> None:
    clean = call(settings, "git_status", repo=str(repo))
    assert clean.status == "success"
    assert clean.data["branch"] == "main"
    assert clean.data["clean"] is True
    assert clean.data["repo"] == str(repo.resolve())

    (repo / "app.py").write_text("changed\n")  # unstaged
    (repo / "README.md").write_text("staged\n")
    git(repo, "add", "README.md")
    (repo / "new.txt").write_text("untracked\n")
    git(repo, "mv", "docs/guide.md", "docs/manual.md")  # a staged rename
    data = call(settings, "git_status", repo=str(repo / "docs")).data
    assert data["clean"] is False
    assert data["unstaged"] == [{"path": "app.py", "status": "M"}]
    assert {"path": "README.md", "status": "M"} in data["staged"]
    assert {"path": "docs/manual.md", "status": "R"} in data["staged"]
    assert data["untracked"] == [{"path": "new.txt", "status": "?"}]
    assert (data["staged_count"], data["unstaged_count"], data["untracked_count"]) == (2, 1, 1)


def test_repository_config_cannot_make_a_read_only_tool_run_a_program(
    repo: Path, settings: Settings, tmp_path: Path
) -> None:
    # a repository's own .git/config may name a program git runs on `git status` (core.fsmonitor);
    # the git tools are read-only and run without approval, so they must not run it
    marker = tmp_path / "fsmonitor-ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(hook))
    git(repo, "status")  # plain git does run it: the test would pass vacuously otherwise
    assert marker.exists()
    marker.unlink()
    (repo / "app.py").write_text("changed\n")
    for tool, kwargs in (
        ("git_status", {}),
        ("git_diff", {"rev_range": "HEAD"}),
        ("git_log", {"limit": 2}),
        ("git_blame", {"path": "app.py", "start_line": 1, "end_line": 2}),
    ):
        assert call(settings, tool, repo=str(repo), **kwargs).status in ("success", "no_data"), tool
        assert not marker.exists(), tool


def test_status_reports_upstream_ahead_behind(repo: Path, settings: Settings, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    (clone / "x.txt").write_text("x\n")
    commit(clone, "local work", DATES[2], "Dan", "dan@example.com")
    data = call(settings, "git_status", repo=str(clone)).data
    assert data["upstream"] == "origin/main"
    assert (data["ahead"], data["behind"]) == (1, 0)


def test_not_a_repository_and_outside_roots(tmp_path: Path, settings: Settings) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    for tool in ("git_status", "git_log", "git_diff"):
        result = call(settings, tool, repo=str(plain))
        assert result.status == "error", tool
        assert "not a git repository" in (result.error or ""), tool
        assert result.hint
    narrow = Settings(files={"roots": [plain]})
    result = call(narrow, "git_log", repo=str(tmp_path))
    assert result.status == "error"
    assert "outside the allowed roots" in (result.error or "")


def test_git_missing_from_path(
    repo: Path, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = call(settings, "git_log", repo=str(repo))
    assert result.status == "error"
    assert "git is not installed" in (result.error or "")
    assert "install git" in (result.hint or "")


def test_empty_repository_log_is_no_data(tmp_path: Path, settings: Settings) -> None:
    empty = tmp_path / "fresh"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    assert call(settings, "git_log", repo=str(empty)).status == "no_data"


def test_shallow_clone_boundary_is_not_reported_as_a_first_commit(
    repo: Path, settings: Settings, tmp_path: Path
) -> None:
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", "shallow")
    shallow = tmp_path / "shallow"
    diff = call(settings, "git_diff", repo=str(shallow))  # HEAD~1..HEAD: the parent was not fetched
    assert diff.status == "error"
    assert "shallow" in (diff.error or "")
    assert "--deepen" in (diff.hint or "")
    log = call(settings, "git_log", repo=str(shallow))
    (head,) = log.data["commits"]
    assert head["shallow_boundary"] is True
    assert head["files_changed"] is None  # not "added every file in the tree"
    assert "shallow" in log.data["note"]
    # A full clone's real first commit is still compared with the empty tree.
    full = call(settings, "git_diff", repo=str(repo), rev_range="HEAD~2^!")
    assert full.status == "success"
    assert "shallow_boundary" not in call(settings, "git_log", repo=str(repo)).data["commits"][-1]


def test_blame_in_a_sha256_repository(tmp_path: Path, settings: Settings) -> None:
    r = tmp_path / "s256"
    r.mkdir()
    try:
        git(r, "init", "-q", "-b", "main", "--object-format=sha256")
    except subprocess.CalledProcessError:
        pytest.skip("this git cannot create sha256 repositories")
    (r / "app.py").write_text("TIMEOUT = 5\n")
    sha = commit(r, "lower timeout", DATES[1], "Bob", "bob@example.com")
    result = call(settings, "git_blame", repo=str(r), path="app.py", start_line=1, end_line=1)
    assert result.status == "success", result
    (line,) = result.data["lines"]
    assert (line["line_no"], line["sha"], line["author"]) == (1, sha, "Bob")
