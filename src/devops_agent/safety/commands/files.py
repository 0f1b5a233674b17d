"""Domain knowledge for commands that change files and disks (``rm``, ``mv``, ``chmod``, ``dd``, ``sed -i``).

Deleting a file with ``rm`` is ``destructive`` even for one plain file: there is no trash can on
a server, so the data is unrecoverable. Writes onto system paths (``/etc``, ``/boot``, ``/usr`` …)
are destructive too: they can leave the host unbootable. Must not touch the filesystem.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import (
    Arg,
    Recurse,
    Verdict,
    destr,
    has_flag,
    is_harmless_sink,
    is_system_path,
    mut,
    positionals,
    ro,
    shell_join,
    unk,
    worst,
    write_target_verdict,
)
from devops_agent.safety.commands.options import Spec, parse


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
    if (
        name == "rsync"
        and has_flag(args, "-n", "--dry-run")
        and not any(
            a.startswith(("--log-file", "--write-batch", "--only-write-batch", "--rsync-path", "-e", "--rsh"))
            and not a.startswith("--exclude")
            for a in args
        )
    ):
        return ro("rsync --dry-run: lists what would be copied", "files.read")
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


def _found_path(word: str) -> Arg:
    text = word.replace("{}", "${FIND_PATH}")
    return Arg(text, '"' + text + '"', dynamic=True)


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
            # find substitutes each path for {} (inside other words too): a path is data the
            # classifier cannot see, so `sh -c 'echo {}'` runs code built from file names.
            words = [_found_path(x) if "{}" in x else x for x in inner] or ["true"]
            v = recurse(shell_join(words))
            verdicts.append(Verdict(v.level, f"find {a} {inner[0]}: {v.reason}", v.key))
        elif a.startswith("-fprint") or a == "-fls":
            verdicts.append(mut(f"find {a}: writes its output to a file", "files.write"))
        i += 1
    return worst(verdicts) or ro("find: lists files", "files.read")


TAR = Spec(
    "Ab:BcC:dF:f:g:GhH:iI:jJkK:lL:mMnN:OpPrRsStT:uUvV:wWxX:zZ",
    "absolute-names|P acls add-file= after-date=|N anchored append|r atime-preserve? "
    "auto-compress|a backup? block-number|R blocking-factor=|b bzip2|j catenate|A check-device "
    "check-links|l checkpoint? checkpoint-action= clamp-mtime compare|d compress|Z concatenate|A "
    "confirmation|w create|c delay-directory-restore delete dereference|h diff|d directory=|C "
    "exclude= exclude-backups exclude-caches exclude-caches-all exclude-caches-under "
    "exclude-from=|X exclude-ignore= exclude-ignore-recursive= exclude-tag= exclude-tag-all= "
    "exclude-tag-under= exclude-vcs exclude-vcs-ignores extract|x file=|f files-from=|T force-local "
    "format=|H full-time get gunzip gzip|z hard-dereference help hole-detection= ignore-case "
    "ignore-command-error ignore-failed-read ignore-zeros|i incremental|G index-file= "
    "info-script=|F interactive keep-directory-symlink keep-newer-files keep-old-files|k label=|V "
    "level= list|t listed-incremental=|g lzip lzma lzop mode= mtime= multi-volume|M "
    "new-volume-script= newer= newer-mtime= no-acls no-anchored no-auto-compress no-check-device "
    "no-delay-directory-restore no-ignore-case no-ignore-command-error no-null no-overwrite-dir "
    "no-quote-chars= no-recursion no-same-owner no-same-permissions no-seek no-selinux no-unquote "
    "no-verbatim-files-from no-wildcards no-wildcards-match-slash no-xattrs null numeric-owner "
    "occurrence? old-archive one-file-system one-top-level? overwrite overwrite-dir owner= "
    "owner-map= pax-option= portability posix preserve-order preserve-permissions|p quote-chars= "
    "quoting-style= read-full-records|B record-size= recursion recursive-unlink remove-files "
    "restrict rmt-command= rsh-command= same-order|s same-owner same-permissions seek|n selinux "
    "show-defaults show-omitted-dirs show-snapshot-field-ranges show-stored-names "
    "show-transformed-names skip-old-files sort= sparse|S sparse-version= starting-file=|K "
    "strip-components= suffix= tape-length=|L test-label to-command= to-stdout|O totals? touch|m "
    "transform= uncompress ungzip unlink-first|U unquote update|u usage "
    "use-compress-program=|I utc verbatim-files-from verbose|v verify|W version volno-file= "
    "warning= wildcards wildcards-match-slash xattrs xattrs-exclude= xattrs-include= xform= xz|J zstd",
)
_TAR_RUNS = (
    "to-command",
    "use-compress-program",
    "info-script",
    "new-volume-script",
    "rsh-command",
    "rmt-command",
)
_TAR_WRITES = ("index-file", "volno-file", "listed-incremental")


def _tar_old_style(args: list[str]) -> list[str]:
    """``tar tvf a.tar x`` → ``tar -t -v -f a.tar x`` (a first word without ``-`` is a bundle
    whose value-taking letters take the next words in order)."""
    if not args or args[0].startswith("-"):
        return args
    shorts, _, _ = TAR.tables()
    letters = args[0]
    if not all(c in shorts for c in letters):
        return args
    rest = list(args[1:])
    out: list[str] = []
    for c in letters:
        out.append("-" + c)
        if shorts[c] and rest:
            out.append(rest.pop(0))
    return out + rest


def tar(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``tar``: listing and comparing read; extracting writes files (``-O`` prints them);
    creating writes the archive (``-f -`` prints it); checkpoint actions, ``--to-command``,
    ``-I`` and volume scripts run programs; ``--index-file`` writes even when listing."""
    parsed = parse(_tar_old_style(list(argv[1:])), TAR)
    if parsed.unknown:
        return unk(f"tar {parsed.unknown[0]}: an option this classifier does not know", "files.tar")
    names = parsed.names()
    for action in parsed.values("checkpoint-action"):
        if action.split("=", 1)[0].strip() not in (
            "bell",
            "dot",
            "echo",
            "ttyout",
            "totals",
            "wait",
            "sleep",
        ):
            return unk(f"tar --checkpoint-action={action}: runs a command", "files.tar")
    if any(w.startswith("--checkpoint-a") for w, _ in parsed.ambiguous) or (
        "checkpoint-action" in names and not parsed.values("checkpoint-action")
    ):
        return unk("tar --checkpoint-action: runs a command", "files.tar")
    if runs := sorted(names & set(_TAR_RUNS)):
        return unk(f"tar --{runs[0]}: runs a program of the caller's choice", "files.tar")
    archives = parsed.values("file")
    if any(":" in a.split("/", 1)[0] for a in archives) and "force-local" not in names:
        return unk("tar -f HOST:FILE: reaches a remote archive through rsh", "files.tar")
    if parsed.injectable:
        raw = getattr(parsed.injectable[0], "raw", parsed.injectable[0])
        return unk(f"tar: {raw} is expanded at run time and may become an option", "expansion")
    vs = [
        write_target_verdict(v, f"tar --{n}", "files.write")
        for n, v in parsed.opts
        if n in _TAR_WRITES and v is not None and not is_harmless_sink(v)
    ]
    if "remove-files" in names:
        vs.append(destr("tar --remove-files: deletes the files it archives", "rm.file"))
    target = parsed.value("directory") or ""
    if names & {"extract", "get"}:
        if "to-stdout" in names:
            vs.append(ro("tar -xO: extracts to stdout", "files.read"))
        elif target and is_system_path(target):
            vs.append(destr(f"tar: extracts over system path {target}", "files.system_write"))
        else:
            vs.append(mut("tar -x: extracts files", "files.write"))
    elif names & {"create", "append", "update", "catenate", "delete"}:
        if archives and all(a == "-" or is_harmless_sink(a) for a in archives) and "delete" not in names:
            vs.append(ro("tar -c -f -: writes the archive to stdout", "files.read"))
        elif not archives and "create" in names:
            vs.append(
                ro("tar -c without -f: writes the archive to stdout (or the tape device)", "files.read")
            )
        else:
            vs.append(mut("tar: creates or changes an archive", "files.write"))
    elif not names & {"list", "diff", "compare", "test-label", "help", "version", "usage", "show-defaults"}:
        vs.append(unk("tar without a mode this classifier knows", "files.tar"))
    return worst(vs) or ro("tar -t: lists an archive", "files.read")


def archive(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``unzip``/``zip``/``gzip``…: listing and printing read; extracting or compressing writes files."""
    name = argv[0]
    args = argv[1:]
    if name in ("unzip", "zipinfo") and (
        has_flag(args, "-l", "-v", "-t", "-Z", "-p", "-c") or name == "zipinfo"
    ):
        return ro(f"{name} -l: lists an archive", "files.read")
    if name in ("gzip", "gunzip", "bzip2", "xz", "zstd", "lz4", "bunzip2", "unxz") and has_flag(
        args, "-c", "-l", "-t", "--stdout", "--to-stdout", "--list", "--test"
    ):
        return ro(f"{name} -c: writes to stdout", "files.read")
    if name in ("zcat", "bzcat", "xzcat", "zless", "zgrep"):
        return ro(f"{name}: reads compressed text", "files.read")
    return mut(f"{name}: creates, extracts or replaces files", "files.write")


def editor(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Interactive editors cannot be judged from their argv."""
    return unk(f"{argv[0]}: interactive editor", "files.editor")
