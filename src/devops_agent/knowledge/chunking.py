"""Split files into retrievable chunks along their structure, each with exact 1-based line ranges.

* Python: the stdlib :mod:`ast` gives functions, classes and methods (``Class.method``) with their
  decorators; module-level code between them becomes ``module`` chunks.
* Go, JS/TS, Java, YAML, Terraform, shell, Dockerfile: their syntax tree (:mod:`.syntax`, the
  optional ``knowledge-syntax`` extra) when tree-sitter and the grammar are installed.
* Other code (and those without the extra, or when the tree is mostly errors): a heuristic that
  cuts at top-level (unindented) block starts, the sound fallback when no parser is available.
* Prose (Markdown, AsciiDoc, reStructuredText): one chunk per heading section, titled by the
  heading path.

Lines are what editors, ``grep -n`` and ``sed -n`` count: the text split on ``\n`` only (a ``\r``
before it belongs to the line break), so a form feed or U+2028 inside a line does not shift the
citations. Long pieces are cut into windows of ``MAX_LINES``. This module is pure: text in, chunks out; it
must not read files or know about the index.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

MAX_LINES = 120
MIN_LINES = 3

LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".go": "go",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".java": "java",
    ".kt": "kotlin",
    ".rs": "rust",
    ".rb": "ruby",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".php": "php",
    ".scala": "scala",
    ".sh": "shell",
    ".bash": "shell",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".tf": "terraform",
    ".hcl": "terraform",
    ".json": "json",
    ".toml": "toml",
    ".ini": "ini",
    ".cfg": "ini",
    ".sql": "sql",
    ".md": "markdown",
    ".markdown": "markdown",
    ".adoc": "asciidoc",
    ".asciidoc": "asciidoc",
    ".rst": "rst",
    ".txt": "text",
}
PROSE = frozenset({"markdown", "asciidoc", "rst", "text"})

# Lines that open a top-level block in the fallback chunker (matched at column 0).
_BLOCK_START = re.compile(
    r"^(?:func|type|package|import|const|var|class|interface|enum|struct|impl|fn|pub|mod|trait|def|"
    r"module|export|function|async|public|private|protected|static|abstract|final|resource|data|"
    r"variable|output|provider|locals|terraform|FROM|RUN|CMD|ENTRYPOINT|COPY|ADD|ENV|ARG|"
    r"[A-Za-z_][\w.-]*\s*\(\)\s*\{|[A-Za-z_][\w.-]*:|- )"
)
_SYMBOL = re.compile(
    r"(?:func\s+(?:\([^)]*\)\s*)?|class\s+|interface\s+|type\s+|struct\s+|enum\s+|trait\s+|fn\s+|"
    r"function\s+|def\s+|resource\s+\"[^\"]+\"\s+|module\s+|variable\s+|output\s+)\"?([A-Za-z_][\w.-]*)"
)
_LONE_CR = re.compile(r"\r(?!\n)")
# Markdown (CommonMark): an ATX heading may be indented up to 3 spaces and its closing #s need a
# space before them (`# Use C#` keeps its `#`); a setext heading is a text line underlined with
# `===` or `---`; a fence closes with a run of its own character at least as long.
_MD_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_MD_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_MD_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# Lines that cannot be a setext title: list items, quotes, table rows, headings, fences, code.
_MD_NOT_TITLE = re.compile(
    r"^(?: {4}|\t| {0,3}(?:[-*+][ \t]|\d{1,9}[.)][ \t]|>|\||#{1,6}(?:[ \t]|$)|`{3}|~{3}))"
)
_ADOC_HEADING = re.compile(r"^(={1,6})[ \t]+(.+?)[ \t]*$")
# AsciiDoc blocks whose content is verbatim (listing, literal, comment, passthrough, fenced).
_ADOC_VERBATIM = re.compile(r"^(?:(-{4,}|\.{4,}|/{4,}|\+{4,})[ \t]*$|(`{3}))")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")


@dataclass(frozen=True)
class Chunk:
    """A retrievable piece of one file. ``start_line``/``end_line`` are 1-based and inclusive."""

    path: str
    start_line: int
    end_line: int
    kind: str  # function | class | method | type | module | block | section | window
    symbol: str
    text: str
    language: str

    @property
    def citation(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


def language_of(path: str) -> str:
    p = PurePosixPath(path)
    if p.name == "Dockerfile" or p.name.startswith("Dockerfile.") or p.suffix == ".dockerfile":
        return "dockerfile"
    if p.name in {"Makefile", "GNUmakefile"}:
        return "make"
    return LANGUAGES.get(p.suffix.lower(), "text")


def chunk_text(path: str, text: str, language: str | None = None) -> list[Chunk]:
    """Chunks of one file's ``text``; ``path`` is stored as given (relative, ``/``-separated)."""
    lang = language or language_of(path)
    text = text.removeprefix("\ufeff")  # a byte order mark is not part of the first line
    lines = split_lines(text)
    if not lines:
        return []
    if lang == "python" and not _LONE_CR.search(text):  # ast counts a lone \r as a line break
        try:
            return _python(path, text, lines)
        except (SyntaxError, ValueError, RecursionError):
            pass  # not valid for this interpreter: fall back to the heuristic
    if lang in {"markdown", "asciidoc", "rst"}:
        return _prose(path, lines, lang)
    if lang == "text":
        return _windows(path, lines, 1, len(lines), "window", PurePosixPath(path).name, lang)
    from devops_agent.knowledge.syntax import syntax_chunks  # here: syntax imports this module

    chunks = syntax_chunks(path, text, lines, lang)
    return chunks if chunks is not None else _blocks(path, lines, lang)


def split_lines(text: str) -> list[str]:
    """``text``'s lines as editors number them: split on ``\n`` only, a trailing ``\r`` dropped.

    Unlike :meth:`str.splitlines`, a form feed, a lone ``\r`` or U+2028 stays inside its line.
    """
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last line opens no new one
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _make(path: str, lines: list[str], start: int, end: int, kind: str, symbol: str, lang: str) -> Chunk:
    return Chunk(path, start, end, kind, symbol, "\n".join(lines[start - 1 : end]), lang)


def _windows(
    path: str, lines: list[str], start: int, end: int, kind: str, symbol: str, lang: str
) -> list[Chunk]:
    """``start..end`` as one chunk, or as consecutive windows of ``MAX_LINES`` when longer."""
    if end - start + 1 <= MAX_LINES:
        return [_make(path, lines, start, end, kind, symbol, lang)]
    out = []
    for s in range(start, end + 1, MAX_LINES):
        out.append(_make(path, lines, s, min(end, s + MAX_LINES - 1), kind, symbol, lang))
    return out


def _python(path: str, text: str, lines: list[str]) -> list[Chunk]:
    tree = ast.parse(text)
    out: list[Chunk] = []
    covered_to = 0  # last line already inside a chunk

    def flush_module(upto: int) -> None:
        nonlocal covered_to
        start = covered_to + 1
        end = upto
        while start <= end and not lines[start - 1].strip():
            start += 1
        while end >= start and not lines[end - 1].strip():
            end -= 1
        if start <= end:
            out.extend(_windows(path, lines, start, end, "module", PurePosixPath(path).stem, "python"))
        covered_to = max(covered_to, upto)

    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        end = node.end_lineno or node.lineno
        flush_module(start - 1)
        if isinstance(node, ast.ClassDef):
            out.extend(_python_class(path, lines, node, start, end))
        else:
            out.extend(_windows(path, lines, start, end, "function", node.name, "python"))
        covered_to = end
    flush_module(len(lines))
    return out


def _python_class(path: str, lines: list[str], node: ast.ClassDef, start: int, end: int) -> list[Chunk]:
    """A small class is one chunk; a large one is its header plus one chunk per method."""
    if end - start + 1 <= MAX_LINES:
        return [_make(path, lines, start, end, "class", node.name, "python")]
    methods = [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    out: list[Chunk] = []
    cursor = start
    for m in methods:
        m_start = min([m.lineno, *(d.lineno for d in m.decorator_list)])
        m_end = m.end_lineno or m.lineno
        if m_start > cursor:
            kind = "class" if cursor == start else "module"
            out.extend(_windows(path, lines, cursor, m_start - 1, kind, node.name, "python"))
        out.extend(_windows(path, lines, m_start, m_end, "method", f"{node.name}.{m.name}", "python"))
        cursor = m_end + 1
    if cursor <= end:
        out.extend(_windows(path, lines, cursor, end, "class", node.name, "python"))
    return [c for c in out if c.text.strip()]


def _blocks(path: str, lines: list[str], lang: str) -> list[Chunk]:
    """Cut at unindented block starts; merge tiny blocks into the previous one."""
    starts = [1]
    for i, line in enumerate(lines, start=1):
        if i > 1 and _BLOCK_START.match(line) and not lines[i - 2].rstrip().endswith(("\\", ",")):
            starts.append(i)
    bounds: list[tuple[int, int]] = []
    for n, s in enumerate(starts):
        e = (starts[n + 1] - 1) if n + 1 < len(starts) else len(lines)
        if bounds and (e - s + 1 < MIN_LINES or bounds[-1][1] - bounds[-1][0] + 1 < MIN_LINES):
            bounds[-1] = (bounds[-1][0], e)
        else:
            bounds.append((s, e))
    out: list[Chunk] = []
    for s, e in bounds:
        m = _SYMBOL.search(lines[s - 1])
        symbol = m.group(1) if m else lines[s - 1].strip()[:60]
        out.extend(_windows(path, lines, s, e, "block", symbol, lang))
    return [c for c in out if c.text.strip()]


def _front_matter_end(lines: list[str]) -> int:
    """The 0-based line after a Markdown file's YAML (``---``) or TOML (``+++``) front matter, else 0."""
    closers = {"---": ("---", "..."), "+++": ("+++",)}.get(lines[0].rstrip())
    if closers:
        for j in range(1, len(lines)):
            if lines[j].rstrip() in closers:
                return j + 1
    return 0


def _opens_verbatim(line: str, lang: str) -> str | None:
    """The delimiter when ``line`` opens a block whose lines are never headings (a code fence)."""
    if lang == "markdown":
        m = _MD_FENCE.match(line)
        # a backtick fence's info string holds no backtick (`` ```a``` `` is inline code)
        return m.group(1) if m and not (m.group(1)[0] == "`" and "`" in line[m.end() :]) else None
    if lang == "asciidoc":
        m = _ADOC_VERBATIM.match(line)
        return (m.group(1) or m.group(2)) if m else None
    return None  # reStructuredText literal blocks are indented, so no heading starts in one


def _closes_verbatim(delimiter: str, line: str, lang: str) -> bool:
    if lang == "markdown":
        run = line.strip()
        return (
            len(line) - len(line.lstrip(" ")) <= 3
            and len(run) >= len(delimiter)
            and set(run) == {delimiter[0]}
        )
    return line.rstrip() == delimiter


def _heading(lines: list[str], i: int, lang: str, rst_levels: dict[str, int]) -> tuple[int, str] | None:
    """(level, title) when line ``i`` (0-based) opens a section."""
    line = lines[i]
    nxt = lines[i + 1] if i + 1 < len(lines) else ""
    if lang == "markdown":
        m = _MD_HEADING.match(line)
        if m:
            return len(m.group(1)), m.group(2)
        u = _MD_SETEXT.match(nxt)
        if u and line.strip() and not _MD_NOT_TITLE.match(line) and not _MD_SETEXT.match(line):
            return (1 if u.group(1)[0] == "=" else 2), line.strip()
        return None
    if lang == "asciidoc":
        m = _ADOC_HEADING.match(line)
        return (len(m.group(1)), m.group(2)) if m else None
    if line.strip() and _RST_UNDERLINE.match(nxt) and len(nxt.strip()) >= len(line.strip()):
        # reStructuredText ranks title styles in the order a document first uses them; a title
        # with an overline is a style of its own
        over = i > 0 and lines[i - 1].strip() == nxt.strip()
        style = nxt[0] + ("/over" if over else "")
        return rst_levels.setdefault(style, len(rst_levels) + 1), line.strip()
    return None


def _prose(path: str, lines: list[str], lang: str) -> list[Chunk]:
    """One chunk per heading section; the symbol is the heading path (``Deploy > Rollback``).

    Lines inside code fences (AsciiDoc: listing, literal, comment and passthrough blocks) and a
    Markdown file's front matter open no section.
    """
    sections: list[tuple[int, str]] = []  # (start line, heading path)
    trail: list[tuple[int, str]] = []
    rst_levels: dict[str, int] = {}
    verbatim: str | None = None  # the delimiter of the open code block
    for i in range(_front_matter_end(lines) if lang == "markdown" else 0, len(lines)):
        line = lines[i]
        if verbatim is not None:
            if _closes_verbatim(verbatim, line, lang):
                verbatim = None
            continue
        verbatim = _opens_verbatim(line, lang)
        if verbatim is not None:
            continue
        h = _heading(lines, i, lang, rst_levels)
        if h is None:
            continue
        level, title = h
        trail = [t for t in trail if t[0] < level] + [(level, title)]
        overline = lang == "rst" and i > 0 and lines[i - 1].strip() == lines[i + 1].strip()
        sections.append((i if overline else i + 1, " > ".join(t for _, t in trail)))
    if not sections or sections[0][0] != 1:
        sections.insert(0, (1, PurePosixPath(path).name))
    out: list[Chunk] = []
    for n, (s, title) in enumerate(sections):
        e = sections[n + 1][0] - 1 if n + 1 < len(sections) else len(lines)
        if any(line.strip() for line in lines[s - 1 : e]):
            out.extend(_windows(path, lines, s, e, "section", title, lang))
    return out
