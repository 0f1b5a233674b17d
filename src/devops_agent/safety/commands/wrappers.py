"""Commands that run other commands: ``sudo``, ``env``, ``timeout``, ``nohup``, ``nice``, ``xargs``,
``watch``, ``time``, ``strace``, ``sh -c``, ``eval``, ``su -c``, ``chroot``.

Each wrapper finds the command it runs and hands it back to the classifier (through ``recurse``)
so nesting of any depth is judged by the same rules; the wrapper's verdict is the inner verdict
with the wrapper named in the reason. Environment assignments given to ``env``/``sudo`` are
judged like any other (:mod:`~devops_agent.safety.commands.envvars`); the input ``xargs`` adds
is a word built at run time. Wrappers' own options that write (``time -o``, ``strace -o``,
``watch -s``) are judged too. Must not run anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from devops_agent.safety.commands.base import (
    Arg,
    Recurse,
    Verdict,
    is_dynamic,
    is_harmless_sink,
    mut,
    ro,
    shell_join,
    unk,
    worst,
    write_target_verdict,
)
from devops_agent.safety.commands.envvars import judge_env
from devops_agent.safety.commands.options import Spec, parse


def _after_options(args: Sequence[str], valued: Sequence[str], *, stop_at_assign: bool = False) -> list[str]:
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return list(args[i + 1 :])
        if stop_at_assign and "=" in a and not a.startswith("-"):
            i += 1
            continue
        if a.startswith("-") and len(a) > 1:
            i += 2 if a in valued else 1
            continue
        return list(args[i:])
    return []


def _wrapped(wrapper: str, inner: Sequence[str], recurse: Recurse) -> Verdict:
    v = recurse(shell_join(inner))
    return Verdict(v.level, f"{wrapper} → {v.reason}", v.key)


def _assignments(words: Sequence[str], recurse: Recurse) -> tuple[list[Verdict], list[str]]:
    """Judge leading ``NAME=VALUE`` words (given to the command's environment); return the rest."""
    vs: list[Verdict] = []
    i = 0
    while i < len(words) and "=" in words[i] and not words[i].startswith("-"):
        name, _, value = words[i].partition("=")
        vs.append(judge_env(name, value, is_dynamic(words[i]), recurse, exported=True))
        i += 1
    return vs, list(words[i:])


_SUDO_VALUED = (
    "-u",
    "--user",
    "-g",
    "--group",
    "-p",
    "--prompt",
    "-C",
    "--close-from",
    "-h",
    "--host",
    "-r",
    "--role",
    "-t",
    "--type",
    "-U",
    "--other-user",
    "-D",
    "--chdir",
    "-T",
    "--command-timeout",
)


def sudo(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``sudo``/``doas``/``pkexec``/``runuser``: judge the command run as another user."""
    args = list(argv[1:])
    inner = _after_options(args, _SUDO_VALUED)
    # Only sudo's own options count: `sudo rm -v x` runs rm, and `sudo -k CMD` runs CMD.
    own = args[: len(args) - len(inner)]
    if any(a in ("-l", "--list") for a in own):
        return ro(f"{argv[0]} -l: lists privileges", "readonly")
    if any(a in ("-e", "--edit") for a in own):
        return unk(f"{argv[0]} -e: edits files as another user", "files.editor")
    env, inner = _assignments(inner, recurse)
    if inner:
        v = _wrapped(argv[0], inner, recurse)
        return worst([v, *env]) or v
    if any(a in ("-i", "-s", "--login", "--shell") for a in own):
        return unk(f"{argv[0]} -i/-s: opens a root shell", "shell.interactive")
    if any(a in ("-v", "--validate", "-k", "-K", "--reset-timestamp", "-V", "--version") for a in own):
        return ro(f"{argv[0]} -v/-k: refreshes or drops cached credentials", "readonly")
    return unk(f"{argv[0]} without a command", "shell.interactive")


ENV = Spec(
    short="+0C:S:iu:va:",
    long="null|0 chdir=|C split-string=|S ignore-environment|i unset=|u debug|v argv0=|a help version "
    "block-signal? default-signal? ignore-signal? list-signal-handling",
)


def env(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``env [-i] [-u NAME] [-C DIR] [NAME=VALUE…] CMD``; ``-S STRING`` splits STRING into the
    command; the assignments are judged as the command's environment."""
    args = list(argv[1:])
    parsed = parse(args, ENV)
    if parsed.unknown:
        return unk(f"env {parsed.unknown[0]}: an option this classifier does not know", "wrapper")
    split = parsed.value("split-string")
    assigned, rest = _assignments(parsed.operands, recurse)
    if split is not None:
        v = recurse(" ".join([split, shell_join(rest)]))
        return worst([Verdict(v.level, f"env -S → {v.reason}", v.key), *assigned]) or v
    if not rest:
        return worst([ro("env: prints the environment", "readonly"), *assigned]) or ro("env", "readonly")
    v = _wrapped("env", rest, recurse)
    return worst([v, *assigned]) or v


TIMEOUT = Spec(
    short="+k:s:v", long="foreground preserve-status kill-after=|k signal=|s verbose|v help version"
)


def timeout(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``timeout [opts] DURATION CMD``."""
    parsed = parse(argv[1:], TIMEOUT)
    rest = parsed.operands
    if len(rest) < 2:
        return unk("timeout without a command", "wrapper")
    return _wrapped("timeout", rest[1:], recurse)


GNU_TIME = Spec(
    short="+ao:f:pqvV",
    long="append|a output=|o format=|f portability|p quiet|q verbose|v version|V help",
)
_TRACERS = {
    "strace": Spec(
        short="+bcCdDfFhiqrtTvVwxyYzZa:e:E:I:o:O:p:P:s:S:u:U:X:k",
        long="output=|o attach=|p trace=|e signal= trace-path=|P summary-sort-by=|S user=|u env=|E "
        "string-limit=|s follow-forks|f output-separately help|h version|V",
        abbrev=True,
    ),
    "ltrace": Spec(short="+abcCDe:fF:hiLl:n:o:p:rs:St:u:Vx:A:", long="output=|o help version", abbrev=True),
}


def plain(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``nohup``/``nice``/``ionice``/``time``/``stdbuf``/``setsid``/``exec``/``command``/``builtin``/
    ``chrt``/``strace``…: judge the command they run, and their own options that write a file."""
    name = argv[0]
    args = list(argv[1:])
    if name == "command" and args[:1] in (["-v"], ["-V"]):
        return ro("command -v: looks a name up", "readonly")
    if name == "time" or name in _TRACERS:
        spec = GNU_TIME if name == "time" else _TRACERS[name]
        parsed = parse(args, spec)
        writes = [
            write_target_verdict(out, f"{name} -o", "files.write")
            for out in parsed.values("output")
            if not is_harmless_sink(out)
        ]
        rest = parsed.operands
        if name in _TRACERS and parsed.has("-p", "attach"):
            return unk(f"{name} -p: attaches to a running process", "wrapper")
        if not rest:
            return worst([ro(f"{name}: nothing to run", "readonly"), *writes]) or ro(name, "readonly")
        v = _wrapped(name, rest, recurse)
        return worst([v, *writes]) or v
    valued = {
        "nice": ("-n", "--adjustment"),
        "ionice": ("-c", "-n", "-p", "--class", "--classdata"),
        "stdbuf": ("-i", "-o", "-e"),
        "flock": ("-w", "-E", "--timeout"),
        "cgexec": ("-g",),
        "exec": ("-a",),
    }.get(name, ())
    rest = _after_options(args, valued)
    if name == "flock" and "-c" in args:
        return unk("flock -c: runs a command string", "wrapper")
    if name in ("ionice", "taskset", "chrt") and set(args) & _RESCHEDULE:
        return mut(f"{name} -p: changes the scheduling of a running process", "kill.signal")
    if name in ("taskset", "chrt", "flock") and rest:
        rest = rest[1:]
    if name == "taskset" and rest and rest[0][:1].isdigit():
        rest = rest[1:]
    if not rest:
        return ro(f"{name} alone changes nothing", "readonly") if name != "exec" else ro("exec", "readonly")
    return _wrapped(name, rest, recurse)


_RESCHEDULE = frozenset({"-p", "--pid", "-P", "--pgid", "-u", "--uid", "-a", "--all-tasks"})

XARGS = Spec(
    short="+0E:I:L:P:a:d:e::i::l::n:oprs:tx",
    long="null|0 arg-file=|a delimiter=|d eof?|e replace?|i max-lines?|l max-args=|n max-procs=|P "
    "interactive|p process-slot-var= no-run-if-empty|r max-chars=|s verbose|t exit|x show-limits "
    "open-tty|o help version",
)
_INPUT = Arg("${XARGS_INPUT}", '"${XARGS_INPUT}"', dynamic=True, starts_dynamic=True)


def xargs(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``xargs [opts] CMD …``: CMD runs once per batch of input, which supplies its last arguments
    (or replaces ``-I`` strings): those are words built at run time."""
    parsed = parse(argv[1:], XARGS)
    if parsed.unknown:
        return unk(f"xargs {parsed.unknown[0]}: an option this classifier does not know", "wrapper")
    vs = [judge_env(v, "", True, recurse, exported=True) for v in parsed.values("process-slot-var")]
    rest = parsed.operands
    if not rest:
        return worst([ro("xargs with no command echoes its input", "readonly"), *vs]) or ro(
            "xargs", "readonly"
        )
    replace = parsed.value("replace") or ("{}" if parsed.has("replace") else None)
    if replace is None:
        replace = parsed.value("-I")
    if replace:
        inner: list[str] = []
        for w in rest:
            if replace in w:
                text = w.replace(replace, "${XARGS_INPUT}")
                inner.append(Arg(text, '"' + text + '"', dynamic=True, starts_dynamic=w.startswith(replace)))
            else:
                inner.append(w)
    else:
        inner = [*rest, _INPUT]
    v = recurse(shell_join(inner))
    return worst([Verdict(v.level, f"xargs (for every input line) → {v.reason}", v.key), *vs]) or v


WATCH = Spec(
    short="+bcCd::eghn:pq:rs:tvwx",
    long="beep|b color|c no-color|C differences?|d errexit|e chgexit|g interval=|n precise|p "
    "equexit=|q no-rerun|r shotsdir=|s no-title|t version|v no-wrap|w exec|x help",
)


def watch(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``watch [opts] CMD``: CMD is run repeatedly through ``sh -c`` (``-x``: without a shell)."""
    parsed = parse(argv[1:], WATCH)
    rest = parsed.operands
    if not rest:
        return unk("watch without a command", "wrapper")
    text = shell_join(rest) if parsed.has("exec") else " ".join(str(a) for a in rest)
    v = recurse(text)
    vs = [v]
    for d in parsed.values("shotsdir"):
        vs.append(write_target_verdict(d, "watch --shotsdir", "files.write"))
    out = worst(vs) or v
    return Verdict(out.level, f"watch (repeatedly) → {out.reason}", out.key)


_SHELLS = ("sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "mksh", "busybox-sh")


def shell(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``sh -c STRING`` parses STRING; a script file cannot be seen; no arguments reads stdin."""
    args = list(argv[1:])
    for i, a in enumerate(args):
        if a == "-c" or (a.startswith("-") and not a.startswith("--") and "c" in a[1:] and a[1:].isalpha()):
            if i + 1 >= len(args):
                return unk(f"{argv[0]} -c without a command", "wrapper")
            if is_dynamic(args[i + 1]):
                return unk(f"{argv[0]} -c with a command built at run time", "dynamic")
            v = recurse(args[i + 1])
            return Verdict(v.level, f"{argv[0]} -c → {v.reason}", v.key)
        if a in ("--version", "--help"):
            return ro(f"{argv[0]} --version", "readonly")
        if a in ("-n",) and i + 1 < len(args):
            return ro(f"{argv[0]} -n: syntax check only", "readonly")
        if not a.startswith("-") and not a.startswith("+"):
            return unk(f"{argv[0]} {a}: runs a script file this classifier cannot see", "shell.script")
    if "-s" in args or not args or all(a.startswith(("-", "+")) for a in args):
        return unk(f"{argv[0]}: reads commands from stdin", "shell.stdin")
    return unk(f"{argv[0]}: interactive shell", "shell.interactive")


def eval_(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``eval ARGS``: ARGS joined with spaces are parsed again as shell code."""
    if len(argv) < 2:
        return ro("eval with nothing to run", "readonly")
    if any(is_dynamic(a) for a in argv[1:]):
        return unk("eval of text built at run time: cannot tell what runs", "dynamic")
    v = recurse(" ".join(argv[1:]))
    return Verdict(v.level, f"eval → {v.reason}", v.key)


def su(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``su [-] [USER] -c CMD``; without ``-c`` it opens a shell."""
    args = list(argv[1:])
    for i, a in enumerate(args):
        if a in ("-c", "--command") and i + 1 < len(args):
            v = recurse(args[i + 1])
            return Verdict(v.level, f"su -c → {v.reason}", v.key)
    return unk("su: opens a shell as another user", "shell.interactive")


def chroot(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``chroot DIR [CMD…]``."""
    rest = _after_options(argv[1:], ("--userspec", "--groups"))
    if len(rest) < 2:
        return unk("chroot: opens a shell in another root", "shell.interactive")
    return _wrapped("chroot", rest[1:], recurse)
