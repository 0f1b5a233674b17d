"""Bash builtins that change the shell's own state or evaluate text as code.

Builtins are not looked up through ``PATH``, so they are judged by name wherever ``PATH``
points. What they do to later commands is judged where they run:

* assignments they make (``export``, ``declare``, ``printf -v``, ``read``, ``mapfile`` …) are
  judged like any environment assignment (:mod:`~devops_agent.safety.commands.envvars`):
  ``printf -v PATH …`` is ``unknown``, ``export PAGER=cat`` is read-only;
* a variable name with an array subscript (``printf -v 'a[$(cmd)]'``, ``test -v``, ``read``,
  ``unset``, ``declare``) is evaluated arithmetically, which runs substitutions: ``unknown``;
* builtins that run text later or now (``trap``, ``alias``, ``mapfile -C``, ``compgen -C``,
  ``let``, ``fc``, ``bind -x``, ``enable -f``, ``hash -p``) judge that text or are ``unknown``.

Must not run anything.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from devops_agent.safety.commands.base import Recurse, Verdict, is_dynamic, mut, ro, unk, worst
from devops_agent.safety.commands.envvars import judge_env

NAMES = frozenset(
    {
        "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen", "complete",
        "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit",
        "export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let",
        "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray",
        "readonly", "return", "set", "shift", "shopt", "source", "suspend", "test", "times", "trap",
        "true", "type", "typeset", "ulimit", "umask", "unalias", "unset", "wait", ".", ":", "[",
        "[[",
    }
)  # fmt: skip
"""bash's builtins: the shell runs these itself, whatever ``PATH`` says."""

_PLAIN = frozenset(
    {
        "bg", "break", "caller", "cd", "continue", "dirs", "disown", "echo", "exit", "false", "fg",
        "help", "jobs", "logout", "popd", "pushd", "pwd", "return", "shift", "shopt", "suspend",
        "times", "true", "type", "ulimit", "umask", "unalias", ":", "compopt",
    }
)  # fmt: skip
_SUBSCRIPT = re.compile(r"\[")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def assigned_names(words: Sequence[str]) -> list[str]:
    """Variables a builtin call assigns at run time (their values are not literals of the script)."""
    if not words:
        return []
    name, args = words[0], list(words[1:])
    if name in ("declare", "typeset", "local", "export", "readonly"):
        return [a.split("=", 1)[0] for a in args if not a.startswith(("-", "+"))]
    if name == "read":
        return _read_targets(args)
    if name in ("mapfile", "readarray"):
        ops = [a for a in _skip_opts(args, "dnOstuC c") if not a.startswith("-")]
        return ops[-1:] or ["MAPFILE"]
    if name == "printf":
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-v"]
    if name == "getopts" and len(args) >= 2:
        return [args[1]]
    if name == "wait":
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-p"]
    if name == "unset":
        return [a for a in args if not a.startswith("-")]
    return []


def _skip_opts(args: Sequence[str], valued: str) -> list[str]:
    """Operands after the options of a builtin (``valued``: letters whose option takes a value)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return [*out, *args[i + 1 :]]
        if a.startswith("-") and len(a) > 1:
            letters = a[1:]
            takes = next((k for k, ch in enumerate(letters) if ch in valued), -1)
            i += 2 if takes == len(letters) - 1 else 1
            continue
        out.append(a)
        i += 1
    return out


def _read_targets(args: Sequence[str]) -> list[str]:
    targets = _skip_opts(args, "adinNptu")
    for i, a in enumerate(args[:-1]):
        if a.startswith("-") and a.endswith("a") and not a.startswith("--"):
            targets.append(args[i + 1])
    return targets or ["REPLY"]


def _target(name: str, what: str) -> Verdict:
    """Assigning an unknown value to variable ``name`` (``read``, ``printf -v``, ``mapfile``)."""
    if _SUBSCRIPT.search(name) or is_dynamic(name):
        return unk(
            f"{what} {name!r}: an array subscript is evaluated as arithmetic (substitutions run)", "expansion"
        )
    return judge_env(name, "", True, _no_recurse, exported=False)


def _no_recurse(text: str) -> Verdict:
    return unk("a command held in a variable", "shell.env")


def builtin(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """Judge a bash builtin that is not a wrapper (wrappers: ``command``, ``exec``, ``eval``, ``source``)."""
    name, args = argv[0], list(argv[1:])
    if name in _PLAIN:
        return ro(f"{name}: shell builtin that reads or changes only the shell's own state", "readonly")
    fn = _HANDLERS.get(name)
    if fn is None:
        return unk(f"{name}: a builtin this classifier does not judge", "unknown")
    return fn(name, args, recurse)


def _printf(name: str, args: list[str], recurse: Recurse) -> Verdict:
    targets = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-v"]
    vs = [_target(t, "printf -v") for t in targets]
    return worst([ro("printf: prints text", "readonly"), *vs]) or ro("printf", "readonly")


def _test(name: str, args: list[str], recurse: Recurse) -> Verdict:
    for i, a in enumerate(args[:-1]):
        if a == "-v" and (_SUBSCRIPT.search(args[i + 1]) or is_dynamic(args[i + 1])):
            return unk(f"{name} -v {args[i + 1]!r}: the subscript is evaluated as arithmetic", "expansion")
    return ro(f"{name}: evaluates a condition", "readonly")


_ARITH_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_LITERAL_INT = re.compile(r"^[+-]?\d+$")


def _conditional(name: str, args: list[str], recurse: Recurse) -> Verdict:
    """``[[ … ]]``: like ``test``, except that the operands of ``-eq``/``-lt``… are evaluated as
    arithmetic, where a subscript in a variable's value runs ``$(…)``: only literal numbers, or
    variables whose value the script sets to one, are safe there."""
    words = [a for a in args if a != "]]"]
    for i, a in enumerate(words):
        if a in _ARITH_OPS:
            for operand in (words[i - 1] if i > 0 else "", words[i + 1] if i + 1 < len(words) else ""):
                if is_dynamic(operand) or not _LITERAL_INT.match(str(operand)):
                    return unk(
                        f"[[ … {a} … ]] evaluates {getattr(operand, 'raw', operand)!r} as arithmetic "
                        "(a subscript in its value runs commands)",
                        "expansion",
                    )
    return _test("[[", words, recurse)


def _read(name: str, args: list[str], recurse: Recurse) -> Verdict:
    if name in ("mapfile", "readarray"):
        if any(a.startswith("-") and "C" in a for a in args):
            return unk(f"{name} -C: runs a callback command for every line", "shell.eval")
        targets = assigned_names([name, *args])
    else:
        targets = _read_targets(args)
    vs = [_target(t, name) for t in targets]
    return worst([ro(f"{name}: reads input into shell variables", "readonly"), *vs]) or ro(name, "readonly")


def _declare(name: str, args: list[str], recurse: Recurse) -> Verdict:
    flags = "".join(a[1:] for a in args if a.startswith(("-", "+")) and len(a) > 1)
    if set(flags) & {"n", "i"}:
        return unk(
            f"{name} -{flags}: a name reference or an integer variable (assignments evaluate code)",
            "shell.state",
        )
    exported = name == "export" or "x" in flags
    vs: list[Verdict] = []
    for a in args:
        if a.startswith(("-", "+")):
            continue
        var, eq, value = a.partition("=")
        if _SUBSCRIPT.search(var) or not _NAME.match(var):
            vs.append(
                unk(f"{name} {var!r}: not a plain variable name (subscripts are evaluated)", "expansion")
            )
        elif eq:
            vs.append(judge_env(var, value, is_dynamic(a), recurse, exported=exported))
    return worst([ro(f"{name}: sets or prints shell variables", "readonly"), *vs]) or ro(name, "readonly")


def _unset(name: str, args: list[str], recurse: Recurse) -> Verdict:
    functions = "-f" in args
    vs: list[Verdict] = []
    for a in args:
        if a.startswith("-") or functions:
            continue
        if _SUBSCRIPT.search(a) or is_dynamic(a):
            vs.append(unk(f"unset {a!r}: the subscript is evaluated as arithmetic", "expansion"))
        else:
            vs.append(judge_env(a, "", False, recurse, exported=False))
    return worst([ro("unset: removes shell variables", "readonly"), *vs]) or ro(name, "readonly")


def _alias(name: str, args: list[str], recurse: Recurse) -> Verdict:
    vs: list[Verdict] = []
    for a in args:
        alias, eq, value = a.partition("=")
        if eq:
            v = recurse(value) if value.strip() else ro("empty alias", "readonly")
            vs.append(Verdict(v.level, f"alias {alias} → {v.reason}", v.key))
    return worst([ro("alias: defines or lists aliases", "readonly"), *vs]) or ro(name, "readonly")


def _trap(name: str, args: list[str], recurse: Recurse) -> Verdict:
    ops = [a for a in args if a not in ("--",)]
    if not ops or ops[0] in ("-l", "-p") or len(ops) == 1 or ops[0] in ("-", ""):
        return ro("trap: lists or resets signal handlers", "readonly")
    if is_dynamic(ops[0]):
        return unk("trap: the handler comes from an expansion", "shell.eval")
    v = recurse(ops[0])
    return Verdict(v.level, f"trap (runs on a signal or exit) → {v.reason}", v.key)


def _set(name: str, args: list[str], recurse: Recurse) -> Verdict:
    opts = [a for a in args if a.startswith(("-", "+")) and a not in ("--", "-")]
    if any("k" in a[1:] for a in opts if not a.startswith(("-o", "+o"))) or "keyword" in args:
        return unk("set -k: assignments anywhere on a line go to the environment", "shell.state")
    return ro("set: changes shell options or positional parameters", "readonly")


def _hash(name: str, args: list[str], recurse: Recurse) -> Verdict:
    if any(a.startswith("-") and "p" in a for a in args):
        return unk("hash -p: pins a command name to a program of the caller's choice", "shell.state")
    return ro("hash: lists or refreshes remembered program paths", "readonly")


def _enable(name: str, args: list[str], recurse: Recurse) -> Verdict:
    if any(a.startswith("-") and set(a[1:]) & {"n", "f", "d"} for a in args) or [
        a for a in args if not a.startswith("-")
    ]:
        return unk("enable -n/-f: disables a builtin or loads one from a shared library", "shell.state")
    return ro("enable: lists builtins", "readonly")


def _complete(name: str, args: list[str], recurse: Recurse) -> Verdict:
    if any(a.startswith("-") and set(a[1:]) & {"C", "F"} for a in args):
        return unk(f"{name} -C/-F: runs a command or function to produce completions", "shell.eval")
    return ro(f"{name}: completion settings", "readonly")


def _history(name: str, args: list[str], recurse: Recurse) -> Verdict:
    if any(a.startswith("-") and set(a[1:]) & {"w", "a"} for a in args):
        return mut("history -w/-a: writes the history file", "files.write")
    return ro("history: lists the shell's history", "readonly")


def _fc(name: str, args: list[str], recurse: Recurse) -> Verdict:
    if args[:1] == ["-l"]:
        return ro("fc -l: lists history", "readonly")
    return unk("fc: re-runs history entries or opens an editor", "shell.eval")


def _bind(name: str, args: list[str], recurse: Recurse) -> Verdict:
    if any(a.startswith("-") and "x" in a for a in args):
        return unk("bind -x: binds a key to a shell command", "shell.eval")
    return ro("bind: readline key bindings", "readonly")


def _let(name: str, args: list[str], recurse: Recurse) -> Verdict:
    return unk("let: arithmetic evaluation (substitutions in array subscripts run)", "expansion")


def _getopts(name: str, args: list[str], recurse: Recurse) -> Verdict:
    vs = [_target(args[1], "getopts")] if len(args) >= 2 else []
    return worst([ro("getopts: parses positional parameters", "readonly"), *vs]) or ro(name, "readonly")


def _wait(name: str, args: list[str], recurse: Recurse) -> Verdict:
    vs = [_target(args[i + 1], "wait -p") for i, a in enumerate(args[:-1]) if a == "-p"]
    return worst([ro("wait: waits for background jobs", "readonly"), *vs]) or ro(name, "readonly")


_HANDLERS = {
    "printf": _printf,
    "test": _test,
    "[": _test,
    "[[": _conditional,
    "read": _read,
    "mapfile": _read,
    "readarray": _read,
    "declare": _declare,
    "typeset": _declare,
    "local": _declare,
    "export": _declare,
    "readonly": _declare,
    "unset": _unset,
    "alias": _alias,
    "trap": _trap,
    "set": _set,
    "hash": _hash,
    "enable": _enable,
    "compgen": _complete,
    "complete": _complete,
    "history": _history,
    "fc": _fc,
    "bind": _bind,
    "let": _let,
    "getopts": _getopts,
    "wait": _wait,
}
HANDLED = frozenset(_PLAIN | set(_HANDLERS))
"""Builtins :func:`builtin` judges (the others are wrappers or ``kill``, judged elsewhere)."""
