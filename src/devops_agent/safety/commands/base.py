"""Shared vocabulary for the command families: levels, verdicts and argv helpers.

Every family module (``kubernetes``, ``git``, ``files`` …) turns one argv into a
:class:`Verdict` using these helpers. Nothing here parses shell syntax (that is the
classifier's job, with bashlex) and nothing here may execute anything or import from ``cli/``
or ``agent/``.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Level = Literal["read_only", "mutating", "unknown", "destructive"]

LEVEL_RANK: dict[Level, int] = {"read_only": 0, "mutating": 1, "unknown": 2, "destructive": 3}
"""Severity order. ``unknown`` ranks above ``mutating``: an unrecognized part could do anything a
known mutation does and more, so a compound command is reported at the worse of the two."""


@dataclass(frozen=True)
class Verdict:
    """The level of one simple command, why, and a stable ``key`` (``family.action``) for impact texts."""

    level: Level
    reason: str
    key: str = ""


def worst(verdicts: Iterable[Verdict]) -> Verdict | None:
    """The most severe verdict (the first one among equals), or ``None`` for an empty input."""
    best: Verdict | None = None
    for v in verdicts:
        if best is None or LEVEL_RANK[v.level] > LEVEL_RANK[best.level]:
            best = v
    return best


def max_level(levels: Iterable[Level]) -> Level:
    """The most severe of ``levels`` (``read_only`` for none)."""
    out: Level = "read_only"
    for lvl in levels:
        if LEVEL_RANK[lvl] > LEVEL_RANK[out]:
            out = lvl
    return out


def ro(reason: str, key: str = "") -> Verdict:
    """A read-only verdict."""
    return Verdict("read_only", reason, key)


def mut(reason: str, key: str = "") -> Verdict:
    """A mutating verdict."""
    return Verdict("mutating", reason, key)


def destr(reason: str, key: str = "") -> Verdict:
    """A destructive verdict."""
    return Verdict("destructive", reason, key)


def unk(reason: str, key: str = "") -> Verdict:
    """An unknown verdict (needs approval, never runs silently)."""
    return Verdict("unknown", reason, key)


class Arg(str):
    """An argv word, with what the classifier knows about how bash builds it at run time.

    It is a ``str`` (its text, quotes removed), so family handlers read it as before; the
    flags say whether its text is only known when the command runs.
    """

    raw: str
    """The word as written (quotes included): what is re-parsed when a wrapper hands it on."""
    dynamic: bool
    """Part of it comes from an expansion whose value the classifier does not know."""
    starts_dynamic: bool
    """Its first characters come from such an expansion (so it may turn into an option)."""
    leading_glob: bool
    """It starts with an unquoted glob: a matching file name may start with ``-``."""

    def __new__(
        cls,
        text: str,
        raw: str | None = None,
        *,
        dynamic: bool = False,
        starts_dynamic: bool = False,
        leading_glob: bool = False,
    ) -> Arg:
        obj = super().__new__(cls, text)
        obj.raw = text if raw is None else raw
        obj.dynamic = dynamic
        obj.starts_dynamic = starts_dynamic
        obj.leading_glob = leading_glob
        return obj


def is_dynamic(word: str) -> bool:
    """Whether ``word``'s text is only known at run time (see :class:`Arg`)."""
    return bool(getattr(word, "dynamic", False))


def shell_join(words: Iterable[str]) -> str:
    """A command line for ``words`` to classify again: literal words are quoted, words built
    by expansions keep their source text so the expansions are seen again."""
    out = []
    for w in words:
        raw = getattr(w, "raw", None)
        out.append(raw if isinstance(raw, str) and is_dynamic(w) else shlex.quote(str(w)))
    return " ".join(out)


Recurse = Callable[[str], Verdict]
"""Classifies a nested shell string (``sh -c``, ``eval``, ``ssh host CMD``) with the full walker."""

ArgvClassifier = Callable[[Sequence[str], "Recurse"], Verdict]
"""A family handler: ``(argv, recurse) -> Verdict``; ``argv[0]`` is the basename of the program."""


def positionals(args: Sequence[str], takes_value: Iterable[str] = ()) -> list[str]:
    """Arguments that are not options; options in ``takes_value`` swallow the next argument."""
    valued = set(takes_value)
    out: list[str] = []
    skip = False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a == "--":
            out.extend(args[i + 1 :])
            break
        if a.startswith("-") and a != "-":
            if a in valued:
                skip = True
            continue
        out.append(a)
    return out


def has_flag(args: Sequence[str], *names: str) -> bool:
    """Whether any of ``names`` is present; single-letter ``-x`` also matches inside ``-xyz`` bundles.

    Long options match exactly or as ``--name=value``.
    """
    for a in args:
        if a == "--":
            break
        for n in names:
            if a == n or (n.startswith("--") and a.startswith(n + "=")):
                return True
            short = len(n) == 2 and n[0] == "-" and n[1] != "-"
            if short and a.startswith("-") and not a.startswith("--") and n[1] in a[1:] and a[1:].isalpha():
                return True
    return False


def flag_value(args: Sequence[str], *names: str) -> str | None:
    """The value of the first option in ``names`` (``-o X``, ``-oX``, ``--out X`` or ``--out=X``)."""
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                return args[i + 1]
            if n.startswith("--") and a.startswith(n + "="):
                return a[len(n) + 1 :]
            if len(n) == 2 and not n.startswith("--") and a.startswith(n) and len(a) > 2:
                return a[2:]
    return None


SYSTEM_PREFIXES = (
    "/etc",
    "/boot",
    "/dev",
    "/usr",
    "/lib",
    "/lib64",
    "/bin",
    "/sbin",
    "/var/lib",
    "/sys",
    "/proc",
)
HARMLESS_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/")


def is_system_path(path: str) -> bool:
    """Whether ``path`` is the root or lies under a directory the OS needs (``/etc``, ``/boot`` …)."""
    p = path.strip()
    while "//" in p:
        p = p.replace("//", "/")
    if p.startswith("/") and not p.startswith(HARMLESS_DEVICES):
        p = posixpath.normpath(p)  # `/./etc/passwd` and `/tmp/../etc/passwd` are /etc/passwd
    if p.rstrip("/") in ("", "/*", ".") and p.startswith("/"):
        return True
    if p in ("/", "/*", "~", "~/", "$HOME", "${HOME}"):
        return True
    if p.startswith(HARMLESS_DEVICES):
        return False
    return any(p == pre or p.startswith(pre + "/") for pre in SYSTEM_PREFIXES)


def is_harmless_sink(path: str) -> bool:
    """Whether writing to ``path`` discards or displays data (``/dev/null``, ``/dev/stderr`` …)."""
    return path.startswith(HARMLESS_DEVICES)


def write_target_verdict(path: str, what: str, key: str) -> Verdict:
    """The verdict for writing to ``path``: harmless sinks are read-only, system paths destructive."""
    if is_harmless_sink(path):
        return ro(f"{what}: writes only to {path}", key)
    if path.startswith("/dev/"):
        return destr(f"{what}: writes raw data to device {path}", key)
    if is_system_path(path):
        return destr(f"{what}: overwrites system path {path}", key)
    return mut(f"{what}: writes file {path}", key)


def simple_table(
    name: str,
    sub: str,
    read_only: Iterable[str],
    mutating: Iterable[str],
    destructive: Iterable[str],
    key: str,
) -> Verdict:
    """Look ``sub`` up in three sets of subcommands; anything else is ``unknown``."""
    if sub in set(destructive):
        return destr(f"{name} {sub}", f"{key}.{sub}")
    if sub in set(mutating):
        return mut(f"{name} {sub}", f"{key}.{sub}")
    if sub in set(read_only):
        return ro(f"{name} {sub}", f"{key}.{sub}")
    return unk(f"{name} {sub or '(no subcommand)'}: not a subcommand this classifier knows", key)
