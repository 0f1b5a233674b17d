"""The ``git`` toolset: status, history, diffs and blame of repositories inside the configured roots.

It runs the ``git`` CLI with argument lists (never a shell), ``-C <repo>``, a 30 s timeout, no
terminal prompts (``GIT_TERMINAL_PROMPT=0``), no optional locks, and the C locale so output can be
parsed. Only read-only subcommands are used; user-supplied revisions are refused when they start
with ``-`` so they cannot smuggle in options, and paths always follow ``--``. This module must not
run anything that changes a repository, its index, its config or its remotes.
"""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from devops_agent.analysis.timeparse import parse_since
from devops_agent.config import Settings
from devops_agent.errors import PathAccessError, ToolError, UserError
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.evidence import commits_evidence
from devops_agent.tools.paths import resolve_in_roots, roots_of
from devops_agent.tools.registry import ToolRegistry

NAME = "git"
DESCRIPTION = "Read git repositories: status, log with file changes, diffs, blame"

TIMEOUT_S = 30.0
FIRST_FILES = 20
MAX_FILES_PER_COMMIT = 50
_FAILURES = (  # (text in git's stderr, hint)
    ("not a git repository", "point `repo` at a directory inside a git work tree"),
    (
        "dubious ownership",
        "the repository belongs to another user; mark it safe with `git config --global "
        "--add safe.directory <repo>` outside the agent",
    ),
    ("unknown revision", "check the revision names; git_log lists commits, HEAD~1 needs at least two"),
    ("bad revision", "check the revision names; git_log lists commits, HEAD~1 needs at least two"),
    ("outside repository", "paths are relative to the repository; use a path inside it"),
    ("invalid object name", "check the revision names; git_log lists commits"),
    ("does not have any commits yet", "the repository has no commits yet"),
    ("no such path", "the file does not exist at that revision; check the path relative to the repo"),
    ("has only", "the file is shorter than the requested range; lower end_line"),
)


_SHALLOW = (
    "the checkout is a shallow clone (CI checkouts often are): fetch more history outside the agent "
    "(`git fetch --deepen=50` or `git fetch --unshallow`), or use github_compare / github_commit"
)
_INSTALL = "install git (e.g. `apt-get install git`) or put it on PATH"
_NARROW = "narrow the request (a path, a shorter range or a smaller limit)"


def _git_date(value: str) -> str:
    """A date git reads correctly: our shorthand (2h, 30m, ISO) becomes an exact UTC timestamp.

    git's own date parser silently misreads shorthand (``--since=2h`` matches everything), so
    anything :func:`parse_since` understands is converted; other phrases ("last monday") go to
    git unchanged.
    """
    try:
        return parse_since(value).strftime("%Y-%m-%dT%H:%M:%SZ")
    except UserError:
        return value


def _env() -> dict[str, str]:
    # No prompts (a credential helper would hang), no index refresh writes, parseable messages.
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}


# Before every subcommand. core.fsmonitor: a repository's own config may name a program that
# `git status` (and any index refresh) runs; these tools are read-only and run without approval,
# so a cloned repository must not be able to make them run anything (external diff drivers and
# textconv filters are turned off where diffs are made, --no-ext-diff --no-textconv).
_GIT_OPTIONS = ("-c", "core.quotepath=off", "-c", "core.fsmonitor=false", "--no-pager")


def _git(repo: Path, *args: str) -> str:
    """Run ``git -C repo args`` and return stdout; raises :class:`ToolError` with a hint on failure."""
    argv = ["git", "-C", str(repo), *_GIT_OPTIONS, *args]
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=TIMEOUT_S, env=_env(), check=False)
    except FileNotFoundError:
        raise ToolError("git is not installed (no `git` on PATH)", tool=NAME, hint=_INSTALL) from None
    except subprocess.TimeoutExpired:
        raise ToolError(f"git {args[0]} timed out after {TIMEOUT_S:.0f}s", tool=NAME, hint=_NARROW) from None
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip()
        hint = next((h for needle, h in _FAILURES if needle in err.lower()), None)
        first = err.splitlines()[0] if err else f"exit status {proc.returncode}"
        raise ToolError(f"git {args[0]} failed: {first.removeprefix('fatal: ')}", tool=NAME, hint=hint)
    return proc.stdout.decode(errors="replace")


def _git_head(repo: Path, max_bytes: int, *args: str) -> tuple[bytes, bool]:
    """Run git and keep only the first ``max_bytes`` of stdout, stopping git early; ``True`` if cut.

    For output that can be huge (a patch); run a cheap command with :func:`_git` first so that
    argument errors are reported with a hint.
    """
    argv = ["git", "-C", str(repo), *_GIT_OPTIONS, *args]
    try:
        with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env()) as proc:
            assert proc.stdout is not None
            data = proc.stdout.read(max_bytes + 1)
            if len(data) > max_bytes:
                proc.kill()
            proc.wait(TIMEOUT_S)
    except FileNotFoundError:
        raise ToolError("git is not installed (no `git` on PATH)", tool=NAME, hint=_INSTALL) from None
    except subprocess.TimeoutExpired:
        raise ToolError(f"git {args[0]} timed out after {TIMEOUT_S:.0f}s", tool=NAME, hint=_NARROW) from None
    return data[:max_bytes], len(data) > max_bytes


def _numstat(text: str) -> tuple[list[dict[str, Any]], int, int]:
    """Parse ``--numstat`` lines into files plus total insertions and deletions ("-" = binary)."""
    files: list[dict[str, Any]] = []
    added = removed = 0
    for line in text.splitlines():
        parts = line.split("\t", 2)
        if len(parts) != 3:
            continue
        ins = int(parts[0]) if parts[0].isdigit() else None
        dels = int(parts[1]) if parts[1].isdigit() else None
        added += ins or 0
        removed += dels or 0
        files.append({"path": parts[2], "insertions": ins, "deletions": dels, "binary": ins is None})
    return files, added, removed


def _against_parent(rev_range: str) -> str | None:
    """The commit ``X`` when ``rev_range`` asks for ``X`` against its parent (``X~1..X``,
    ``X^..X``, ``X^!``), else ``None``."""
    if rev_range.endswith("^!"):
        return rev_range[:-2] or None
    base, dots, tip = rev_range.partition("..")
    if dots and tip and not tip.startswith(".") and base in (f"{tip}~", f"{tip}~1", f"{tip}^", f"{tip}^1"):
        return tip
    return None


def _shallow_cuts(repo: Path) -> set[str]:
    """The commits where a shallow clone's history was cut (empty for a full clone).

    git shows such a commit without parents, so its diff and ``--numstat`` look like a first
    commit that added every file, which it is not.
    """
    try:
        path = Path(_git(repo, "rev-parse", "--git-path", "shallow").strip())
    except ToolError:
        return set()
    try:
        return set((path if path.is_absolute() else repo / path).read_text().split())
    except OSError:
        return set()


def _root_compare(repo: Path, rev_range: str) -> list[str] | None:
    """``[empty tree, X]`` when ``rev_range`` is ``X`` against its parent and ``X`` has none.

    A repository's first commit has no parent, so ``HEAD~1..HEAD`` is a bad revision there (and
    ``HEAD^!`` silently shows nothing); its change is everything it added, i.e. its diff against
    the empty tree. The empty tree's id depends on the repository's hash (SHA-1 or SHA-256).
    """
    commit = _against_parent(rev_range)
    if commit is None:
        return None
    try:
        parents = _git(repo, "rev-list", "--parents", "-n", "1", commit, "--").split()
    except ToolError:
        return None  # not a revision: the diff itself reports it, with its hint
    if len(parents) != 1:
        return None
    if parents[0] in _shallow_cuts(repo):
        raise ToolError(
            f"{commit} is where this shallow clone's history stops: its parent was not fetched, "
            "so what it changed is unknown here",
            tool=NAME,
            hint=_SHALLOW,
        )
    return [_git(repo, "hash-object", "-t", "tree", os.devnull).strip(), commit]


def is_work_tree(path: Path) -> bool:
    """Whether ``path`` lies inside a git work tree, as git itself decides (``rev-parse``).

    Raises:
        ToolError: git could not answer (not installed, timed out, a repository it refuses to
            read such as one owned by another user); the error carries git's hint.
    """
    try:
        return _git(path, "rev-parse", "--is-inside-work-tree").strip() == "true"
    except ToolError as exc:
        if "not a git repository" in exc.message.lower():
            return False
        raise


def _check_rev(value: str, what: str) -> None:
    if value.startswith("-"):
        raise ToolError(
            f"{what} {value!r} starts with '-'",
            tool=NAME,
            hint=f"{what} must be a revision such as HEAD~3..HEAD or main..feature, not an option",
        )


def build(settings: Settings) -> ToolsetBuilder:
    """The git toolset; repositories must lie inside ``settings.files.roots``."""
    ts = ToolsetBuilder(NAME, DESCRIPTION)

    def repo_dir(repo: str) -> Path:
        path = resolve_in_roots(repo, roots_of(settings))
        if not path.is_dir():
            raise PathAccessError(
                f"{repo}: no such directory", hint="`repo` must be a directory in a git work tree"
            )
        # Fails early with a clear message outside a work tree, where `git diff` would otherwise
        # fall back to comparing arbitrary paths (--no-index).
        try:
            _git(path, "rev-parse", "--show-toplevel")
        except ToolError as exc:
            if "not a git repository" not in exc.message.lower():
                raise
            raise ToolError(
                f"{repo} is not a git repository (nor inside one)", tool=NAME, hint=exc.hint
            ) from None
        return path

    @ts.tool(category="git", read_only=True)
    def git_status(repo: str = ".") -> ToolResult:
        """Show a repository's branch, how far it is ahead/behind its upstream, and uncommitted changes.

        Use it to check whether a deployed checkout was modified or is out of date.

        Args:
            repo: a directory inside the repository's work tree.
        """
        try:
            path = repo_dir(repo)
            root = _git(path, "rev-parse", "--show-toplevel").strip()
            out = _git(path, "status", "--porcelain=v2", "--branch", "-z")
        except (ToolError, PathAccessError) as exc:
            return ToolResult.fail(exc.message, exc.hint)
        info: dict[str, Any] = {
            "repo": root,
            "branch": None,
            "head": None,
            "upstream": None,
            "ahead": None,
            "behind": None,
        }
        groups: dict[str, list[dict[str, str]]] = {
            "staged": [],
            "unstaged": [],
            "untracked": [],
            "conflicted": [],
        }
        tokens = iter(out.split("\0"))
        for tok in tokens:
            if tok.startswith("# branch.head "):
                info["branch"] = tok.split(" ", 2)[2]
            elif tok.startswith("# branch.oid "):
                info["head"] = tok.split(" ", 2)[2][:12]
            elif tok.startswith("# branch.upstream "):
                info["upstream"] = tok.split(" ", 2)[2]
            elif tok.startswith("# branch.ab "):
                ahead, behind = tok.split(" ")[2:4]
                info["ahead"], info["behind"] = int(ahead), -int(behind)
            elif tok[:2] in ("1 ", "2 "):
                fields = tok.split(" ", 8 if tok[0] == "1" else 9)
                xy, file = fields[1], fields[-1]
                if tok[0] == "2":
                    next(tokens, None)  # the rename's original path
                if xy[0] != ".":
                    groups["staged"].append({"path": file, "status": xy[0]})
                if xy[1] != ".":
                    groups["unstaged"].append({"path": file, "status": xy[1]})
            elif tok.startswith("u "):
                groups["conflicted"].append({"path": tok.split(" ", 10)[-1], "status": tok.split(" ")[1]})
            elif tok.startswith("? "):
                groups["untracked"].append({"path": tok[2:], "status": "?"})
        info["detached"] = info["branch"] == "(detached)"
        for name, items in groups.items():
            info[f"{name}_count"] = len(items)
            info[name] = items[:FIRST_FILES]
        info["clean"] = not any(groups.values())
        return ToolResult.ok(info, source="git status")

    @ts.tool(category="git", read_only=True)
    def git_log(
        repo: str = ".",
        since: str | None = None,
        until: str | None = None,
        path: str | None = None,
        limit: Annotated[int, Field(ge=1, le=500)] = 30,
    ) -> ToolResult:
        """List recent commits with author, date, subject and the files each changed (+/- lines).

        Use it to find what changed around the time an incident started (e.g. since="2 hours ago").

        Args:
            repo: a directory inside the repository's work tree.
            since: only commits after this date; anything git accepts ("2 hours ago", "2024-05-01T10:00").
            until: only commits before this date, same formats as since.
            path: only commits touching this file or directory (relative to the repository).
            limit: most commits to return (1-500), newest first.
        """
        args = [
            "log",
            "--no-color",
            "--numstat",
            f"--max-count={limit}",
            "--format=%x1e%H%x1f%h%x1f%an%x1f%ae%x1f%aI%x1f%cI%x1f%s",
        ]
        if since:
            args.append(f"--since={_git_date(since)}")
        if until:
            args.append(f"--until={_git_date(until)}")
        args.append("--")
        if path:
            args.append(path)
        try:
            repo_path = repo_dir(repo)
            out = _git(repo_path, *args)
            cuts = _shallow_cuts(repo_path)
        except (ToolError, PathAccessError) as exc:
            if "does not have any commits yet" in exc.message:
                return ToolResult.empty("the repository has no commits yet")
            return ToolResult.fail(exc.message, exc.hint)
        commits = []
        for record in out.split("\x1e")[1:]:
            header, _, rest = record.partition("\n")
            sha, short, name, email, authored, committed, subject = header.split("\x1f", 6)
            files, added, removed = _numstat(rest)
            cut = sha in cuts  # shown without its parent: the counts would be its whole tree
            commits.append(
                {
                    "sha": sha,
                    "short_sha": short,
                    "author": name,
                    "author_email": email,
                    "authored": authored,
                    "committed": committed,
                    "subject": subject,
                    "files": [] if cut else files[:MAX_FILES_PER_COMMIT],
                    "files_changed": None if cut else len(files),
                    "insertions": None if cut else added,
                    "deletions": None if cut else removed,
                    **({"shallow_boundary": True} if cut else {}),
                }
            )
        if not commits:
            return ToolResult.empty("no commits match these filters (since/until/path)")
        data: dict[str, Any] = {
            "commits": commits,
            "count": len(commits),
            "limit_reached": len(commits) == limit,
        }
        if any(c.get("shallow_boundary") for c in commits):
            data["note"] = (
                "shallow clone: history stops at the commits marked shallow_boundary (their file "
                f"changes are unknown here); {_SHALLOW.split(': ', 1)[1]}"
            )
        return ToolResult.ok(data, source="git log").with_evidence(commits_evidence(commits))

    @ts.tool(category="git", read_only=True)
    def git_diff(
        repo: str = ".",
        rev_range: str = "HEAD~1..HEAD",
        path: str | None = None,
        max_bytes: Annotated[int, Field(ge=1000, le=1_000_000)] = 100_000,
    ) -> ToolResult:
        """Show what changed between two revisions: per-file +/- counts and the patch text.

        Use it after git_log to read a suspicious change. "HEAD" alone compares the work tree with
        the last commit (uncommitted changes). A first commit (no parent) asked for as "X~1..X" or
        "X^!" is compared with the empty tree: everything in it counts as added.

        Args:
            repo: a directory inside the repository's work tree.
            rev_range: revisions to compare, e.g. "HEAD~1..HEAD", "v1.2..v1.3", "abc123^!" or "HEAD".
            path: only changes to this file or directory (relative to the repository).
            max_bytes: cut the patch text after this many bytes (1000-1000000); `truncated` says so.
        """
        tail = ["--", path] if path else ["--"]
        base = ["diff", "--no-color", "--no-ext-diff", "--no-textconv"]
        try:
            _check_rev(rev_range, "rev_range")
            repo_path = repo_dir(repo)
            root = _root_compare(repo_path, rev_range)
            revs = root or [rev_range]
            files, added, removed = _numstat(_git(repo_path, *base, "--numstat", *revs, *tail))
            if not files:
                return ToolResult.empty(f"no differences for {rev_range}" + (f" in {path}" if path else ""))
            patch, truncated = _git_head(repo_path, max_bytes, *base, "--patch", *revs, *tail)
        except (ToolError, PathAccessError) as exc:
            return ToolResult.fail(exc.message, exc.hint)
        data = {
            "rev_range": rev_range,
            "files": files,
            "files_changed": len(files),
            "insertions": added,
            "deletions": removed,
            "patch": patch.decode(errors="replace"),
            "truncated": truncated,
        }
        if root:
            data["note"] = f"{root[1]} is the first commit (no parent): compared with the empty tree"
        return ToolResult.ok(data, source="git diff")

    @ts.tool(category="git", read_only=True)
    def git_blame(repo: str, path: str, start_line: int, end_line: int) -> ToolResult:
        """Show who last changed each line of a file range, with the commit, date and line text.

        Use it to find the commit (and author) behind a suspicious config value or code line.

        Args:
            repo: a directory inside the repository's work tree.
            path: the file, relative to the repository.
            start_line: first line (1-based).
            end_line: last line (inclusive; at most 500 lines per call).
        """
        if start_line < 1 or end_line < start_line:
            return ToolResult.fail("need 1 <= start_line <= end_line", hint="e.g. start_line=10, end_line=40")
        end_line = min(end_line, start_line + 499)
        try:
            out = _git(repo_dir(repo), "blame", "--porcelain", "-L", f"{start_line},{end_line}", "--", path)
        except (ToolError, PathAccessError) as exc:
            return ToolResult.fail(exc.message, exc.hint)
        commits: dict[str, dict[str, str]] = {}
        lines: list[dict[str, Any]] = []
        sha = ""
        final_line = 0
        for line in out.splitlines():
            if line.startswith("\t"):
                meta = commits.get(sha, {})
                lines.append(
                    {
                        "line_no": final_line,
                        "sha": sha,
                        "short_sha": sha[:12],
                        "author": meta.get("author"),
                        "author_email": meta.get("author-mail", "").strip("<>") or None,
                        "date": _blame_date(meta),
                        "summary": meta.get("summary"),
                        "text": line[1:],
                    }
                )
                continue
            key, _, value = line.partition(" ")
            if len(key) in (40, 64) and all(c in "0123456789abcdef" for c in key):  # SHA-1, SHA-256
                sha = key
                final_line = int(value.split(" ")[1])
                commits.setdefault(sha, {})
            elif sha:
                commits[sha][key] = value
        if not lines:
            return ToolResult.empty(f"no lines in {path} between {start_line} and {end_line}")
        return ToolResult.ok({"path": path, "lines": lines}, source="git blame")

    return ts


def _blame_date(meta: dict[str, str]) -> str | None:
    """ISO date from porcelain ``author-time`` (epoch) and ``author-tz`` (``+0200``)."""
    if not meta.get("author-time", "").isdigit():
        return None
    tz = meta.get("author-tz", "+0000")
    sign = -1 if tz.startswith("-") else 1
    digits = tz.lstrip("+-").rjust(4, "0")
    offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4])) * sign
    return datetime.fromtimestamp(int(meta["author-time"]), timezone(offset)).isoformat()


def register(registry: ToolRegistry) -> None:
    """Entry point of the ``devops_agent.toolsets`` group."""
    registry.add_toolset(NAME, build, DESCRIPTION)
