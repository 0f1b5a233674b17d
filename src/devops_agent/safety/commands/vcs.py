"""Domain knowledge for ``git``: reads, local changes, and history-destroying operations.

Must not run anything or parse shell syntax; it sees one argv whose ``argv[0]`` is the program.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import (
    Recurse,
    Verdict,
    destr,
    flag_value,
    has_flag,
    mut,
    positionals,
    ro,
    unk,
    worst,
    write_target_verdict,
)

_GLOBAL_VALUED = ("-C", "-c", "--git-dir", "--work-tree", "--namespace")
_READ = {
    "log",
    "diff",
    "show",
    "status",
    "blame",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "ls-remote",
    "shortlog",
    "describe",
    "grep",
    "cat-file",
    "rev-list",
    "reflog",
    "whatchanged",
    "show-ref",
    "for-each-ref",
    "name-rev",
    "merge-base",
    "cherry",
    "count-objects",
    "fsck",
    "help",
    "version",
    "var",
    "check-ignore",
    "annotate",
    "difftool",
    "range-diff",
    "verify-commit",
    "verify-tag",
}
_MUTATE = {
    "commit",
    "checkout",
    "switch",
    "merge",
    "pull",
    "fetch",
    "add",
    "rm",
    "mv",
    "restore",
    "rebase",
    "cherry-pick",
    "revert",
    "init",
    "clone",
    "am",
    "apply",
    "submodule",
    "worktree",
    "gc",
    "notes",
    "bisect",
    "sparse-checkout",
    "mergetool",
    "format-patch",
    "archive",
    "prune",
}


def _subcommand(args: Sequence[str]) -> tuple[str, list[str]]:
    i = 0
    while i < len(args):
        a = args[i]
        if a in _GLOBAL_VALUED:
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        return a, list(args[i + 1 :])
    return "", []


# ``git -c KEY=VALUE`` keys that only change how output looks; any other key may name a program
# git runs (core.pager, core.fsmonitor, core.sshCommand, diff.external, alias.*, *.textconv …).
_SAFE_CONFIG_PREFIXES = (
    "color.",
    "core.quotepath",
    "core.abbrev",
    "safe.directory",
    "log.",
    "i18n.",
    "column.",
    "advice.",
    "user.name",
    "user.email",
    "diff.renames",
    "diff.algorithm",
    "blame.date",
)


def _global_risk(args: Sequence[str]) -> Verdict | None:
    """Global options that make even a reading subcommand run a program or write: ``-c KEY=…``
    with a key that can name a command, ``--config-env``, ``--exec-path=DIR``."""
    for i, a in enumerate(args):
        if not a.startswith("-"):
            return None
        if a == "-c" and i + 1 < len(args):
            key = args[i + 1].split("=", 1)[0].lower()
            if not key.startswith(_SAFE_CONFIG_PREFIXES):
                return unk(f"git -c {key}: configuration that can make git run a program", "git")
        if a.startswith(("--config-env", "--exec-path=")):
            return unk(f"git {a.split('=', 1)[0]}: can make git run another program", "git")
    return None


def _read_risk(sub: str, rest: Sequence[str]) -> Verdict | None:
    """Flags that turn a reading subcommand into a writer or a command runner."""
    out = flag_value(rest, "--output")
    if out is not None:
        return write_target_verdict(out, f"git {sub} --output", "files.write")
    if sub == "grep" and (
        has_flag(rest, "-O") or any(a.startswith(("-O", "--open-files-in-pager")) for a in rest)
    ):
        return unk("git grep -O: opens the files with a program", "git")
    if sub == "difftool" and (
        has_flag(rest, "-x", "--extcmd", "-t", "--tool") or any(a.startswith(("-x", "-t")) for a in rest)
    ):
        return unk("git difftool -x/-t: runs an external program", "git")
    return None


def git(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Classify ``git`` by subcommand and the flags that make it destroy history or work; global
    options that can make git run a program (``-c core.pager=…``) make it at least ``unknown``."""
    v = _subcommand_verdict(argv)
    risk = _global_risk(argv[1:])
    if risk is None:
        return v
    return worst([v, risk]) or v


def _subcommand_verdict(argv: Sequence[str]) -> Verdict:
    sub, rest = _subcommand(argv[1:])
    if not sub:
        return ro("git with no subcommand prints help", "git.help")
    if sub == "push":
        if has_flag(
            rest, "--force", "-f", "--force-with-lease", "--mirror", "--delete", "-d", "--prune"
        ) or any(p.startswith("+") or p.startswith(":") for p in positionals(rest)):
            return destr("git push --force/--delete: rewrites or deletes remote history", "git.push_force")
        return mut("git push: publishes commits to the remote", "git.push")
    if sub == "reset":
        if has_flag(rest, "--hard", "--merge", "--keep"):
            return destr("git reset --hard: discards uncommitted work and moves the branch", "git.reset_hard")
        return mut("git reset: moves the branch or unstages changes", "git.reset")
    if sub == "clean":
        if has_flag(rest, "-n", "--dry-run"):
            return ro("git clean --dry-run: lists what would be removed", "git.clean")
        return destr("git clean: deletes untracked files permanently", "git.clean")
    if sub == "branch":
        if has_flag(rest, "-D") or (has_flag(rest, "-d", "--delete") and has_flag(rest, "-f", "--force")):
            return destr("git branch -D: deletes a branch even if unmerged", "git.branch_delete")
        if has_flag(
            rest,
            "-d",
            "--delete",
            "-m",
            "-M",
            "--move",
            "-c",
            "-C",
            "--copy",
            "-u",
            "--set-upstream-to",
            "--unset-upstream",
            "--edit-description",
        ):
            return mut("git branch: changes branches", "git.branch")
        if positionals(rest, ("--sort", "--format", "--contains", "--merged", "--no-merged", "--points-at")):
            return mut("git branch NAME: creates a branch", "git.branch")
        return ro("git branch: lists branches", "git.branch_list")
    if sub in ("remote", "tag", "stash", "config"):
        return _list_or_change(sub, rest)
    if sub in ("filter-branch", "filter-repo", "replace"):
        return destr(f"git {sub}: rewrites repository history", "git.filter_branch")
    if sub == "checkout" and (has_flag(rest, "-f", "--force") or "--" in rest or "." in rest):
        return destr("git checkout -- PATH/--force: discards uncommitted changes", "git.checkout_discard")
    if sub in _READ:
        if (read_risk := _read_risk(sub, rest)) is not None:
            return read_risk
        return ro(f"git {sub}: reads the repository", "git.read")
    if sub in _MUTATE:
        return mut(f"git {sub}: changes the repository or working tree", "git.mutate")
    return unk(f"git {sub}: not a subcommand this classifier knows", "git")


def _list_or_change(sub: str, rest: list[str]) -> Verdict:
    pos = positionals(rest)
    if sub == "remote":
        if not pos or pos[0] in ("show", "get-url"):
            return ro("git remote: lists remotes", "git.read")
        return mut(f"git remote {pos[0]}: changes remotes", "git.mutate")
    if sub == "tag":
        if has_flag(rest, "-d", "--delete"):
            return mut("git tag -d: deletes a local tag", "git.mutate")
        if not pos or has_flag(rest, "-l", "--list", "-n", "--contains", "--points-at"):
            return ro("git tag: lists tags", "git.read")
        return mut("git tag NAME: creates a tag", "git.mutate")
    if sub == "stash":
        if pos and pos[0] in ("list", "show"):
            return ro(f"git stash {pos[0]}: reads stashes", "git.read")
        if pos and pos[0] in ("drop", "clear"):
            return destr(f"git stash {pos[0]}: discards stashed work", "git.stash_drop")
        return mut("git stash: saves or applies work in progress", "git.mutate")
    # config
    if has_flag(rest, "-l", "--list", "--get", "--get-all", "--get-regexp") or len(pos) <= 1:
        return ro("git config: reads configuration", "git.read")
    return mut("git config: changes configuration", "git.mutate")
