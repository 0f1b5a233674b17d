"""Domain knowledge for ``git``: reads, local changes, and history-destroying operations.

git's own options come first (``-C DIR``, ``-c KEY=VALUE`` — any number of them —,
``--git-dir``, ``--exec-path=DIR`` …); a ``-c`` key that can name a program (``core.pager``,
``core.fsmonitor``, ``diff.external``, ``alias.*`` …) makes even ``git status`` run it, so only
keys that change output are read-only. Subcommands use git's parse-options, which accepts any
unique prefix of a long option (``--upl`` is ``--upload-pack``, ``--rem`` ``--remove-section``):
options that run a program, write a file or change configuration are matched by prefix.
Must not run anything or parse shell syntax.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import (
    Recurse,
    Verdict,
    destr,
    has_flag,
    is_dynamic,
    mut,
    positionals,
    ro,
    shell_join,
    unk,
    worst,
    write_target_verdict,
)

# git.c handle_options: exact names; those listed with a value take the next word unless "=…".
_GLOBAL_VALUED = ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env")
_GLOBAL_FLAGS = (
    "-p",
    "--paginate",
    "-P",
    "--no-pager",
    "--bare",
    "--no-replace-objects",
    "--no-lazy-fetch",
    "--no-optional-locks",
    "--no-advice",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--html-path",
    "--man-path",
    "--info-path",
    "-v",
    "--version",
    "-h",
    "--help",
    "--exec-path",
)

_READ = frozenset(
    {
        "log", "diff", "show", "status", "blame", "annotate", "rev-parse", "ls-files", "ls-tree",
        "ls-remote", "shortlog", "describe", "grep", "cat-file", "rev-list", "whatchanged",
        "show-ref", "for-each-ref", "name-rev", "merge-base", "cherry", "count-objects", "fsck",
        "help", "version", "var", "check-ignore", "check-attr", "check-mailmap", "check-ref-format",
        "range-diff", "verify-commit", "verify-tag", "show-branch", "diff-tree", "diff-files",
        "diff-index", "verify-pack", "get-tar-commit-id", "column", "request-pull", "merge-tree",
        "archive", "hash-object", "show-index", "cherry-pick --abort",
    }
)  # fmt: skip
_MUTATE = frozenset(
    {
        "commit", "checkout", "switch", "merge", "pull", "fetch", "add", "rm", "mv", "restore",
        "rebase", "cherry-pick", "revert", "init", "clone", "am", "apply", "gc", "sparse-checkout",
        "mergetool", "format-patch", "prune", "repack", "maintenance", "update-index", "update-ref",
        "write-tree", "commit-tree", "mktag", "mktree", "pack-refs", "rerere", "notes", "worktree",
        "submodule", "bisect", "symbolic-ref", "bundle", "stage", "unstage", "lfs", "instaweb",
    }
)  # fmt: skip

# Subcommands of list-or-change commands that only read.
_SUB_READS: dict[str, frozenset[str]] = {
    "worktree": frozenset({"list"}),
    "notes": frozenset({"list", "show", "get-ref"}),
    "bisect": frozenset({"log", "view", "visualize", "terms", "help"}),
    "submodule": frozenset({"status", "summary"}),
    "sparse-checkout": frozenset({"list"}),
    "bundle": frozenset({"list-heads", "verify"}),
    "remote": frozenset({"show", "get-url", "-v", "--verbose"}),
    "stash": frozenset({"list", "show"}),
    "reflog": frozenset({"show", "exists", "list"}),
    "lfs": frozenset({"ls-files", "status", "env", "version", "track", "logs"}),
}

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
    "diff.noprefix",
    "diff.mnemonicprefix",
    "diff.relative",
    "diff.context",
    "blame.date",
    "blame.coloring",
    "grep.linenumber",
    "grep.extendedregexp",
    "grep.patterntype",
    "format.pretty",
    "status.short",
    "status.branch",
    "status.showuntrackedfiles",
    "init.defaultbranch",
    "protocol.version",
    "core.longpaths",
    "core.ignorecase",
    "core.precomposeunicode",
)

# Long options (matched by unique prefix, as parse-options does) that run a program or write.
_EXEC_OPTIONS: dict[str, tuple[str, ...]] = {
    "ls-remote": ("upload-pack", "exec"),
    "fetch": ("upload-pack",),
    "pull": ("upload-pack",),
    "clone": ("upload-pack", "template"),
    "push": ("receive-pack", "exec"),
    "archive": ("exec",),
    "grep": ("open-files-in-pager", "ext-grep"),
    "cat-file": ("textconv", "filters"),
}
_DIFF_LIKE = frozenset(
    {"diff", "log", "show", "whatchanged", "diff-tree", "diff-files", "diff-index", "range-diff", "stash"}
)


def _is_prefix(word: str, names: Sequence[str]) -> str | None:
    """The option of ``names`` that ``--word`` abbreviates or names (``=value`` ignored)."""
    if not word.startswith("--") or len(word) < 3:
        return None
    body = word[2:].split("=", 1)[0]
    return next((n for n in names if n.startswith(body)), None)


def _global_options(args: Sequence[str]) -> tuple[list[Verdict], int]:
    """Risks among git's own options, and the index of the subcommand."""
    risks: list[Verdict] = []
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("-") or a == "-":
            break
        name, eq, value = a.partition("=")
        if a.startswith("-c") and a != "-c":  # -ckey=value
            name, eq, value = "-c", "=", a[2:]
        if name in _GLOBAL_VALUED:
            if not eq:
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            if name == "-c":
                risks.extend(_config_key(value))
            elif name == "--config-env":
                risks.append(unk("git --config-env: sets configuration from the environment", "git"))
        elif name == "--exec-path" and eq:
            risks.append(unk("git --exec-path=DIR: runs git's helper programs from another directory", "git"))
        elif name not in _GLOBAL_FLAGS:
            risks.append(unk(f"git {a}: an option of git this classifier does not know", "git"))
        i += 1
    return risks, i


def _config_key(setting: str) -> list[Verdict]:
    if is_dynamic(setting):
        return [unk("git -c from an expansion: may name a program git runs", "git")]
    key, _, value = setting.partition("=")
    k = key.lower()
    if k.startswith(_SAFE_CONFIG_PREFIXES):
        return []
    if k.startswith("pager.") and value.lower() in ("", "true", "false", "0", "1", "yes", "no"):
        return []
    return [unk(f"git -c {key}: configuration that can make git run a program", "git")]


def git(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Classify ``git`` by subcommand and the flags that make it destroy history, write files or
    run programs; git's own options that can make it run a program make it at least ``unknown``."""
    risks, index = _global_options(list(argv[1:]))
    rest = list(argv[1 + index :])
    if not rest:
        v = ro("git with no subcommand prints help", "git.help")
    else:
        v = _subcommand(rest[0], rest[1:], recurse)
    return worst([v, *risks]) or v


def _option_risks(sub: str, rest: Sequence[str]) -> list[Verdict]:
    out: list[Verdict] = []
    for a in rest:
        if a == "--":
            break
        if is_dynamic(a) and a.startswith("-") and "=" not in a:
            out.append(unk(f"git {sub}: an option built at run time ({getattr(a, 'raw', a)})", "git"))
            continue
        if sub in _DIFF_LIKE or sub == "cat-file":
            if (hit := _is_prefix(a, ("output",))) and a.split("=", 1)[0] != "--output-indicator":
                target = a.split("=", 1)[1] if "=" in a else ""
                if target:
                    out.append(write_target_verdict(target, f"git {sub} --output", "files.write"))
                else:
                    out.append(mut(f"git {sub} --{hit}: writes a file", "files.write"))
            if (hit := _is_prefix(a, ("ext-diff", "textconv"))) and a not in ("--text",):
                out.append(unk(f"git {sub} --{hit}: runs an external diff or text-conversion program", "git"))
        names = _EXEC_OPTIONS.get(sub, ())
        if names and (hit := _is_prefix(a, names)):
            out.append(unk(f"git {sub} --{hit}: runs a program of the caller's choice", "git"))
        if sub == "grep" and a.startswith("-O"):
            out.append(unk("git grep -O: opens the files with a program", "git"))
        if sub == "ls-remote" and a.startswith("-u"):
            out.append(unk("git ls-remote -u: runs an upload-pack program of the caller's choice", "git"))
        if sub == "archive" and (a.startswith("-o") or _is_prefix(a, ("output", "remote"))):
            out.append(mut("git archive -o/--remote: writes a file or asks a remote", "files.write"))
        if sub == "fsck" and _is_prefix(a, ("lost-found",)):
            out.append(
                mut("git fsck --lost-found: writes dangling objects into .git/lost-found", "git.mutate")
            )
    for i, a in enumerate(rest[:-1]):
        if sub in _DIFF_LIKE and a == "--output":
            out.append(write_target_verdict(rest[i + 1], f"git {sub} --output", "files.write"))
    return out


def _subcommand(sub: str, rest: list[str], recurse: Recurse) -> Verdict:
    if is_dynamic(sub):
        return unk("git subcommand from an expansion", "git")
    risks = _option_risks(sub, rest)
    v = _subcommand_level(sub, rest, recurse)
    return worst([v, *risks]) or v


def _subcommand_level(sub: str, rest: list[str], recurse: Recurse) -> Verdict:
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
        return _branch(rest)
    if sub == "tag":
        return _tag(rest)
    if sub == "config":
        return _config(rest)
    if sub in ("filter-branch", "filter-repo", "replace"):
        return destr(f"git {sub}: rewrites repository history", "git.filter_branch")
    if sub == "checkout" and (has_flag(rest, "-f", "--force") or "--" in rest or "." in rest):
        return destr("git checkout -- PATH/--force: discards uncommitted changes", "git.checkout_discard")
    if sub == "stash":
        pos = positionals(rest)
        if pos and pos[0] in ("drop", "clear"):
            return destr(f"git stash {pos[0]}: discards stashed work", "git.stash_drop")
    if sub == "difftool":
        return unk("git difftool: runs an external diff program", "git")
    if sub == "submodule" and "foreach" in rest:
        inner = rest[rest.index("foreach") + 1 :]
        inner = [a for a in inner if a not in ("--recursive", "--quiet", "-q")]
        v = recurse(shell_join(inner)) if inner else ro("nothing", "readonly")
        return Verdict(v.level, f"git submodule foreach → {v.reason}", v.key)
    if sub == "bisect" and "run" in rest:
        return unk("git bisect run: runs a program on every step", "git")
    if sub in _SUB_READS:
        pos = [p for p in rest if not p.startswith("-") or p in ("-v", "--verbose")]
        action = pos[0] if pos else ""
        if (not action and sub in ("remote", "notes", "reflog")) or (action in _SUB_READS[sub]):
            return ro(f"git {sub} {action or ''}".rstrip() + ": reads the repository", "git.read")
        if sub == "reflog" and action not in ("expire", "delete"):
            return ro("git reflog: shows the reflog", "git.read")
        if sub == "stash" and action not in ("push", "save", "pop", "apply", "branch", "create", "store", ""):
            return unk(f"git stash {action}: not an action this classifier knows", "git")
        return mut(f"git {sub} {action}".rstrip() + ": changes the repository or working tree", "git.mutate")
    if sub in _READ:
        return ro(f"git {sub}: reads the repository", "git.read")
    if sub in _MUTATE:
        return mut(f"git {sub}: changes the repository or working tree", "git.mutate")
    return unk(f"git {sub}: not a subcommand this classifier knows (it may be an alias)", "git")


_BRANCH_WRITES = (
    "delete",
    "move",
    "copy",
    "set-upstream-to",
    "unset-upstream",
    "edit-description",
    "force",
    "track",
    "create-reflog",
)
_BRANCH_LIST = (
    "list",
    "all",
    "remotes",
    "contains",
    "no-contains",
    "merged",
    "no-merged",
    "points-at",
    "show-current",
)


def _branch(rest: list[str]) -> Verdict:
    longs = [a for a in rest if a.startswith("--") and a != "--"]
    shorts = "".join(a[1:] for a in rest if a.startswith("-") and not a.startswith("--"))
    if "D" in shorts or ("d" in shorts and ("f" in shorts or any(_is_prefix(a, ("force",)) for a in longs))):
        return destr("git branch -D: deletes a branch even if unmerged", "git.branch_delete")
    if set(shorts) & set("dmMcCu") or any(
        _is_prefix(a, _BRANCH_WRITES) and not _is_prefix(a, _BRANCH_LIST) for a in longs
    ):
        return mut("git branch: changes branches", "git.branch")
    listing = (
        "l" in shorts or "a" in shorts or "r" in shorts or any(_is_prefix(a, _BRANCH_LIST) for a in longs)
    )
    pos = positionals(
        rest, ("--sort", "--format", "--contains", "--merged", "--no-merged", "--points-at", "--column")
    )
    if pos and not listing:
        return mut("git branch NAME: creates a branch", "git.branch")
    return ro("git branch: lists branches", "git.branch_list")


def _tag(rest: list[str]) -> Verdict:
    shorts = "".join(a[1:] for a in rest if a.startswith("-") and not a.startswith("--"))
    longs = [a for a in rest if a.startswith("--") and a != "--"]
    if "d" in shorts or any(_is_prefix(a, ("delete",)) for a in longs):
        return mut("git tag -d: deletes a local tag", "git.mutate")
    listing = bool(set(shorts) & set("ln")) or any(
        _is_prefix(
            a, ("list", "contains", "no-contains", "points-at", "merged", "no-merged", "sort", "format")
        )
        for a in longs
    )
    pos = positionals(rest, ("--sort", "--format", "--contains", "--points-at", "-m", "-F", "-u"))
    if not pos or listing:
        return ro("git tag: lists tags", "git.read")
    return mut("git tag NAME: creates a tag", "git.mutate")


_CONFIG_WRITES = (
    "add",
    "replace-all",
    "unset",
    "unset-all",
    "rename-section",
    "remove-section",
    "edit",
    "comment",
)
_CONFIG_READS = ("get", "get-all", "get-regexp", "get-urlmatch", "get-color", "get-colorbool", "list")
_CONFIG_VALUED = ("-f", "--file", "--blob", "--type", "--default", "--value", "--url", "--comment")


def _config(rest: list[str]) -> Verdict:
    longs = [a for a in rest if a.startswith("--") and a != "--"]
    for a in longs:
        body = a[2:].split("=", 1)[0]
        writes = [n for n in _CONFIG_WRITES if n.startswith(body)]
        exact_read = body in _CONFIG_READS
        if writes and not exact_read:
            if writes == ["edit"]:
                return unk("git config --edit: opens an editor", "git")
            return mut(f"git config --{writes[0]}: changes configuration", "git.mutate")
    if any(a in ("-e",) for a in rest):
        return unk("git config -e: opens an editor", "git")
    if "-l" in rest or any(_is_prefix(a, _CONFIG_READS) for a in longs):
        return ro("git config: reads configuration", "git.read")
    pos = positionals(rest, _CONFIG_VALUED)
    if pos and pos[0] in ("list", "get"):
        return ro(f"git config {pos[0]}: reads configuration", "git.read")
    if pos and pos[0] in ("set", "unset", "rename-section", "remove-section"):
        return mut(f"git config {pos[0]}: changes configuration", "git.mutate")
    if pos and pos[0] == "edit":
        return unk("git config edit: opens an editor", "git")
    if len(pos) <= 1:
        return ro("git config NAME: reads configuration", "git.read")
    return mut("git config NAME VALUE: changes configuration", "git.mutate")
