"""Domain knowledge for commands that change files and disks (``rm``, ``mv``, ``chmod``, ``dd``, ``sed -i``).

Deleting a file with ``rm`` is ``destructive`` even for one plain file: there is no trash can on
a server, so the data is unrecoverable. Writes onto system paths (``/etc``, ``/boot``, ``/usr`` …)
are destructive too: they can leave the host unbootable. Must not touch the filesystem.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from devops_agent.safety.commands.base import (
    Recurse,
    Verdict,
    destr,
    has_flag,
    is_system_path,
    mut,
    positionals,
    ro,
    unk,
    worst,
    write_target_verdict,
)


def rm(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``rm``/``rmdir``/``unlink``: always destructive (no undo); recursive or system paths called out."""
    args = argv[1:]
    targets = positionals(args)
    if has_flag(args, "--help", "--version"):
        return ro(f"{argv[0]} --help", "rm.help")
    if any(is_system_path(t) for t in targets) or "--no-preserve-root" in args:
        return destr(f"{argv[0]}: deletes system paths", "rm.system")
    if has_flag(args, "-r", "-R", "--recursive"):
        return destr(f"{argv[0]} -r: deletes directory trees permanently", "rm.recursive")
    return destr(f"{argv[0]}: deletes files permanently (no trash, no undo)", "rm.file")


def mv_cp(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``mv``/``cp``/``install``/``ln``/``rsync``/``scp``: mutating; onto/out of system paths destructive."""
    name = argv[0]
    args = argv[1:]
    pos = positionals(
        args,
        (
            "-t",
            "--target-directory",
            "-S",
            "--suffix",
            "-m",
            "--mode",
            "-o",
            "-g",
            "-e",
            "--exclude",
            "-P",
            "-i",
            "-F",
            "-J",
            "-l",
        ),
    )
    target = pos[-1] if pos else ""
    target_dir = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-t", "--target-directory")), "")
    dests = [d for d in (target, target_dir) if d]
    if any(is_system_path(d) for d in dests):
        return destr(f"{name}: overwrites files under system path {dests[0]}", "files.system_write")
    if name == "mv" and any(is_system_path(p) for p in pos[:-1]):
        return destr("mv: moves system files away", "files.system_write")
    if name == "rsync" and has_flag(
        args, "--delete", "--delete-after", "--delete-before", "--remove-source-files"
    ):
        return destr("rsync --delete: deletes destination files missing at the source", "files.rsync_delete")
    if name == "scp" and target and ":" not in target:
        return mut(f"scp: writes local file {target}", "files.write")
    return mut(f"{name}: creates or overwrites {target or 'files'}", "files.write")


def chmod_chown(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``chmod``/``chown``/``chgrp``/``setfacl``/``chattr``: recursive or on system paths destructive."""
    name = argv[0]
    args = argv[1:]
    pos = positionals(args, ("--reference",))
    targets = pos[1:] if name != "setfacl" else pos
    if any(is_system_path(t) for t in targets):
        return destr(f"{name}: changes permissions of system paths", "files.perm_system")
    if has_flag(args, "-R", "--recursive"):
        return destr(f"{name} -R: changes permissions of a whole tree (hard to undo)", "files.perm_recursive")
    return mut(f"{name}: changes file permissions or ownership", "files.perm")


def create(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``mkdir``/``touch``/``ln``/``mktemp``: create files; on system paths destructive."""
    pos = positionals(argv[1:], ("-m", "--mode", "-t", "-p", "--tmpdir", "-d"))
    if argv[0] == "mktemp":
        return mut("mktemp: creates a temporary file", "files.write")
    if any(is_system_path(p) for p in pos):
        return destr(f"{argv[0]}: writes under a system path", "files.system_write")
    return mut(f"{argv[0]}: creates files or directories", "files.write")


def tee(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``tee FILE``: writes its input to files."""
    files = positionals(argv[1:])
    if not files:
        return ro("tee with no file: copies stdin to stdout", "files.tee")
    verdicts = [write_target_verdict(f, "tee", "files.write") for f in files]
    return worst(verdicts) or ro("tee", "files.tee")


def truncate(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``truncate``: cuts files, losing their contents."""
    return destr("truncate: discards file contents", "files.truncate")


def dd(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``dd``: reading to stdout is harmless; ``of=`` a device is destructive, a file mutating."""
    out = next((a[3:] for a in argv[1:] if a.startswith("of=")), None)
    if out is None:
        return ro("dd without of=: copies to stdout", "dd.read")
    return write_target_verdict(out, "dd of=", "dd.write")


def disk(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Partitioning, formatting and wiping tools; list-only forms (``fdisk -l``, ``parted -l``) read."""
    name = argv[0]
    args = argv[1:]
    if name in ("fdisk", "sfdisk", "parted", "gdisk", "sgdisk") and has_flag(args, "-l", "--list", "-p"):
        return ro(f"{name} -l: lists partitions", "disk.read")
    if name == "parted" and ("print" in args or "--list" in args):
        return ro("parted print: lists partitions", "disk.read")
    if name == "wipefs" and not has_flag(args, "-a", "--all", "-o", "--offset"):
        return ro("wipefs without -a: lists signatures", "disk.read")
    return destr(f"{name}: formats, repartitions or wipes disks", "disk.wipe")


def sed(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``sed`` is read-only unless it edits in place (``-i``, also inside ``-ni``/``-Ei``), its script
    writes or runs commands (``w``/``W``/``e`` commands, ``s///w``/``s///e`` flags), or the script
    comes from a file (``-f``) this classifier cannot see."""
    args = argv[1:]
    if _sed_in_place(args):
        files = positionals(args, ("-e", "-f", "--expression", "--file", "-l", "--line-length"))[1:]
        if any(is_system_path(f) for f in files):
            return destr("sed -i: edits system files in place", "files.system_write")
        return mut("sed -i: edits files in place", "files.sed_inplace")
    if _sed_short_flag(args, "f", "--file"):
        return unk("sed -f: runs a script file this classifier cannot see", "files.sed")
    scripts = _sed_scripts(args)
    joined = " ".join(scripts)
    if any(_SED_RUNS.search(sc) or _sed_s_flags_run(sc) for sc in scripts) or any(
        cmd in joined for cmd in ("w ", "W ", "/w ", "e ")
    ):
        return unk("sed script with a w/e command: may write files or run commands", "files.sed")
    return ro("sed: filters text to stdout", "files.read")


# A w/W/e command after an optional address (``5e CMD``, ``/x/w FILE``, ``$!e``).
_SED_ADDR = r"(?:\d+|\$|/(?:[^/\\]|\\.)*/)"
_SED_RUNS = re.compile(rf"(?:^|[;{{}}\n])\s*(?:{_SED_ADDR}(?:\s*,\s*{_SED_ADDR})?)?\s*!?\s*[ewW]")
_SED_S = re.compile(r"s(.)((?:(?!\1)[^\\]|\\.)*)\1((?:(?!\1)[^\\]|\\.)*)\1([a-zA-Z0-9]*)")


def _sed_s_flags_run(script: str) -> bool:
    """Whether an ``s`` command of ``script`` carries the ``e`` (execute) or ``w`` (write) flag."""
    return any(set(m.group(4)) & {"e", "w"} for m in _SED_S.finditer(script))


def _sed_in_place(args: Sequence[str]) -> bool:
    """``-i``/``--in-place`` alone or inside a bundle of short options (``-ni``, ``-Ei.bak``)."""
    return _sed_short_flag(args, "i", "--in-place")


def _sed_short_flag(args: Sequence[str], letter: str, long: str) -> bool:
    """Whether ``-LETTER`` (also inside a bundle such as ``-nLETTER``) or ``--long[=…]`` is given."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return False
        if a == long or a.startswith(long + "="):
            return True
        if a in ("-e", "--expression", "-l", "--line-length"):
            i += 2
            continue
        if a.startswith("-") and not a.startswith("--"):
            for ch in a[1:]:
                if ch == letter:
                    return True
                if ch in "efl":  # these take a value: the rest of the word is that value
                    break
        i += 1
    return False


def _sed_scripts(args: Sequence[str]) -> list[str]:
    """The script texts: every ``-e``/``--expression`` value, else the first operand."""
    scripts: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1])
            i += 2
            continue
        if a.startswith("--expression="):
            scripts.append(a[len("--expression=") :])
        elif a.startswith("-") and not a.startswith("--") and "e" in a[1:]:
            head, _, value = a[1:].partition("e")
            if value and "l" not in head:
                scripts.append(value)
            elif i + 1 < len(args) and "l" not in head:
                scripts.append(args[i + 1])
                i += 1
        i += 1
    if not scripts:
        operands = positionals(args, ("-l", "--line-length"))
        scripts = operands[:1]
    return scripts


_AWK_RUNS = re.compile(r"\bsystem\s*\(|\|\s*&|\|\s*getline|\bprintf?\b[^;{}\n]*(?<!\|)\|(?!\|)")
_AWK_WRITES = re.compile(r"\bprintf?\b[^;{}\n]*>")


def awk(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``awk`` is read-only unless its program calls ``system()``, pipes, prints to a file, or comes
    from a file (``-f``) this classifier cannot see."""
    args = list(argv[1:])
    if any(a in ("-f", "--file", "-E", "--exec") or a.startswith(("--file=", "--exec=")) for a in args):
        return unk(f"{argv[0]} -f: runs a program file this classifier cannot see", "files.awk")
    program = " ".join(a for a in args if not a.startswith("-"))
    if _AWK_RUNS.search(program) or '|"' in program or '| "' in program:
        return unk(f"{argv[0]} program runs commands (system() or pipes)", "files.awk")
    if any(a in ("-iinplace", "--include=inplace") for a in args) or ("-i" in args and "inplace" in args):
        return mut(f"{argv[0]} -i inplace: edits files in place", "files.sed_inplace")
    if _AWK_WRITES.search(program) or '> "' in program or '>"' in program or ">> " in program:
        return mut(f"{argv[0]} program writes to files", "files.awk")
    return ro(f"{argv[0]}: filters text to stdout", "files.read")


def find(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``find`` reads, unless it deletes (``-delete``), runs commands (``-exec``) or writes (``-fprint``).

    Every action counts: ``find . -exec true \\; -exec rm {} \\;`` runs ``rm`` too.
    """
    args = list(argv[1:])
    if "-delete" in args:
        return destr("find -delete: deletes every matching file", "rm.recursive")
    verdicts: list[Verdict] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-exec", "-execdir", "-ok", "-okdir"):
            inner: list[str] = []
            for b in args[i + 1 :]:
                i += 1
                if b in (";", "+", "\\;"):
                    break
                inner.append(b)
            inner = [x for x in inner if x != "{}"] or ["true"]
            v = recurse(shlex.join(inner))
            verdicts.append(Verdict(v.level, f"find {a} {inner[0]}: {v.reason}", v.key))
        elif a.startswith("-fprint") or a == "-fls":
            verdicts.append(mut(f"find {a}: writes its output to a file", "files.write"))
        i += 1
    return worst(verdicts) or ro("find: lists files", "files.read")


def archive(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``tar``/``unzip``/``gzip``…: listing reads; extracting or compressing writes files."""
    name = argv[0]
    args = argv[1:]
    if name == "tar":
        mode = args[0] if args else ""
        if has_flag(args, "-t", "--list") or (mode and not mode.startswith("-") and "t" in mode):
            return ro("tar -t: lists an archive", "files.read")
        target = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-C", "--directory")), "")
        if target and is_system_path(target):
            return destr(f"tar: extracts over system path {target}", "files.system_write")
        return mut("tar: creates or extracts an archive", "files.write")
    if name in ("unzip", "zipinfo") and (has_flag(args, "-l", "-v", "-t", "-Z") or name == "zipinfo"):
        return ro(f"{name} -l: lists an archive", "files.read")
    if name in ("gzip", "gunzip", "bzip2", "xz", "zstd") and has_flag(args, "-c", "-l", "-t", "--stdout"):
        return ro(f"{name} -c: writes to stdout", "files.read")
    if name in ("zcat", "bzcat", "xzcat", "zless", "zgrep"):
        return ro(f"{name}: reads compressed text", "files.read")
    return mut(f"{name}: creates, extracts or replaces files", "files.write")


def editor(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Interactive editors cannot be judged from their argv."""
    return unk(f"{argv[0]}: interactive editor", "files.editor")
