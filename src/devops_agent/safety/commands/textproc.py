"""``sed`` and ``awk``: read-only filters whose scripts can write files and run commands.

The script is parsed, not pattern-matched. For sed, every command is read with its address (GNU
forms included: ``first~step``, ``addr,+N``, ``addr,~N``, ``0,/re/``, ``\\cREc``, ``I``/``M``
flags, ``!``) so ``e`` (run), ``w``/``W`` (write), ``s///e`` and ``s///w`` are found wherever
they are; a script that does not parse is ``unknown``. For awk, strings and regular expressions
are set aside before looking for ``system()``, pipes (``|``, ``|&``), output redirections of
``print``/``printf`` (``> "/dev/stderr"`` is harmless), ``@include``/``@load`` and gawk's network
files. Options are parsed with getopt_long tables (``sed --in``, ``-nie``, ``gawk --load``,
``-W exec``). Must not run anything.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from devops_agent.safety.commands.base import (
    Recurse,
    Verdict,
    destr,
    is_harmless_sink,
    is_system_path,
    mut,
    ro,
    unk,
    worst,
    write_target_verdict,
)
from devops_agent.safety.commands.options import Spec, parse

SED = Spec(
    "bsnrzuEe:f:l:i::",
    "expression=|e file=|f in-place?|i line-length=|l null-data|z zero-terminated quiet|n silent "
    "regexp-extended|E separate|s sandbox unbuffered|u binary|b debug posix follow-symlinks help version",
)


class _SedError(ValueError):
    pass


def sed(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``sed`` is read-only unless it edits in place, its script writes or runs commands, or the
    script comes from a file (``-f``) this classifier cannot see."""
    parsed = parse(argv[1:], SED)
    if parsed.unknown:
        return unk(f"sed {parsed.unknown[0]}: an option this classifier does not know", "files.sed")
    if parsed.injectable:
        return unk(
            f"sed: {getattr(parsed.injectable[0], 'raw', parsed.injectable[0])} may become an option",
            "expansion",
        )
    scripts = parsed.values("expression")
    operands = list(parsed.operands)
    if not scripts and not parsed.has("file") and operands:
        scripts, operands = [operands[0]], operands[1:]
    if parsed.has("in-place") or any(w == "--in" for w, _ in parsed.ambiguous):
        if any(is_system_path(f) for f in operands):
            return destr("sed -i: edits system files in place", "files.system_write")
        return mut("sed -i: edits files in place", "files.sed_inplace")
    if parsed.has("file"):
        return unk("sed -f: runs a script file this classifier cannot see", "files.sed")
    if parsed.has("sandbox"):
        return ro("sed --sandbox: e/w/r commands are refused", "files.read")
    try:
        runs, writes = sed_effects("\n".join(scripts))
    except _SedError as exc:
        return unk(f"sed script this classifier cannot parse ({exc})", "files.sed")
    if runs:
        return unk("sed script with an e command or s///e flag: runs commands", "files.sed")
    vs = [write_target_verdict(w, "sed w", "files.write") for w in writes if not is_harmless_sink(w)]
    return worst(vs) or ro("sed: filters text to stdout", "files.read")


def sed_effects(script: str) -> tuple[bool, list[str]]:
    """``(runs a command, files written)`` of a sed script; raises :class:`_SedError` if unparseable."""
    p = _SedParser(script)
    p.run()
    return p.runs, p.writes


class _SedParser:
    def __init__(self, text: str) -> None:
        self.t = text
        self.i = 0
        self.runs = False
        self.writes: list[str] = []

    def peek(self) -> str:
        return self.t[self.i] if self.i < len(self.t) else ""

    def run(self) -> None:
        while True:
            self.skip(" \t\n;")
            if self.i >= len(self.t):
                return
            if self.peek() == "#":
                self.to_eol()
                continue
            if self.peek() == "}":
                self.i += 1
                continue
            self.address()
            self.skip(" \t")
            while self.peek() == "!":
                self.i += 1
                self.skip(" \t")
            self.command()

    def skip(self, chars: str) -> None:
        while self.i < len(self.t) and self.t[self.i] in chars:
            self.i += 1

    def to_eol(self) -> str:
        j = self.t.find("\n", self.i)
        j = len(self.t) if j < 0 else j
        out = self.t[self.i : j]
        self.i = j
        return out

    def to_sep(self) -> str:
        m = re.compile(r"[;\n}]").search(self.t, self.i)
        j = len(self.t) if m is None else m.start()
        out = self.t[self.i : j]
        self.i = j
        return out

    def regex(self, delim: str) -> None:
        """Skip a delimited regex (``self.i`` just after the opening delimiter)."""
        while self.i < len(self.t):
            ch = self.t[self.i]
            if ch == "\\":
                self.i += 2
                continue
            if ch == "\n" and delim != "\n":
                raise _SedError("newline in a regular expression")
            if ch == "[" and delim != "[":
                close = self.t.find("]", self.i + 2)
                if close > 0 and "\n" not in self.t[self.i : close]:
                    self.i = close + 1
                    continue
            self.i += 1
            if ch == delim:
                return
        raise _SedError("unterminated regular expression")

    def one_address(self) -> bool:
        ch = self.peek()
        if ch.isdigit():
            while self.peek().isdigit():
                self.i += 1
            if self.peek() == "~":
                self.i += 1
                while self.peek().isdigit():
                    self.i += 1
            return True
        if ch == "$":
            self.i += 1
            return True
        if ch == "/" or ch == "\\":
            delim = "/"
            if ch == "\\":
                delim = self.t[self.i + 1 : self.i + 2]
                if not delim:
                    raise _SedError("bad address")
                self.i += 1
            self.i += 1
            self.regex(delim)
            while self.peek() in ("I", "M"):
                self.i += 1
            return True
        return False

    def address(self) -> None:
        if not self.one_address():
            return
        self.skip(" \t")
        if self.peek() == ",":
            self.i += 1
            self.skip(" \t")
            if self.peek() in ("+", "~"):
                self.i += 1
                if not self.peek().isdigit():
                    raise _SedError("bad address step")
                while self.peek().isdigit():
                    self.i += 1
            elif not self.one_address():
                raise _SedError("bad second address")

    def command(self) -> None:
        ch = self.peek()
        self.i += 1
        if ch in "=dDgGhHnNpPxzF":
            return
        if ch in "{}":
            return
        if ch in "lqQL":
            self.skip(" \t")
            while self.peek().isdigit():
                self.i += 1
            return
        if ch in "aic":
            self.text_argument()
            return
        if ch in ":btTv":
            self.to_sep()
            return
        if ch in "rR":
            self.to_eol()
            return
        if ch in "wW":
            self.skip(" \t")
            self.writes.append(self.to_eol().strip())
            return
        if ch == "e":
            self.runs = True
            self.to_eol()
            return
        if ch == "s":
            self.substitute()
            return
        if ch == "y":
            delim = self.peek()
            if not delim or delim in "\n\\":
                raise _SedError("bad y command")
            self.i += 1
            self.regex(delim)
            self.regex(delim)
            return
        if ch == "#":
            self.to_eol()
            return
        raise _SedError(f"unknown command {ch!r}")

    def text_argument(self) -> None:
        while self.i < len(self.t):
            line = self.to_eol()
            if not line.endswith("\\") or self.i >= len(self.t):
                return
            self.i += 1

    def substitute(self) -> None:
        delim = self.peek()
        if not delim or delim in "\n\\":
            raise _SedError("bad s command")
        self.i += 1
        self.regex(delim)
        self.regex(delim)
        while self.i < len(self.t):
            ch = self.peek()
            if ch == "e":
                self.runs = True
            elif ch == "w":
                self.i += 1
                self.skip(" \t")
                self.writes.append(self.to_eol().strip())
                return
            elif not (ch.isdigit() or ch in "gpiImM"):
                return
            self.i += 1


AWK = Spec(
    "F:v:f:W:e:E:i:l:bcCd::D::ghkL::MnNo::Op::PrsStVZ:",
    "assign=|v bignum|M characters-as-bytes|b copyright|C csv|k debug?|D dump-variables?|d exec=|E "
    "field-separator=|F file=|f gen-pot|g help|h include=|i lint?|L load=|l no-optimize|s "
    "non-decimal-data|n optimize|O posix|P pretty-print?|o profile?|p re-interval|r sandbox|S "
    "source=|e trace traditional|c use-lc-numeric|N version|V locale=|Z",
)
_AWK_PROGRAM_FILES = ("file", "exec", "include")
_AWK_WRITE_FILES = {"profile": "awkprof.out", "pretty-print": "awkprof.out", "dump-variables": "awkvars.out"}


def awk(argv: Sequence[str], recurse: Recurse) -> Verdict:
    """``awk``/``gawk``/``mawk`` are read-only unless the program runs commands (``system()``,
    pipes), writes files, includes or loads code, or comes from a file this classifier cannot see."""
    name = argv[0]
    parsed = parse(argv[1:], AWK)
    opts = list(parsed.opts)
    for w in parsed.values("-W"):  # mawk -W exec FILE; gawk -W long-option[=value]
        key, _, value = w.partition("=")
        long = next((n for n in AWK.tables()[1] if n.startswith(key) and key), key)
        opts.append((long, value or None))
    names = {n for n, _ in opts}
    if "-W" in names and any(v.startswith("e") for v in parsed.values("-W")):
        return unk(f"{name} -W exec: runs a program file this classifier cannot see", "files.awk")
    if parsed.unknown:
        return unk(f"{name} {parsed.unknown[0]}: an option this classifier does not know", "files.awk")
    if names & {"load"}:
        return unk(f"{name} --load: loads a shared library", "files.awk")
    includes = [v for n, v in opts if n == "include"]
    if includes and all(v in ("inplace", "inplace.awk") for v in includes) and not names & {"file", "exec"}:
        names = names - {"include"}
    if names & set(_AWK_PROGRAM_FILES) or "debug" in names:
        return unk(f"{name} -f/-E/-i/-D: runs a program file this classifier cannot see", "files.awk")
    vs: list[Verdict] = []
    for opt, default in _AWK_WRITE_FILES.items():
        for n, v in opts:
            if n == opt:
                vs.append(write_target_verdict(v or default, f"{name} --{opt}", "files.write"))
    if "sandbox" in names:
        return worst(vs) or ro(
            f"{name} --sandbox: system(), pipes and redirections are refused", "files.read"
        )
    programs = [v for n, v in opts if n == "source" and v is not None]
    operands = list(parsed.operands)
    if not programs and operands:
        programs = [operands[0]]
    inplace = any(v in ("inplace", "inplace.awk") for n, v in opts if n == "include")
    if inplace:
        vs.append(mut(f"{name} -i inplace: edits files in place", "files.sed_inplace"))
    for program in programs:
        vs.append(awk_program(name, program))
    return worst(vs) or ro(f"{name}: filters text to stdout", "files.read")


_AWK_TOKEN = re.compile(
    r'"(?:[^"\\\n]|\\.)*"|#[^\n]*|\|\||\|&|&&|>>|>=|<=|==|!=|[A-Za-z_][A-Za-z0-9_]*|@[A-Za-z_]+|\S', re.S
)
_REGEX_AFTER = frozenset(
    {
        "",
        "(",
        ",",
        "!",
        "~",
        "&&",
        "||",
        "{",
        "}",
        ";",
        "\n",
        ":",
        "?",
        "print",
        "printf",
        "return",
        "==",
        "!=",
    }
)
_SAFE_TARGETS = ("/dev/stdout", "/dev/stderr", "-", "/dev/null", "/dev/fd/")


def awk_program(name: str, program: str) -> Verdict:
    """The verdict of one awk program text."""
    tokens: list[str] = []
    i = 0
    n = len(program)
    prev = ""
    while i < n:
        ch = program[i]
        if ch in " \t\r":
            i += 1
            continue
        if ch == "\n":
            tokens.append(";")
            prev = ";"
            i += 1
            continue
        if ch == "/" and prev in _REGEX_AFTER:
            j = i + 1
            while j < n and program[j] != "/":
                j += 2 if program[j] == "\\" else 1
            tokens.append("<regex>")
            prev = "<regex>"
            i = j + 1
            continue
        m = _AWK_TOKEN.match(program, i)
        if m is None:
            return unk(f"{name} program this classifier cannot read", "files.awk")
        tok = m.group(0)
        i = m.end()
        if tok.startswith("#"):
            continue
        tokens.append(tok)
        prev = tok
    for k, tok in enumerate(tokens):
        if tok in ("@include", "@load"):
            return unk(f"{name} {tok}: includes or loads code this classifier cannot see", "files.awk")
        if tok == "system" and k + 1 < len(tokens) and tokens[k + 1] == "(":
            return unk(f"{name} program calls system(): runs commands", "files.awk")
        if tok in ("|", "|&"):
            return unk(f"{name} program pipes to or from a command", "files.awk")
        if tok.startswith('"/inet'):
            return unk(f"{name} program opens a network connection ({tok})", "exfiltration")
    return _awk_redirections(name, tokens)


def _awk_redirections(name: str, tokens: list[str]) -> Verdict:
    vs: list[Verdict] = []
    in_print = False
    depth = 0
    for k, tok in enumerate(tokens):
        if tok in ("print", "printf"):
            in_print, depth = True, 0
        elif tok in (";", "{", "}"):
            in_print = False
        elif tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
        elif in_print and depth == 0 and tok in (">", ">>"):
            target = tokens[k + 1] if k + 1 < len(tokens) else ""
            if target.startswith('"') and target.endswith('"'):
                path = target[1:-1]
                if not path.startswith(_SAFE_TARGETS):
                    vs.append(write_target_verdict(path, f"{name} print >", "files.awk"))
            else:
                vs.append(mut(f"{name} program prints to a file named at run time", "files.awk"))
    return worst(vs) or ro(f"{name}: filters text to stdout", "files.read")
