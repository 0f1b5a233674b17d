"""How programs parse their options, so the classifier reads the options a program really sees.

Two families are modelled:

* **GNU getopt_long** (coreutils, sed, tar, wget, systemctl, journalctl, psql …): short options
  may be bundled (``-uo FILE``, ``-fsSLo FILE``) and a value may be attached (``-oFILE``); long
  options take ``--opt=value`` or ``--opt value`` and may be **abbreviated** to any unique prefix
  (``--out`` is ``--output``); options may follow operands (permutation) until ``--``.
  :func:`parse` returns what the program would see, plus what it could not place: unknown
  options, ambiguous prefixes (judged as every candidate, in case a version lacks the others)
  and words that may turn into options at run time (an expansion or a glob that could expand to
  a file named ``--checkpoint-action=…``).
* **Go/cobra** (kubectl, helm, docker, argocd, gh): flags with values swallow the next word
  unless written ``--flag=value``; no abbreviation. :func:`cobra_split` finds the subcommand path
  the way cobra does, and reports an unknown flag before it (it may swallow the next word, so
  the verb read would not be the verb that runs).

Nothing here runs anything or knows what an option does: family modules decide that.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

NONE, REQUIRED, OPTIONAL = 0, 1, 2


@dataclass(frozen=True)
class Spec:
    """A program's options.

    ``short`` is a getopt optstring (``"o:T:k:i::"``: ``:`` takes a value, ``::`` an optional
    attached one). ``long`` lists long options as ``name`` (flag), ``name=`` (value) or
    ``name?`` (optional ``=value``), optionally followed by ``|x`` naming the equivalent short
    option, which is then reported under the long name. ``abbrev``: unique prefixes accepted;
    ``equals``: ``--name=value`` accepted (curl does not); ``permute``: options may follow
    operands.
    """

    short: str = ""
    long: str = ""
    abbrev: bool = True
    equals: bool = True
    permute: bool = True

    def tables(self) -> tuple[dict[str, int], dict[str, int], dict[str, str]]:
        """(short letter → arity, long name → arity, short letter → long name)."""
        shorts: dict[str, int] = {}
        i = 1 if self.short.startswith(("+", "-")) else 0
        while i < len(self.short):
            ch = self.short[i]
            n = 0
            while i + 1 + n < len(self.short) and self.short[i + 1 + n] == ":":
                n += 1
            shorts[ch] = {0: NONE, 1: REQUIRED}.get(n, OPTIONAL)
            i += 1 + n
        longs: dict[str, int] = {}
        alias: dict[str, str] = {}
        for entry in self.long.split():
            name, _, short = entry.partition("|")
            arity = NONE
            if name.endswith("="):
                name, arity = name[:-1], REQUIRED
            elif name.endswith("?"):
                name, arity = name[:-1], OPTIONAL
            longs[name] = arity
            if short:
                alias[short] = name
                shorts.setdefault(short, arity if arity != OPTIONAL else OPTIONAL)
        return shorts, longs, alias


@dataclass
class Parsed:
    """What a GNU-style program sees: its options (canonical name, value) and operands."""

    opts: list[tuple[str, str | None]] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    ambiguous: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    injectable: list[str] = field(default_factory=list)
    """Words in option position whose text is decided at run time (expansions, leading globs)."""

    def names(self) -> set[str]:
        """Every option that is or may be given (ambiguous prefixes count as all candidates)."""
        out = {n for n, _ in self.opts}
        for _, candidates in self.ambiguous:
            out.update(candidates)
        return out

    def has(self, *names: str) -> bool:
        """Whether any of ``names`` (canonical) is or may be given."""
        return bool(self.names() & set(names))

    def value(self, *names: str) -> str | None:
        """The last value given to any of ``names`` (``None`` if absent or given without value)."""
        out: str | None = None
        for n, v in self.opts:
            if n in names and v is not None:
                out = v
        return out

    def values(self, *names: str) -> list[str]:
        """Every value given to any of ``names``, in order."""
        return [v for n, v in self.opts if n in names and v is not None]


def is_runtime_word(word: str) -> bool:
    """Whether the classifier cannot know this word's text: it comes from an expansion that may
    start it, or it is a glob whose match may start with ``-`` (see :class:`Arg`)."""
    return bool(getattr(word, "starts_dynamic", False) or getattr(word, "leading_glob", False))


def parse(args: Sequence[str], spec: Spec) -> Parsed:
    """Parse ``args`` (without the program name) the way getopt_long with ``spec`` does."""
    shorts, longs, alias = spec.tables()
    out = Parsed()
    i = 0
    n = len(args)
    while i < n:
        a = args[i]
        if a == "--":
            out.operands.extend(args[i + 1 :])
            break
        if is_runtime_word(a):
            out.injectable.append(a)
            out.operands.append(a)
            i += 1
            if not spec.permute or spec.short.startswith("+"):
                out.operands.extend(args[i:])
                break
            continue
        if a.startswith("--") and len(a) > 2:
            i = _long(args, i, spec, longs, out)
            continue
        if a.startswith("-") and len(a) > 1:
            i = _short(args, i, shorts, alias, out)
            continue
        out.operands.append(a)
        i += 1
        if not spec.permute or spec.short.startswith("+"):
            out.operands.extend(args[i:])
            break
    return out


def _long(args: Sequence[str], i: int, spec: Spec, longs: dict[str, int], out: Parsed) -> int:
    word = args[i]
    body = word[2:]
    name, eq, value = body.partition("=") if spec.equals else (body, "", "")
    has_value = bool(eq)
    if name in longs:
        candidates: tuple[str, ...] = (name,)
    elif spec.abbrev:
        candidates = tuple(sorted(k for k in longs if k.startswith(name)))
    else:
        candidates = ()
    if not candidates:
        out.unknown.append(word)
        return i + 1
    if len(candidates) > 1:
        out.ambiguous.append((word, candidates))
        # Any candidate taking a value would take the next word; assume the worst reading.
        takes = any(longs[c] == REQUIRED for c in candidates)
        return i + (2 if takes and not has_value and i + 1 < len(args) else 1)
    canon = candidates[0]
    arity = longs[canon]
    if arity == NONE:
        out.opts.append((canon, value if has_value else None))
        return i + 1
    if has_value:
        out.opts.append((canon, value))
        return i + 1
    if arity == REQUIRED:
        if i + 1 < len(args):
            out.opts.append((canon, args[i + 1]))
            return i + 2
        out.opts.append((canon, None))
        return i + 1
    out.opts.append((canon, None))
    return i + 1


def _short(args: Sequence[str], i: int, shorts: dict[str, int], alias: dict[str, str], out: Parsed) -> int:
    word = args[i]
    j = 1
    while j < len(word):
        ch = word[j]
        canon = alias.get(ch, "-" + ch)
        if ch not in shorts:
            out.unknown.append("-" + ch)
            j += 1
            continue
        arity = shorts[ch]
        rest = word[j + 1 :]
        if arity == NONE:
            out.opts.append((canon, None))
            j += 1
            continue
        if rest:
            out.opts.append((canon, rest))
            return i + 1
        if arity == REQUIRED and i + 1 < len(args):
            out.opts.append((canon, args[i + 1]))
            return i + 2
        out.opts.append((canon, None))
        return i + 1
    return i + 1


def prefix_of(word: str, names: Iterable[str]) -> bool:
    """Whether ``--word`` (``=value`` ignored) abbreviates or equals any of the long ``names``."""
    body = word[2:].split("=", 1)[0] if word.startswith("--") else ""
    return bool(body) and any(n.startswith(body) for n in names)


@dataclass(frozen=True)
class CobraFlags:
    """The flags a cobra command knows: those taking a value and the boolean ones."""

    valued: frozenset[str]
    boolean: frozenset[str] = frozenset()

    @staticmethod
    def of(valued: str, boolean: str = "") -> CobraFlags:
        """From space-separated flag lists (``"-n --namespace --context"``)."""
        return CobraFlags(frozenset(valued.split()), frozenset(boolean.split()))

    def __or__(self, other: CobraFlags) -> CobraFlags:
        return CobraFlags(self.valued | other.valued, self.boolean | other.boolean)


@dataclass
class CobraArgs:
    """Positionals, flags (``(name, value)``) and flags this table does not know, in order."""

    positionals: list[str] = field(default_factory=list)
    flags: list[tuple[str, str | None]] = field(default_factory=list)
    blind: list[tuple[int, str]] = field(default_factory=list)
    """``(number of positionals seen before it, flag)``: unknown flags that may swallow the next word."""

    def flag(self, *names: str) -> str | None:
        """The value of the last of ``names`` given (``""`` for a boolean flag), else ``None``."""
        out: str | None = None
        for n, v in self.flags:
            if n in names:
                out = "" if v is None else v
        return out

    def has(self, *names: str) -> bool:
        """Whether any of ``names`` is given."""
        return any(n in names for n, _ in self.flags)

    def blind_before(self, position: int) -> str | None:
        """An unknown flag seen before positional number ``position`` (0-based), if any."""
        return next((f for seen, f in self.blind if seen <= position), None)


def cobra_split(args: Sequence[str], flags: CobraFlags) -> CobraArgs:
    """Split ``args`` like cobra/pflag: known valued flags take the next word (``--f v``, ``-f v``)
    or an attached one (``--f=v``, ``-fv``, ``-f=v``); boolean shorthands may be bundled."""
    out = CobraArgs()
    i = 0
    n = len(args)
    while i < n:
        a = args[i]
        if a == "--":
            out.positionals.extend(args[i + 1 :])
            break
        if a.startswith("--") and len(a) > 2:
            name, eq, value = a.partition("=")
            if eq:
                out.flags.append((name, value))
                if name not in flags.valued and name not in flags.boolean:
                    pass  # self-contained: cobra does not swallow the next word
            elif name in flags.valued:
                out.flags.append((name, args[i + 1] if i + 1 < n else None))
                i += 1
            elif name in flags.boolean:
                out.flags.append((name, None))
            else:
                out.flags.append((name, None))
                out.blind.append((len(out.positionals), name))
            i += 1
            continue
        if a.startswith("-") and len(a) > 1 and not is_runtime_word(a):
            name = a[:2]
            if len(a) == 2:
                if name in flags.valued:
                    out.flags.append((name, args[i + 1] if i + 1 < n else None))
                    i += 2
                    continue
                out.flags.append((name, None))
                if name not in flags.boolean:
                    out.blind.append((len(out.positionals), name))
                i += 1
                continue
            # -nVALUE / -n=VALUE, or a bundle of boolean shorthands (-it)
            j = 1
            while j < len(a):
                short = "-" + a[j]
                if short in flags.valued:
                    value = a[j + 1 :]
                    out.flags.append((short, value[1:] if value.startswith("=") else value))
                    break
                out.flags.append((short, None))
                j += 1
            i += 1
            continue
        out.positionals.append(a)
        i += 1
    return out


def cobra_path(
    args: Sequence[str], persistent: CobraFlags, levels: int = 2
) -> tuple[list[str], str | None, int, int]:
    """The first ``levels`` subcommand words as cobra finds them, knowing only ``persistent`` flags.

    Returns ``(words, blind, blind_at, end)``: ``blind`` is the first flag before a subcommand
    word that the table does not know (cobra would take the next word as its value, so the words
    after it cannot be trusted), ``blind_at`` how many words were found before it (``-1`` if
    none) and ``end`` the index in ``args`` after the last word found.
    """
    words: list[str] = []
    i = 0
    n = len(args)
    while i < n and len(words) < levels:
        a = args[i]
        if a == "--":
            take = levels - len(words)
            words.extend(args[i + 1 : i + 1 + take])
            i += 1 + min(take, len(args) - i - 1)
            break
        if a.startswith("-") and len(a) > 1:
            name, eq, _ = a.partition("=")
            if is_runtime_word(a):
                return words, a, len(words), i
            if eq:
                i += 1
                continue
            if len(a) > 2 and not a.startswith("--"):
                short = a[:2]
                if short in persistent.valued or all(("-" + c) in persistent.boolean for c in a[1:]):
                    i += 1
                    continue
                return words, a, len(words), i
            if name in persistent.valued:
                i += 2
                continue
            if name in persistent.boolean:
                i += 1
                continue
            return words, a, len(words), i
        if is_runtime_word(a):
            return words, a, len(words), i
        words.append(a)
        i += 1
    return words, None, -1, i
