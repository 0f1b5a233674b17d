"""Walk a bashlex tree and judge every simple command in it (see :mod:`devops_agent.safety.classifier`).

Per simple command, in order: the expansions in its words run first (``$(…)`` is judged; a
``${…}`` that bash would evaluate as code is ``unknown``), brace expansion is performed, the
environment assignments in front of it are judged (:mod:`~devops_agent.safety.commands.envvars`),
the program is resolved by path (:mod:`~devops_agent.safety.resolve`), the family handler
judges the argv, and words whose text is decided at run time may make it an exfiltration
(:mod:`~devops_agent.safety.commands.exfil`). Must not execute anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import bashlex

from devops_agent.safety.commands import classify_argv, exfil, program_name, shell_builtins
from devops_agent.safety.commands.base import (
    Arg,
    Level,
    Verdict,
    destr,
    ro,
    unk,
    worst,
    write_target_verdict,
)
from devops_agent.safety.commands.envvars import judge_env
from devops_agent.safety.resolve import Resolver, check_program
from devops_agent.safety.shellwords import (
    brace_expand,
    has_glob,
    leading_glob,
    nested_commands,
    parameter_risk,
    preprocess,
    unquote,
)

MAX_DEPTH = 8

_REMOTE_SOURCES = frozenset({"curl", "wget", "fetch", "nc", "ncat", "socat", "aws", "gsutil", "scp", "http"})
_DECODERS = frozenset(
    {"base64", "base32", "xxd", "openssl", "gpg", "rev", "tr", "gunzip", "zcat", "uudecode"}
)
_LITERAL_SOURCES = frozenset({"echo", "printf"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_SHELLS = ("sh", "bash", "zsh", "dash", "ksh", "ash")


@dataclass(frozen=True)
class Result:
    """One simple command: argv, level, reason, key, nesting depth and write-redirect targets."""

    argv: list[str]
    level: Level
    reason: str
    key: str
    depth: int
    writes: tuple[str, ...]


@dataclass
class Context:
    """What every walker of one classification shares."""

    resolver: Resolver | None
    trusted: Sequence[str]
    results: list[Result] = field(default_factory=list)


def parse(text: str) -> list[Any]:
    """bashlex trees for ``text`` (after :func:`~devops_agent.safety.shellwords.preprocess`)."""
    return list(bashlex.parse(preprocess(text)))


def literal_vars(trees: Sequence[Any], source: str) -> dict[str, list[str] | None]:
    """Variables the script assigns: name → every literal value it may take, or ``None`` when an
    assignment is not a plain literal (a substitution, ``read``, a loop over globs …)."""
    found: dict[str, list[str] | None] = {}

    def note(name: str, value: str | None) -> None:
        if value is None or found.get(name, []) is None:
            found[name] = None
        else:
            found.setdefault(name, []).append(value)  # type: ignore[union-attr]

    stack = list(trees)
    while stack:
        n = stack.pop()
        kind = getattr(n, "kind", "")
        if kind == "command":
            parts = list(n.parts)
            words = [p for p in parts if p.kind == "word"]
            for p in parts:
                if p.kind == "assignment" and not words:
                    name, _, _ = p.word.partition("=")
                    raw = source[p.pos[0] : p.pos[1]]
                    value = unquote(raw.partition("=")[2])
                    note(name.rstrip("+"), None if _dynamic_parts(p) or name.endswith("+") else value)
            if words:
                for name in shell_builtins.assigned_names([w.word for w in words]):
                    note(name, None)
        elif kind == "for":
            ws = [p for p in n.parts if getattr(p, "kind", "") == "word"]
            if ws:
                name = ws[0].word
                values = ws[1:]
                for w in values:
                    raw = source[w.pos[0] : w.pos[1]]
                    literal = not _dynamic_parts(w) and not has_glob(raw)
                    note(name, unquote(raw) if literal else None)
                if not values:
                    note(name, None)
        for attr in ("parts", "list"):
            stack.extend(getattr(n, attr, []) or [])
        for attr in ("command", "body"):
            child = getattr(n, attr, None)
            if child is not None and hasattr(child, "kind"):
                stack.append(child)
    return found


def _dynamic_parts(node: Any) -> bool:
    return any(
        p.kind in ("commandsubstitution", "processsubstitution") or (p.kind == "parameter" and p.value)
        for p in getattr(node, "parts", [])
    )


@dataclass
class Walker:
    """Judges the simple commands of one shell text (``depth`` grows with nesting)."""

    source: str
    depth: int
    ctx: Context
    known: dict[str, list[str] | None]
    features: set[str] = field(default_factory=set)
    extra: list[Verdict] = field(default_factory=list)
    functions: set[str] = field(default_factory=set)
    last_heredoc: str | None = None

    # -- nested shell text (sh -c, eval, ssh, heredoc, echo … | sh) ------------------------------
    def recurse(self, text: str) -> Verdict:
        """Judge ``text`` as a nested command line (one level deeper)."""
        if self.depth + 1 > MAX_DEPTH:
            return unk("nested too deeply to judge", "unknown")
        if not text.strip():
            return ro("empty nested command", "readonly")
        if hazard := bashlex_hazard(text):
            return unk(f"nested command cannot be parsed ({hazard})", "unknown")
        try:
            trees = parse(text)
        except Exception as exc:  # noqa: BLE001 - bashlex raises several types, incl. NotImplementedError
            return unk(f"nested command cannot be parsed ({type(exc).__name__})", "unknown")
        source = preprocess(text)
        known = {**self.known, **literal_vars(trees, source)}
        inner = Walker(source, self.depth + 1, self.ctx, known, functions=set(self.functions))
        verdicts = [v for t in trees if (v := inner.walk(t)) is not None] + inner.extra
        return worst(verdicts) or ro("empty nested command", "readonly")

    # -- tree walk -------------------------------------------------------------------------------
    def walk(self, node: Any) -> Verdict | None:
        """The verdict of any bashlex node (``None`` for separators)."""
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
            if getattr(p, "kind", "") in ("pipe", "reservedword"):
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
        calls = _command_names(node.body)
        body = self.walk(node.body)
        # Only after the body: inside it, `command git` and `builtin cd` bypass a function of that name.
        self.functions.add(name)
        if name in calls:
            v = destr(f"function {name!r} calls itself in the background or a pipe: fork bomb", "forkbomb")
            self.extra.append(v)
            return v
        return body or ro(f"defines function {name!r}", "readonly")

    def command(self, node: Any, upstream: list[list[str]], fed: str | None = None) -> Verdict:
        words: list[Any] = []
        assignments: list[Any] = []
        vs: list[Verdict] = []
        heredoc: str | None = None
        stdin: str | None = None
        writes: list[str] = []
        for p in node.parts:
            if p.kind == "word":
                words.append(p)
                if (v := self.word(p)) is not None:
                    vs.append(v)
            elif p.kind == "assignment":
                self.features.add("assignment")
                assignments.append(p)
                if (v := self.word(p)) is not None:
                    vs.append(v)
            elif p.kind == "redirect":
                if getattr(p, "heredoc", None) is not None:
                    heredoc = _heredoc_body(p.heredoc.value)
                stdin = self.stdin_source(p) or stdin
                if (v := self.redirect(p)) is not None:
                    vs.append(v)
                    if v.key in ("redirect.write", "exfiltration") and v.level != "read_only":
                        writes.append(self.text(p.output))
        exported = bool(words)
        program = self.text(words[0]) if words else ""
        for a in assignments:
            name, _, _ = a.word.partition("=")
            value = unquote(self.raw(a).partition("=")[2])
            if name == "IFS" and program in ("read", "mapfile", "readarray"):
                continue  # `IFS= read -r line` only changes how read splits its input
            vs.append(judge_env(name.rstrip("+"), value, self.is_unknown(a), self.recurse, exported=exported))
        if not words:
            own = ro("variable assignment or redirection only", "readonly")
            final = worst([own, *vs]) or own
            self._record([], final, writes=writes)
            return final
        index = len(self.ctx.results)
        argv, problem = self.expand(words)
        self.last_heredoc = heredoc
        if problem is not None:
            own = problem
        else:
            own = self.judge_argv(argv)
            fetched = {program_name(n) for w in words for n in _command_names(w)} & _REMOTE_SOURCES
            if fetched and own.key in ("dynamic", "shell.script", "interpreter"):
                own = destr(f"runs code downloaded by {sorted(fetched)[0]} at run time", "pipe.remote_code")
            if own.key == "shell.stdin":
                own = self.stdin_program(argv, own, upstream if fed is None else [], heredoc or fed)
            if (leak := exfil.stdin_leak(argv, stdin, bool(upstream))) is not None:
                vs.append(leak)
        final = worst([own, *vs]) or own
        self._record([str(a) for a in argv], final, index, writes)
        return final

    def expand(self, words: list[Any]) -> tuple[list[Arg], Verdict | None]:
        """The argv bash runs (brace expansion done), or a verdict saying why it cannot be known."""
        argv: list[Arg] = []
        for w in words:
            raw = self.raw(w)
            expanded = brace_expand(raw) if has_glob(raw) and "{" in raw else [raw]
            if expanded is None:
                return argv, unk("brace expansion too large to judge", "expansion")
            unknown = self.is_unknown(w)
            starts = unknown and _starts_with_expansion(w, raw)
            for r in expanded:
                text = self.known_text(w, raw) if r == raw else unquote(r)
                argv.append(
                    Arg(text, r, dynamic=unknown, starts_dynamic=starts, leading_glob=leading_glob(r))
                )
        if not argv:
            return argv, ro("empty after expansion", "readonly")
        return argv, None

    def judge_argv(self, argv: list[Arg]) -> Verdict:
        """The verdict on one expanded argv: program resolution, family handler, exfiltration."""
        first = argv[0]
        if first.dynamic:
            return unk(
                f"command name {first.raw!r} comes from an expansion: cannot tell what runs", "dynamic"
            )
        word = str(first)
        if word in ("command", "builtin") and len(argv) > 1 and not str(argv[1]).startswith("-"):
            # `command NAME`/`builtin NAME` skip shell functions (and aliases) of that name.
            saved, self.functions = self.functions, set()
            try:
                v = self.judge_argv(list(argv[1:]))
            finally:
                self.functions = saved
            return Verdict(v.level, f"{word} → {v.reason}", v.key)
        if word in self.functions:
            return ro(f"calls shell function {word!r} (its body is judged where defined)", "readonly")
        if "/" not in word and word in shell_builtins.NAMES:
            name, problem = word, None
        else:
            name, problem = check_program(word, self.ctx.resolver, self.ctx.trusted)
        if problem is not None:
            return unk(problem, "program.path")
        inner = [Arg(name, name), *argv[1:]]
        own = classify_argv(inner, self.recurse)
        leak = exfil.verdict(program_name(name), inner)
        if leak is None:
            return own
        return worst([own, leak]) or own

    def _record(
        self, argv: list[str], v: Verdict, index: int | None = None, writes: list[str] | None = None
    ) -> None:
        r = Result(argv, v.level, v.reason, v.key, self.depth, tuple(writes or ()))
        self.ctx.results.insert(len(self.ctx.results) if index is None else index, r)

    def stdin_program(
        self, argv: Sequence[str], own: Verdict, upstream: list[list[str]], heredoc: str | None
    ) -> Verdict:
        """An interpreter reading its program from stdin: judge what is fed to it."""
        name = program_name(argv[0])
        is_shell = own.reason.startswith(tuple(f"{s}:" for s in _SHELLS))
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
        """Walk expansions inside a word: substitutions run, so they are judged; a parameter
        expansion bash would evaluate as code is ``unknown`` (and what is nested in it judged)."""
        vs: list[Verdict] = []
        for part in getattr(node, "parts", []):
            k = part.kind
            if k in ("commandsubstitution", "processsubstitution"):
                self.features.add("substitution")
                if (v := self.walk(part.command)) is not None:
                    vs.append(v)
            elif k == "parameter":
                self.features.add("expansion")
                if (risk := parameter_risk(part.value)) is not None:
                    vs.append(unk(risk, "expansion"))
                    vs.extend(self.recurse(text) for text in nested_commands(part.value))
            elif k == "tilde":
                self.features.add("expansion")
            elif k == "word" and (v := self.word(part)) is not None:
                vs.append(v)
        if node.kind in ("word", "assignment") and "[" in node.word.partition("=")[0]:
            # ``a[$(cmd)]=1``: bashlex marks the substitution (walked above); a subscript is
            # evaluated arithmetically, so anything but a literal index cannot be trusted.
            head = node.word.partition("=")[0] if node.kind == "assignment" else ""
            if head and parameter_risk(head) is not None:
                vs.append(unk(f"array subscript in {head!r} is evaluated arithmetically", "expansion"))
        if node.kind == "word" and has_glob(self.raw(node)):
            self.features.add("glob")
        return worst(vs)

    def stdin_source(self, node: Any) -> str | None:
        """What a redirection feeds to stdin: a file path, ``"<heredoc>"`` or ``None``."""
        rtype = node.type
        if rtype in ("<<", "<<-"):
            return None
        if rtype == "<<<":
            return "<expansion>" if self.is_unknown(node.output) else None
        if (
            rtype in ("<", "<>")
            and hasattr(node.output, "kind")
            and getattr(node, "input", None) in (None, 0)
        ):
            return self.text(node.output)
        return None

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
        target = self.text(out)
        if target.startswith(("/dev/tcp/", "/dev/udp/")):
            return worst(
                [
                    unk(f"redirect {rtype} {target}: bash opens a network connection", "exfiltration"),
                    *([inner] if inner else []),
                ]
            )
        if rtype not in _WRITE_REDIRECTS:
            return inner
        if self.is_unknown(out):
            return worst(
                [
                    unk(f"redirect {rtype} to a path from an expansion", "redirect.write"),
                    *([inner] if inner else []),
                ]
            )
        return worst(
            [
                write_target_verdict(target, f"redirect {rtype}", "redirect.write"),
                *([inner] if inner else []),
            ]
        )

    # -- words -----------------------------------------------------------------------------------
    def raw(self, node: Any) -> str:
        start, end = node.pos
        return str(self.source[start:end])

    def text(self, node: Any) -> str:
        return unquote(self.raw(node))

    def is_unknown(self, node: Any) -> bool:
        """Whether a word's text depends on something only known at run time: a substitution, or
        a variable the script does not assign a literal value to (the environment's, ``$1`` …)."""
        for p in getattr(node, "parts", []):
            if p.kind in ("commandsubstitution", "processsubstitution"):
                return True
            if p.kind == "parameter" and p.value:
                base = _base_name(p.value)
                if base is None or self.known.get(base) is None:
                    return True
        return False

    def known_text(self, node: Any, raw: str) -> str:
        """The word's text, with a whole-word reference to a variable of one literal value replaced."""
        parts = getattr(node, "parts", [])
        if (
            len(parts) == 1
            and parts[0].kind == "parameter"
            and raw.strip('"')
            in (
                f"${parts[0].value}",
                f"${{{parts[0].value}}}",
            )
        ):
            values = self.known.get(parts[0].value)
            if values is not None and len(set(values)) == 1:
                return values[0]
        return unquote(raw)


def _base_name(value: str) -> str | None:
    """The variable a parameter expansion reads (``x`` of ``${x%.log}``), if it is a plain name."""
    import re

    m = re.match(r"#?([A-Za-z_][A-Za-z0-9_]*)", value)
    if m is None or value.startswith("!"):
        return None
    return m.group(1)


def _starts_with_expansion(node: Any, raw: str) -> bool:
    """Whether the first characters of the word come from an expansion (``$x``, ``"$(cmd)"x``)."""
    parts = [p for p in getattr(node, "parts", []) if p.kind != "tilde"]
    if not parts:
        return False
    first = min(p.pos[0] for p in parts) - node.pos[0]
    return unquote(raw[:first]) == ""


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


def bashlex_hazard(text: str) -> str | None:
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
