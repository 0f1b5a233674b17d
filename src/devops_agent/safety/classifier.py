"""Classify a proposed shell command as ``read_only``, ``mutating``, ``destructive`` or ``unknown``.

The command is parsed with bashlex (a real bash parser) and every simple command in the tree is
judged: parts of pipelines and lists, subshells and brace groups, ``$(…)`` and backticks,
process substitutions, loop bodies, functions, here-documents fed to shells, and the strings
given to ``sh -c``/``eval``/``ssh`` (parsed again, recursively). Redirections that write are
judged like writes. Per-program knowledge lives in :mod:`devops_agent.safety.commands`.

The overall level is the most severe part (``destructive`` > ``unknown`` > ``mutating`` >
``read_only``). :func:`classify` never raises: input that cannot be parsed is ``unknown`` with
``parse_error`` set. This module must not execute anything, and must not import from ``cli/`` or
``agent/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import bashlex

from devops_agent.safety.commands import classify_argv, program_name
from devops_agent.safety.commands.base import (
    LEVEL_RANK,
    Level,
    Verdict,
    destr,
    ro,
    unk,
    worst,
    write_target_verdict,
)

MAX_LENGTH = 20_000
MAX_DEPTH = 8

_REMOTE_SOURCES = frozenset({"curl", "wget", "fetch", "nc", "ncat", "socat", "aws", "gsutil", "scp", "http"})
_DECODERS = frozenset(
    {"base64", "base32", "xxd", "openssl", "gpg", "rev", "tr", "gunzip", "zcat", "uudecode"}
)
_LITERAL_SOURCES = frozenset({"echo", "printf"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})


@dataclass(frozen=True)
class CommandResult:
    """One simple command found in the input: its argv (unquoted), level, reason and nesting depth.

    ``depth`` is 0 for commands written at the top level and grows inside ``sh -c``, ``sudo``,
    ``xargs``, ``ssh`` and the like (the wrapper itself is listed too, at the outer depth).
    """

    argv: list[str]
    level: Level
    reason: str
    key: str = ""
    depth: int = 0
    writes: tuple[str, ...] = ()
    """Targets of its write redirections (``> FILE``) that are not harmless sinks like ``/dev/null``."""


@dataclass(frozen=True)
class Classification:
    """The verdict for a whole command line."""

    command: str
    level: Level
    reasons: list[str]
    commands: list[CommandResult] = field(default_factory=list)
    needs_shell: bool = False
    argv: list[str] | None = None
    parse_error: str | None = None

    @property
    def keys(self) -> list[str]:
        """The ``family.action`` keys of the parts at the overall level (used for impact texts)."""
        return [c.key for c in self.commands if c.level == self.level and c.key]


def classify(command: str) -> Classification:
    """Classify ``command``; never raises (unparseable input is ``unknown`` with ``parse_error``)."""
    try:
        return _classify(command)
    except Exception as exc:  # noqa: BLE001 - the contract is "never raises"; anything odd is unknown
        return _unparsed(command, f"classifier failed: {type(exc).__name__}: {exc}")


def _unparsed(command: str, error: str) -> Classification:
    return Classification(command, "unknown", [f"cannot be parsed: {error}"], [], True, None, error)


def _classify(command: str) -> Classification:
    if not isinstance(command, str):
        return _unparsed(repr(command), "not a string")
    if not command.strip():
        return _unparsed(command, "empty command")
    if len(command) > MAX_LENGTH:
        return _unparsed(command, f"longer than {MAX_LENGTH} characters")
    if "\x00" in command:
        return _unparsed(command, "contains a NUL byte")
    hazard = _bashlex_hazard(command)
    if hazard:
        return _unparsed(command, hazard)
    try:
        trees = bashlex.parse(command)
    except Exception as exc:  # noqa: BLE001 - bashlex raises several types, incl. NotImplementedError
        return _unparsed(command, f"{type(exc).__name__}: {exc}")
    walker = _Walker(command, depth=0, results=[], features=set())
    verdicts = [v for t in trees if (v := walker.walk(t)) is not None]
    verdicts.extend(walker.extra)
    top = worst(verdicts) or unk("nothing to run", "unknown")
    level = top.level
    reasons = _reasons([r for r in walker.results if r.depth == 0], walker.extra, level)
    needs_shell = bool(walker.features)
    argv: list[str] | None = None
    top_level = [r for r in walker.results if r.depth == 0]
    if not needs_shell and len(trees) == 1 and len(top_level) == 1:
        argv = list(top_level[0].argv)
    return Classification(command, level, reasons, walker.results, needs_shell, argv, None)


def _reasons(results: list[CommandResult], extra: list[Verdict], level: Level) -> list[str]:
    ordered = sorted(
        [(r.level, r.reason) for r in results] + [(v.level, v.reason) for v in extra],
        key=lambda lr: -LEVEL_RANK[lr[0]],
    )
    out: list[str] = []
    for lvl, reason in ordered:
        if (lvl == level or (lvl != "read_only" and level != "read_only")) and reason not in out:
            out.append(reason)
    return out


@dataclass
class _Walker:
    source: str
    depth: int
    results: list[CommandResult]
    features: set[str]
    extra: list[Verdict] = field(default_factory=list)
    functions: set[str] = field(default_factory=set)
    last_heredoc: str | None = None

    # -- nested shell text (sh -c, eval, ssh, heredoc, echo … | sh) ------------------------------
    def recurse(self, text: str) -> Verdict:
        if self.depth + 1 > MAX_DEPTH:
            return unk("nested too deeply to judge", "unknown")
        if not text.strip():
            return ro("empty nested command", "readonly")
        if hazard := _bashlex_hazard(text):
            return unk(f"nested command cannot be parsed ({hazard})", "unknown")
        try:
            trees = bashlex.parse(text)
        except Exception as exc:  # noqa: BLE001 - see _classify
            return unk(f"nested command cannot be parsed ({type(exc).__name__})", "unknown")
        inner = _Walker(text, self.depth + 1, self.results, set(), functions=set(self.functions))
        verdicts = [v for t in trees if (v := inner.walk(t)) is not None] + inner.extra
        return worst(verdicts) or ro("empty nested command", "readonly")

    # -- tree walk -------------------------------------------------------------------------------
    def walk(self, node: Any) -> Verdict | None:
        kind = getattr(node, "kind", "")
        if kind == "command":
            return self.command(node, upstream=[])
        if kind == "pipeline":
            return self.pipeline(node)
        if kind == "list":
            self.features.add("list")
            return worst(v for p in node.parts if (v := self.walk(p)) is not None)
        if kind == "compound":
            self.features.add("compound")
            vs = [v for p in node.list if (v := self.walk(p)) is not None]
            vs += [v for r in getattr(node, "redirects", []) if (v := self.redirect(r)) is not None]
            return worst(vs)
        if kind in ("if", "for", "while", "until"):
            self.features.add("compound")
            vs = []
            for p in node.parts:
                v = self.word(p) if getattr(p, "kind", "") == "word" else self.walk(p)
                if v is not None:
                    vs.append(v)
            return worst(vs)
        if kind == "function":
            return self.function(node)
        if kind in ("operator", "reservedword", "pipe"):
            if kind == "operator" and node.op == "&":
                self.features.add("background")
            return None
        self.features.add(kind or "unknown-node")
        return unk(f"shell construct {kind!r} this classifier does not judge", "unknown")

    def pipeline(self, node: Any) -> Verdict | None:
        self.features.add("pipe")
        upstream: list[list[str]] = []
        vs: list[Verdict] = []
        v: Verdict | None
        self.last_heredoc = None
        for p in node.parts:
            if getattr(p, "kind", "") == "pipe":
                continue
            if p.kind == "command":
                fed = self.last_heredoc if len(upstream) == 1 and upstream[0][0] == "cat" else None
                v = self.command(p, upstream, fed)
                argv = [self.text(w) for w in p.parts if w.kind == "word"]
                if argv:
                    upstream.append(argv)
            else:
                v = self.walk(p)
                upstream.append(["<compound>"])
            if v is not None:
                vs.append(v)
        return worst(vs)

    def function(self, node: Any) -> Verdict:
        self.features.add("function")
        name = self.text(node.name)
        self.functions.add(name)
        calls = _command_names(node.body)
        body = self.walk(node.body)
        if name in calls:
            v = destr(f"function {name!r} calls itself in the background or a pipe: fork bomb", "forkbomb")
            self.extra.append(v)
            return v
        return body or ro(f"defines function {name!r}", "readonly")

    def command(self, node: Any, upstream: list[list[str]], fed: str | None = None) -> Verdict:
        words: list[Any] = []
        vs: list[Verdict] = []
        heredoc: str | None = None
        writes: list[str] = []
        for p in node.parts:
            if p.kind == "word":
                words.append(p)
                if (v := self.word(p)) is not None:
                    vs.append(v)
            elif p.kind == "assignment":
                self.features.add("assignment")
                if (v := self.word(p)) is not None:
                    vs.append(v)
            elif p.kind == "redirect":
                if getattr(p, "heredoc", None) is not None:
                    heredoc = _heredoc_body(p.heredoc.value)
                if (v := self.redirect(p)) is not None:
                    vs.append(v)
                    if v.key == "redirect.write" and v.level != "read_only":
                        writes.append(self.text(p.output))
        if not words:
            own = ro("variable assignment or redirection only", "readonly")
            self._record([], worst([own, *vs]) or own, writes=writes)
            return worst([own, *vs]) or own
        argv = [self.text(w) for w in words]
        self.last_heredoc = heredoc
        index = len(self.results)
        if _is_dynamic(words[0]):
            own = unk(f"command name {argv[0]!r} comes from an expansion: cannot tell what runs", "dynamic")
        elif argv[0] in self.functions:
            own = ro(f"calls shell function {argv[0]!r} (its body is judged where defined)", "readonly")
        else:
            own = classify_argv(argv, self.recurse)
        fetched = {program_name(n) for w in words for n in _command_names(w)} & _REMOTE_SOURCES
        if fetched and own.key in ("dynamic", "shell.script", "interpreter"):
            own = destr(f"runs code downloaded by {sorted(fetched)[0]} at run time", "pipe.remote_code")
        if own.key == "shell.stdin":
            own = self.stdin_program(argv, own, upstream if fed is None else [], heredoc or fed)
        final = worst([own, *vs]) or own
        self._record(argv, final, index, writes)
        return final

    def _record(
        self, argv: list[str], v: Verdict, index: int | None = None, writes: list[str] | None = None
    ) -> None:
        r = CommandResult(argv, v.level, v.reason, v.key, self.depth, tuple(writes or ()))
        self.results.insert(len(self.results) if index is None else index, r)

    def stdin_program(
        self, argv: list[str], own: Verdict, upstream: list[list[str]], heredoc: str | None
    ) -> Verdict:
        """An interpreter reading its program from stdin: judge what is fed to it."""
        name = program_name(argv[0])
        is_shell = own.reason.startswith(tuple(f"{s}:" for s in ("sh", "bash", "zsh", "dash", "ksh", "ash")))
        if heredoc is not None:
            if is_shell:
                v = self.recurse(heredoc)
                return Verdict(v.level, f"{name} here-document → {v.reason}", v.key)
            return unk(f"{name} runs a here-document program", "interpreter")
        names = {program_name(a[0]) for a in upstream if a}
        if names & _REMOTE_SOURCES:
            return destr(
                f"pipes code downloaded from the network into {name}: runs arbitrary remote code",
                "pipe.remote_code",
            )
        if names & _DECODERS:
            return destr(f"decodes a hidden payload and pipes it into {name}", "pipe.obfuscated")
        if is_shell and len(upstream) == 1 and program_name(upstream[0][0]) in _LITERAL_SOURCES:
            text = " ".join(a for a in upstream[0][1:] if not a.startswith("-"))
            v = self.recurse(text.replace("\\n", "\n"))
            return Verdict(v.level, f"{name} ← {upstream[0][0]} → {v.reason}", v.key)
        if not upstream:
            return own
        return unk(f"{name} runs commands read from a pipe", "shell.stdin")

    def word(self, node: Any) -> Verdict | None:
        """Walk expansions inside a word; command substitutions run, so they are judged."""
        vs: list[Verdict] = []
        for part in getattr(node, "parts", []):
            k = part.kind
            if k in ("commandsubstitution", "processsubstitution"):
                self.features.add("substitution")
                if (v := self.walk(part.command)) is not None:
                    vs.append(v)
            elif k in ("parameter", "tilde"):
                self.features.add("expansion")
            elif k == "word" and (v := self.word(part)) is not None:
                vs.append(v)
        if node.kind == "word" and _has_glob(self.raw(node)):
            self.features.add("glob")
        return worst(vs)

    def redirect(self, node: Any) -> Verdict | None:
        self.features.add("redirect")
        rtype = node.type
        out = node.output
        if getattr(node, "heredoc", None) is not None or rtype in ("<<", "<<-"):
            self.features.add("heredoc")
            return None
        if not hasattr(out, "kind"):
            return None  # fd duplication such as 2>&1
        inner = self.word(out)
        if rtype not in _WRITE_REDIRECTS:
            return inner
        if _is_dynamic(out):
            return worst(
                [
                    unk(f"redirect {rtype} to a path from an expansion", "redirect.write"),
                    *([inner] if inner else []),
                ]
            )
        return worst(
            [
                write_target_verdict(self.text(out), f"redirect {rtype}", "redirect.write"),
                *([inner] if inner else []),
            ]
        )

    # -- words -----------------------------------------------------------------------------------
    def raw(self, node: Any) -> str:
        start, end = node.pos
        return str(self.source[start:end])

    def text(self, node: Any) -> str:
        return unquote(self.raw(node))


def _command_names(node: Any) -> set[str]:
    names: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if getattr(n, "kind", "") == "command":
            ws = [p for p in n.parts if p.kind == "word"]
            if ws:
                names.add(ws[0].word)
        for attr in ("parts", "list"):
            stack.extend(getattr(n, attr, []) or [])
        for attr in ("command", "body", "heredoc"):
            child = getattr(n, attr, None)
            if child is not None and hasattr(child, "kind"):
                stack.append(child)
    return names


def _bashlex_hazard(text: str) -> str | None:
    """Input that sends bashlex 0.18 into an endless loop: a single-quoted ``${`` left unclosed
    inside the quotes (``echo '${'k``). Found by the fuzz test; refused before parsing."""
    quote = ""
    start = 0
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif quote == "'":
            if ch == "'":
                segment = text[start:i]
                last = segment.rfind("${")
                if last >= 0 and "}" not in segment[last:]:
                    return "single-quoted '${' without '}' (unsupported by the parser)"
                quote = ""
        elif ch == "\\":
            escaped = True
        elif quote == '"':
            if ch == '"':
                quote = ""
        elif ch in "'\"":
            quote = ch
            start = i + 1
    return None


def _heredoc_body(value: str) -> str:
    lines = value.split("\n")
    return "\n".join(lines[:-1]) if len(lines) > 1 else value


def _is_dynamic(word: Any) -> bool:
    # bashlex reports $'…' (ANSI-C quoting) as a parameter with an empty value; it is a literal.
    return any(
        p.kind in ("commandsubstitution", "processsubstitution") or (p.kind == "parameter" and p.value)
        for p in word.parts
    )


def _has_glob(raw: str) -> bool:
    quote = ""
    escaped = False
    for ch in raw:
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "*?[{":
            return True
    return False


_ANSI = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def unquote(raw: str) -> str:
    """Remove shell quoting the way bash does.

    ``r\\m``, ``"rm"``, ``'r''m'`` and ``$'\\x72m'`` all give ``rm``.
    """
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        ch = raw[i]
        if ch == "\\" and i + 1 < n:
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
        elif ch == "'":
            j = raw.find("'", i + 1)
            j = n if j < 0 else j
            out.append(raw[i + 1 : j])
            i = j + 1
        elif ch == "$" and raw[i + 1 : i + 2] == "'":
            i = _ansi_c(raw, i + 2, out)
        elif ch == '"' or (ch == "$" and raw[i + 1 : i + 2] == '"'):
            i += 1 if ch == '"' else 2
            while i < n and raw[i] != '"':
                if raw[i] == "\\" and i + 1 < n and raw[i + 1] in '"\\$`\n':
                    if raw[i + 1] != "\n":
                        out.append(raw[i + 1])
                    i += 2
                else:
                    out.append(raw[i])
                    i += 1
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _ansi_c(raw: str, i: int, out: list[str]) -> int:
    n = len(raw)
    while i < n and raw[i] != "'":
        if raw[i] == "\\" and i + 1 < n:
            c = raw[i + 1]
            if c == "x":
                digits = "".join(raw[i + 2 : i + 4])
                hexpart = "".join(d for d in digits if d in "0123456789abcdefABCDEF")
                if hexpart:
                    out.append(chr(int(hexpart, 16)))
                    i += 2 + len(hexpart)
                    continue
            if c in "01234567":
                octal = ""
                j = i + 1
                while j < n and len(octal) < 3 and raw[j] in "01234567":
                    octal += raw[j]
                    j += 1
                out.append(chr(int(octal, 8)))
                i = j
                continue
            out.append(_ANSI.get(c, "\\" + c))
            i += 2
        else:
            out.append(raw[i])
            i += 1
    return i + 1
