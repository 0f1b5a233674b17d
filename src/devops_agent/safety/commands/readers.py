"""Programs that read, and the options that turn them into writers or command runners.

Each program here has its option table (GNU getopt_long tables from the Debian 12 tools' own
``--help``: coreutils 9.1, file 5.44, less 590, …) and the names of the options that write a
file, change something, or run a program. Options are read the way the program reads them:
abbreviated (``sort --out=x``), bundled (``sort -uo x``), attached (``-ox``); an option not in
the table is ``unknown`` (another platform's option may write: BSD ``base64 -o``), and so is a
word built at run time or a leading glob in option position of a program that has such options
(it may expand to ``--compress-program=…``). Must not run anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from devops_agent.safety.commands.base import (
    ArgvClassifier,
    Recurse,
    Verdict,
    is_harmless_sink,
    mut,
    positionals,
    ro,
    shell_join,
    unk,
    worst,
    write_target_verdict,
)
from devops_agent.safety.commands.options import Parsed, Spec, parse


@dataclass(frozen=True)
class Reader:
    """A reading program: its options, and those that write a file (value = path), change
    something (flag), or run a program of the caller's choice."""

    spec: Spec
    writes: tuple[str, ...] = ()
    changes: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    what: str = "reads only"


def judge_options(name: str, r: Reader, parsed: Parsed) -> Verdict:
    """The verdict of a parsed reader invocation (see :class:`Reader`)."""
    vs: list[Verdict] = []
    risky = set(r.writes) | set(r.changes) | set(r.runs)
    for word, candidates in parsed.ambiguous:
        hit = sorted(set(candidates) & risky)
        if hit:
            vs.append(unk(f"{name} {word}: may abbreviate --{hit[0]}", "files.write"))
    if parsed.unknown:
        vs.append(unk(f"{name} {parsed.unknown[0]}: an option this classifier does not know", "unknown"))
    if parsed.injectable and (r.writes or r.runs):
        raw = getattr(parsed.injectable[0], "raw", parsed.injectable[0])
        vs.append(unk(f"{name}: {raw} is expanded at run time and may become an option", "expansion"))
    names = parsed.names()
    for opt in r.runs:
        if opt in names:
            vs.append(unk(f"{name} --{opt.lstrip('-')}: runs a program of the caller's choice", "unknown"))
    for opt in r.changes:
        if opt in names:
            vs.append(mut(f"{name} --{opt.lstrip('-')}: changes state", "admin.mutate"))
    for opt in r.writes:
        for n, v in parsed.opts:
            if n == opt:
                if v is None:
                    vs.append(mut(f"{name} --{opt.lstrip('-')}: writes a file", "files.write"))
                elif not (is_harmless_sink(v) or v == "-"):
                    vs.append(write_target_verdict(v, f"{name} --{opt.lstrip('-')}", "files.write"))
    return worst(vs) or ro(f"{name}: {r.what}", "readonly")


def reader(r: Reader) -> ArgvClassifier:
    """A handler judging a program by its :class:`Reader` table."""

    def handle(argv: Sequence[str], recurse: Recurse) -> Verdict:
        return judge_options(argv[0], r, parse(argv[1:], r.spec))

    handle.__doc__ = f"Judge by option table: {r.what}."
    return handle


READERS: dict[str, Reader] = {
    "sort": Reader(
        Spec(
            "bcCdfghik:mMno:rRsS:t:T:uVz",
            "batch-size= buffer-size=|S check? compress-program= debug dictionary-order|d "
            "field-separator=|t files0-from= general-numeric-sort|g help human-numeric-sort|h "
            "ignore-case|f ignore-leading-blanks|b ignore-nonprinting|i key=|k merge|m month-sort|M "
            "numeric-sort|n output=|o parallel= random-sort|R random-source= reverse|r sort= stable|s "
            "temporary-directory=|T unique|u version version-sort|V zero-terminated|z",
        ),
        writes=("output",),
        runs=("compress-program",),
        what="sorts to stdout",
    ),
    "shuf": Reader(
        Spec(
            "ei:n:o:rz",
            "echo|e input-range=|i head-count=|n output=|o random-source= repeat|r "
            "zero-terminated|z help version",
        ),
        writes=("output",),
        what="shuffles to stdout",
    ),
    "iconv": Reader(
        Spec("cf:lo:st:V", "from-code=|f to-code=|t list|l output=|o silent|s verbose help usage version|V"),
        writes=("output",),
        what="converts to stdout",
    ),
    "base64": Reader(
        Spec("diw:", "decode|d ignore-garbage|i wrap=|w help version"), what="encodes or decodes to stdout"
    ),
    "base32": Reader(
        Spec("diw:", "decode|d ignore-garbage|i wrap=|w help version"), what="encodes or decodes to stdout"
    ),
    "file": Reader(
        Spec(
            "0bcCdEe:f:F:hiklLm:nNpP:rsSvzZ",
            "help version|v magic-file=|m uncompress|z uncompress-noreport|Z brief|b checking-printout|c "
            "exclude=|e exclude-quiet= files-from=|f separator=|F mime|i apple extension mime-type "
            "mime-encoding keep-going|k list|l dereference|L no-dereference|h no-buffer|n no-pad|N "
            "print0|0 preserve-date|p parameter=|P raw|r special-files|s no-sandbox|S compile|C debug|d",
        ),
        changes=("compile",),
        what="identifies file types",
    ),
    "less": Reader(
        Spec(
            "?aABb:cdD:eEfFgGh:iIj:Jk:KLmMnNo:O:p:P:qQrRsSt:T:uUVwWx:Xy:z:~#:",
            "help|? search-skip-screen|a SEARCH-SKIP-SCREEN|A buffers=|b auto-buffers|B clear-screen|c "
            "dumb|d color=|D quit-at-eof|e QUIT-AT-EOF|E force|f quit-if-one-screen|F hilite-search|g "
            "HILITE-SEARCH|G max-back-scroll=|h ignore-case|i IGNORE-CASE|I jump-target=|j "
            "status-column|J lesskey-file=|k quit-on-intr|K no-lessopen|L long-prompt|m LONG-PROMPT|M "
            "line-numbers|n LINE-NUMBERS|N log-file=|o LOG-FILE=|O pattern=|p prompt=|P quiet|q "
            "QUIET|Q silent SILENT raw-control-chars|r RAW-CONTROL-CHARS|R squeeze-blank-lines|s "
            "chop-long-lines|S tag=|t tag-file=|T underline-special|u UNDERLINE-SPECIAL|U version|V "
            "hilite-unread|w HILITE-UNREAD|W tabs=|x no-init|X max-forw-scroll=|y window=|z tilde|~ "
            "shift=|# file-size follow-name incsearch line-num-width= mouse no-histdups no-keypad "
            "no-number-headers redraw-on-quit rscroll= save-marks status-col-width= use-backslash "
            "use-color wheel-lines= exit-follow-on-close header= lesskey-src= lesskey-content= "
            "no-vbell proc-backspace proc-return proc-tab search-options= show-preproc-errors",
        ),
        writes=("log-file", "LOG-FILE"),
        runs=("lesskey-file", "lesskey-src", "lesskey-content"),
        what="pages through files",
    ),
    "info": Reader(
        Spec(
            "ad:f:hkn:o:O:RvwxV",
            "all|a apropos=|k debug=|x directory=|d dribble= file=|f help|h index-search= init-file= "
            "node=|n output=|o raw-escapes|R restore= show-options|O strict-node-location subnodes "
            "variable=|v version|V vi-keys where|w",
        ),
        writes=("output", "dribble"),
        runs=("init-file", "restore"),
        what="reads documentation",
    ),
    "lastlog": Reader(
        Spec("b:Chr:R:St:u:", "before=|b clear|C help|h root=|R set|S time=|t user=|u"),
        changes=("clear", "set"),
        what="reads login records",
    ),
    "ss": Reader(
        Spec(
            "046abdeEf:F:hHiKlmMnN:oOprsStTuvVwxzZA:D:",
            "help|h version|V numeric|n resolve|r all|a listening|l options|o extended|e memory|m "
            "processes|p threads|T info|i tipcinfo summary|s tos cgroup bpf|b events|E context|Z "
            "contexts|z net=|N ipv4|4 ipv6|6 packet|0 tcp|t mptcp|M sctp|S udp|u dccp|d raw|w unix|x "
            "tipc vsock xdp family=|f kill|K no-header|H oneline|O inet-sockopt query=|A socket= "
            "diag=|D filter=|F",
        ),
        writes=("diag",),
        changes=("kill",),
        what="lists sockets",
    ),
    "dmidecode": Reader(
        Spec(
            "d:hqs:t:uH:V",
            "dev-mem=|d help|h quiet|q string=|s type=|t dump|u dump-bin= from-dump= no-sysfs "
            "oem-string= handle=|H version|V list",
        ),
        writes=("dump-bin",),
        what="reads firmware tables",
    ),
    "column": Reader(
        Spec(
            "c:d:eH:hi:JlLnN:o:O:p:r:R:s:tT:Vw:W:x",
            "columns=|c table-noheadings|d table-header-as-columns table-empty-lines|e table-hide=|H "
            "help|h table-column= tree-id=|i json|J keep-empty-lines|L table-noextreme= table-name=|n "
            "table-columns=|N output-separator=|o table-order=|O tree-parent=|p table-right=|R "
            "separator=|s table|t tree=|r table-truncate=|T version|V output-width=|c table-wrap=|W "
            "fillrows|x use-spaces= table-columns-limit= table-header-repeat",
        ),
        what="formats text into columns",
    ),
}


def uniq(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``uniq [INPUT [OUTPUT]]``: a second operand is a file it overwrites."""
    spec = Spec(
        "cdDf:is:uw:z",
        "count|c repeated|d all-repeated? group? skip-fields=|f ignore-case|i skip-chars=|s unique|u "
        "check-chars=|w zero-terminated|z help version",
    )
    parsed = parse(argv[1:], spec)
    v = judge_options("uniq", Reader(spec, what="filters text to stdout"), parsed)
    if len(parsed.operands) >= 2 and parsed.operands[1] != "-":
        return worst([v, write_target_verdict(parsed.operands[1], "uniq INPUT OUTPUT", "files.write")]) or v
    return v


def xxd(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``xxd [INFILE [OUTFILE]]``: a second operand is a file it overwrites (also with ``-r``)."""
    pos = positionals(argv[1:], ("-c", "-g", "-l", "-o", "-s", "-n", "-cols", "-len", "-seek", "-name", "-C"))
    if len(pos) >= 2 and pos[1] != "-":
        return write_target_verdict(pos[1], "xxd INFILE OUTFILE", "files.write")
    return ro("xxd: dumps to stdout", "readonly")


def tree(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``tree -o FILE`` writes FILE; ``-R`` with ``-H`` writes an index in every directory."""
    args = list(argv[1:])
    for i, a in enumerate(args):
        if a == "-o" and i + 1 < len(args):
            return write_target_verdict(args[i + 1], "tree -o", "files.write")
        if a.startswith("--output="):
            return write_target_verdict(a.split("=", 1)[1], "tree -o", "files.write")
    if "-R" in args and "-H" in args:
        return mut("tree -R -H: writes 00Tree.html into every directory", "files.write")
    return ro("tree: lists directories", "readonly")


def yq(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``yq`` filters to stdout; ``-i``/``--inplace`` rewrites the file, ``-s`` splits into files."""
    args = list(argv[1:])
    shorts = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    if "i" in shorts or any(a.startswith(("--inplace", "--in-place", "--split-exp")) for a in args):
        return mut("yq -i/--split-exp: edits or writes files", "files.sed_inplace")
    if "s" in shorts and argv[0] == "yq" and not any(a in ("-s", "--slurp") for a in args):
        return mut("yq -s: splits documents into files", "files.write")
    return ro("yq: filters to stdout", "readonly")


def jsonlint(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``jsonlint -i``/``--in-place`` rewrites the file."""
    if any(
        a in ("-i", "--in-place") or (a.startswith("-") and not a.startswith("--") and "i" in a)
        for a in argv[1:]
    ):
        return mut("jsonlint -i: rewrites files", "files.sed_inplace")
    return ro("jsonlint: validates JSON", "readonly")


def search_runner(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``rg --pre CMD``/``--hostname-bin CMD`` run CMD; ``fd -x/-X CMD`` runs CMD on every match
    (neither accepts abbreviated long options)."""
    args = list(argv[1:])
    if argv[0] == "rg":
        for a in args:
            if a == "--":
                break
            if a.split("=", 1)[0] in ("--pre", "--hostname-bin"):
                return unk(f"rg {a.split('=', 1)[0]}: runs a program of the caller's choice", "unknown")
            if getattr(a, "starts_dynamic", False) or getattr(a, "leading_glob", False):
                return unk(
                    f"rg: {getattr(a, 'raw', a)} is expanded at run time and may become an option",
                    "expansion",
                )
        return ro("rg: searches files", "readonly")
    for i, a in enumerate(args):
        if a in ("-x", "-X", "--exec", "--exec-batch") or a.startswith(("--exec=", "--exec-batch=")):
            inner = [x for x in args[i + 1 :] if x not in ("{}", ";", "\\;")] or ["true"]
            v = recurse(shell_join(inner))
            return Verdict(v.level, f"fd {a} (for every match) → {v.reason}", v.key)
    return ro(f"{argv[0]}: searches files", "readonly")


def pager(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``bat``/``delta --pager CMD``, ``man -P CMD``/``-H[BROWSER]``: a program of the caller's
    choice; ``bat cache`` writes bat's cache."""
    name = argv[0]
    args = list(argv[1:])
    if name == "bat" and args[:1] == ["cache"]:
        return mut("bat cache: builds or clears bat's cache", "files.write")
    if name == "man":
        for a in args:
            body = a[2:].split("=", 1)[0] if a.startswith("--") else ""
            if (a.startswith(("-P", "-H", "-X", "-C", "-p")) and not a.startswith("--")) or (
                body
                and any(
                    n.startswith(body) for n in ("pager", "html", "gxditview", "config-file", "preprocessor")
                )
            ):
                return unk(f"man {a}: runs a pager, browser or viewer of the caller's choice", "unknown")
        return ro("man: reads a manual page", "readonly")
    if any(a == "--pager" or a.startswith("--pager=") for a in args):
        return unk(f"{name} --pager: runs a command of the caller's choice", "unknown")
    return ro(f"{name}: reads only", "readonly")


def fzf(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``fzf --bind``/``--preview``/``--listen``/``--with-shell`` run commands; ``--history`` writes."""
    for a in argv[1:]:
        name = a.split("=", 1)[0]
        if name in ("--bind", "--preview", "--listen", "--listen-unsafe", "--with-shell", "--execute"):
            return unk(f"fzf {name}: runs commands of the caller's choice", "unknown")
        if name == "--history":
            return mut("fzf --history: writes a history file", "files.write")
    return ro("fzf: filters lines", "readonly")


def dc(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``dc`` runs ``!command`` in its scripts; script files cannot be seen."""
    args = list(argv[1:])
    exprs = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-e", "--expression")]
    exprs += [a.split("=", 1)[1] for a in args if a.startswith("--expression=")]
    files = [a for a in positionals(args, ("-e", "--expression", "-f", "--file")) if a not in exprs]
    if any("!" in e for e in exprs):
        return unk("dc !command: runs a shell command", "unknown")
    if files or any(a in ("-f", "--file") or a.startswith("--file=") for a in args):
        return unk("dc FILE: runs a dc script this classifier cannot see", "unknown")
    return ro("dc: calculates", "readonly")
