"""Commands that run other commands: ``sudo``, ``env``, ``timeout``, ``nohup``, ``nice``, ``xargs``,
``watch``, ``sh -c``, ``eval``, ``ssh HOST CMD``, ``su -c``, ``chroot``.

Each wrapper finds the command it runs and hands it back to the classifier (through ``recurse``)
so nesting of any depth is judged by the same rules; the wrapper's verdict is the inner verdict
with the wrapper named in the reason. Must not run anything.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from devops_agent.safety.commands.base import Recurse, Verdict, ro, unk


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
    v = recurse(shlex.join(inner))
    return Verdict(v.level, f"{wrapper} → {v.reason}", v.key)


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
    if inner:
        return _wrapped(argv[0], inner, recurse)
    if any(a in ("-i", "-s", "--login", "--shell") for a in own):
        return unk(f"{argv[0]} -i/-s: opens a root shell", "shell.interactive")
    if any(a in ("-v", "--validate", "-k", "-K", "--reset-timestamp", "-V", "--version") for a in own):
        return ro(f"{argv[0]} -v/-k: refreshes or drops cached credentials", "readonly")
    return unk(f"{argv[0]} without a command", "shell.interactive")


def env(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``env [-i] [-u NAME] [VAR=value…] CMD``; ``-S STRING`` splits STRING into the command."""
    args = list(argv[1:])
    split = _env_split_string(args)
    if split is not None:
        rest = _after_options(args[split[1] :], (), stop_at_assign=True)
        v = recurse(" ".join([split[0], *(shlex.quote(a) for a in rest)]))
        return Verdict(v.level, f"env -S → {v.reason}", v.key)
    inner = _after_options(args, ("-u", "--unset", "-C", "--chdir"), stop_at_assign=True)
    if not inner:
        return ro("env: prints the environment", "readonly")
    return _wrapped("env", inner, recurse)


def _env_split_string(args: Sequence[str]) -> tuple[str, int] | None:
    """``(STRING, index after it)`` for ``env -S STRING`` / ``-SSTRING`` / ``--split-string=STRING``."""
    for i, a in enumerate(args):
        if a == "--" or not a.startswith("-"):
            return None
        if a in ("-S", "--split-string"):
            return (args[i + 1], i + 2) if i + 1 < len(args) else ("", i + 1)
        if a.startswith("--split-string="):
            return a[len("--split-string=") :], i + 1
        if a.startswith("-S"):
            return a[2:], i + 1
    return None


def timeout(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``timeout [opts] DURATION CMD``."""
    rest = _after_options(argv[1:], ("-s", "--signal", "-k", "--kill-after"))
    if len(rest) < 2:
        return unk("timeout without a command", "wrapper")
    return _wrapped("timeout", rest[1:], recurse)


def plain(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``nohup``/``nice``/``ionice``/``time``/``stdbuf``/``setsid``/``exec``/``command``/``builtin``/``chrt``…"""
    name = argv[0]
    valued = {
        "nice": ("-n", "--adjustment"),
        "ionice": ("-c", "-n", "-p", "--class", "--classdata"),
        "stdbuf": ("-i", "-o", "-e"),
        "time": ("-f", "--format", "-o", "--output"),
        "taskset": (),
        "chrt": (),
        "flock": ("-w", "-E", "--timeout"),
        "cgexec": ("-g",),
        "busybox": (),
    }.get(name, ())
    args = list(argv[1:])
    if name == "command" and args[:1] in (["-v"], ["-V"]):
        return ro("command -v: looks a name up", "readonly")
    rest = _after_options(args, valued)
    if name in ("taskset", "chrt", "flock") and rest:
        rest = rest[1:]
    if name == "taskset" and rest and rest[0][:1].isdigit():
        rest = rest[1:]
    if not rest:
        return ro(f"{name} alone changes nothing", "readonly") if name != "exec" else ro("exec", "readonly")
    return _wrapped(name, rest, recurse)


def xargs(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``xargs [opts] CMD …``: CMD runs once per batch of input lines (default ``echo``)."""
    rest = _after_options(
        argv[1:],
        (
            "-I",
            "-i",
            "-n",
            "-P",
            "-d",
            "-L",
            "-a",
            "-E",
            "-s",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--arg-file",
            "--replace",
        ),
    )
    if not rest:
        return ro("xargs with no command echoes its input", "readonly")
    v = recurse(shlex.join(rest))
    return Verdict(v.level, f"xargs (for every input line) → {v.reason}", v.key)


def watch(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``watch [opts] CMD``: CMD is run repeatedly through ``sh -c``."""
    rest = _after_options(argv[1:], ("-n", "--interval", "-d", "-q", "--equexit", "-g"))
    if not rest:
        return unk("watch without a command", "wrapper")
    v = recurse(" ".join(rest))
    return Verdict(v.level, f"watch (repeatedly) → {v.reason}", v.key)


_SHELLS = ("sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "mksh", "busybox-sh")


def shell(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``sh -c STRING`` parses STRING; a script file cannot be seen; no arguments reads stdin."""
    args = list(argv[1:])
    for i, a in enumerate(args):
        if a == "-c" or (a.startswith("-") and not a.startswith("--") and "c" in a[1:] and a[1:].isalpha()):
            if i + 1 >= len(args):
                return unk(f"{argv[0]} -c without a command", "wrapper")
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
    v = recurse(" ".join(argv[1:]))
    return Verdict(v.level, f"eval → {v.reason}", v.key)


_SSH_VALUED = (
    "-i",
    "-p",
    "-l",
    "-o",
    "-F",
    "-J",
    "-L",
    "-R",
    "-D",
    "-W",
    "-b",
    "-c",
    "-E",
    "-e",
    "-m",
    "-O",
    "-Q",
    "-S",
    "-w",
    "-B",
    "-I",
)


_SSH_LOCAL_COMMANDS = frozenset({"proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand"})


def ssh(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``ssh [opts] HOST [CMD…]``: the remote command (joined with spaces, as ssh does) is classified."""
    args = list(argv[1:])
    options = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-o"]
    options += [a[2:] for a in args if a.startswith("-o") and len(a) > 2]
    local = sorted({o.split("=")[0].split()[0].lower() for o in options if o.strip()} & _SSH_LOCAL_COMMANDS)
    if local:
        return unk(f"ssh -o {local[0]}: runs a command on this host", "ssh")
    rest = _after_options(args, _SSH_VALUED)
    if not rest:
        return unk("ssh without a host", "ssh")
    if len(rest) == 1:
        return unk(f"ssh {rest[0]}: interactive remote shell", "shell.interactive")
    v = recurse(" ".join(rest[1:]))
    return Verdict(v.level, f"ssh {rest[0]} → {v.reason}", v.key)


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
