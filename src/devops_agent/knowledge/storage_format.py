"""Confluence storage format (XHTML with ``ac:``/``ri:`` elements) to Markdown-like text.

What matters for retrieval is kept and shaped so the prose chunker can split on it: headings
become ``#`` lines (shifted one level down, the page title being the ``#`` heading), lists become
``-``/``1.`` items, tables become ``| a | b |`` rows, ``<pre>`` and the ``code``/``noformat``
macros become fenced blocks, panels (``info``, ``note``, ``warning``, ``tip``, ``panel``) a
labelled quote, links their text, page links (``ac:link``) their text or the page title, and
tasks ``- [ ]``/``- [x]`` items. Macro parameters and other markup are dropped.

The element names come from Atlassian's storage format reference,
https://confluence.atlassian.com/doc/confluence-storage-format-790796544.html. Pure stdlib
(:mod:`html.parser`): text in, text out; this module must not do I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = frozenset({"p", "div", "blockquote", "section", "hr", "dl", "dt", "dd"})
_CODE_MACROS = frozenset({"code", "noformat"})
_PANEL_MACROS = {"info": "Info", "note": "Note", "warning": "Warning", "tip": "Tip", "panel": "Panel"}
# Macros without a body that still say something: the parameter worth keeping as text.
_INLINE_MACROS = {"jira": "key", "status": "title", "anchor": ""}
_HIDDEN = frozenset({"ac:parameter", "ac:task-id", "ac:task-status", "ac:placeholder", "ac:task-uuid"})
_SPACE = re.compile(r"\s+")
_BACKTICK_LINE = re.compile(r"^[ \t]*`{3,}", re.MULTILINE)


def storage_to_markdown(xhtml: str, title: str | None = None) -> str:
    """Markdown-like text of one page body; ``title`` (when given) becomes its ``#`` heading."""
    parser = _Converter(heading_shift=1 if title else 0)
    parser.feed(xhtml)
    parser.close()
    body = parser.text()
    if title:
        return f"# {_SPACE.sub(' ', title).strip()}\n\n{body}".rstrip() + "\n"
    return body


@dataclass
class _List:
    ordered: bool
    items: int = 0


class _Converter(HTMLParser):
    def __init__(self, heading_shift: int) -> None:
        super().__init__(convert_charrefs=True)
        self.shift = heading_shift
        self.lines: list[str] = []
        self.buf: list[str] = []
        self.prefix = ""  # for the next line flushed: "## ", "- ", "1. "
        self.lists: list[_List] = []
        self.quote = 0  # open panels: their lines are quoted with "> "
        self.hidden: list[str] = []  # open elements whose text is not content
        self.raw: list[str] | None = None  # text of an open <pre> or code macro body
        self.macros: list[dict[str, str]] = []
        self.param: str | None = None
        self.cell: list[str] | None = None
        self.row: list[str] | None = None
        self.link: tuple[list[str], int, str | None] | None = None  # (where text goes, its length, page)
        self.task_done = False

    # -- output helpers ------------------------------------------------------------------
    def text(self) -> str:
        self._flush()
        out: list[str] = []
        for line in self.lines:
            if line == "" and (not out or out[-1] == ""):
                continue
            out.append(line)
        return "\n".join(out).strip("\n") + "\n" if out else ""

    def _indent(self) -> str:
        return "  " * max(0, len(self.lists) - 1)

    def _emit(self, line: str) -> None:
        self.lines.append(("> " * self.quote) + line if self.quote else line)

    def _flush(self) -> None:
        """End the current line of inline text."""
        if self.cell is not None:
            self.cell.append(" ")
            return
        text = _SPACE.sub(" ", "".join(self.buf)).strip()
        self.buf = []
        if text:
            self._emit(self.prefix + text)
            self.prefix = self._indent() + "  " if self.lists else ""

    def _blank(self) -> None:
        self._flush()
        if self.cell is None and not self.quote and self.lines and self.lines[-1] != "" and not self.lists:
            self.lines.append("")

    def _add(self, text: str) -> None:
        (self.cell if self.cell is not None else self.buf).append(text)

    # -- parser callbacks ----------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if self.hidden or self.raw is not None:
            if tag in _HIDDEN:
                self.hidden.append(tag)
            if tag == "ac:parameter" and len(self.hidden) == 1 and self.macros:
                self.param = a.get("ac:name", "")
                self.macros[-1].setdefault(self.param, "")
            return
        if tag in _HIDDEN:
            self.hidden.append(tag)
            if tag == "ac:parameter" and self.macros:
                self.param = a.get("ac:name", "")
                self.macros[-1].setdefault(self.param, "")
            return
        if tag in _HEADINGS:
            self._blank()
            level = min(6, _HEADINGS[tag] + self.shift)
            self.prefix = "#" * level + " "
        elif tag in _BLOCKS:
            if self.lists:
                self._flush()
            else:
                self._blank()
        elif tag == "br":
            self._flush()
        elif tag in ("ul", "ol"):
            self._flush()
            if not self.lists:
                self._blank()
            self.lists.append(_List(ordered=tag == "ol"))
        elif tag == "li":
            self._flush()
            if self.lists:
                current = self.lists[-1]
                current.items += 1
                self.prefix = self._indent() + (f"{current.items}. " if current.ordered else "- ")
            else:
                self.prefix = "- "
        elif tag == "pre":
            self._blank()
            self.raw = []
        elif tag == "table":
            self._blank()
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self._flush()
            self.cell = []
        elif tag == "code":
            self._add("`")
        elif tag in ("a", "ac:link"):
            target = self.cell if self.cell is not None else self.buf
            self.link = (target, len(target), None)
        elif tag == "ri:page" and self.link is not None:
            self.link = (self.link[0], self.link[1], a.get("ri:content-title") or None)
        elif tag == "time" and a.get("datetime"):
            self._add(a["datetime"])
        elif tag == "ac:structured-macro" or tag == "ac:macro":
            name = a.get("ac:name", "")
            self.macros.append({"": name})
            if name in _PANEL_MACROS:
                self._blank()
                self._emit(f"> **{_PANEL_MACROS[name]}**")
                self.quote += 1
        elif tag == "ac:plain-text-body" and self.macros and self.macros[-1][""] in _CODE_MACROS:
            self._blank()
            self.raw = []
        elif tag == "ac:task":
            self._flush()
            self.task_done = False
        elif tag == "ac:task-body":
            self.prefix = self._indent() + ("- [x] " if self.task_done else "- [ ] ")

    def handle_endtag(self, tag: str) -> None:
        if self.hidden:
            if tag == self.hidden[-1]:
                self.hidden.pop()
                if tag == "ac:parameter":
                    self.param = None
            return
        if self.raw is not None:
            if tag == "pre" or tag == "ac:plain-text-body":
                self._fence(self.macros[-1].get("language", "") if tag != "pre" and self.macros else "")
            return
        if tag in _HEADINGS:
            self._flush()
            self.prefix = ""
            self._blank()
        elif tag in _BLOCKS:
            if self.lists:
                self._flush()
            else:
                self._blank()
        elif tag in ("ul", "ol"):
            self._flush()
            if self.lists:
                self.lists.pop()
            self.prefix = self._indent() + "  " if self.lists else ""
            if not self.lists:
                self._blank()
        elif tag == "li":
            self._flush()
            self.prefix = ""
        elif tag in ("td", "th"):
            if self.cell is not None:
                cell = _SPACE.sub(" ", "".join(self.cell)).strip().replace("|", "\\|")
                self.cell = None
                if self.row is not None:
                    self.row.append(cell)
        elif tag == "tr":
            if self.row:
                self._emit("| " + " | ".join(self.row) + " |")
            self.row = None
        elif tag == "table":
            self._blank()
        elif tag == "code":
            self._add("`")
        elif tag in ("a", "ac:link"):
            if self.link is not None:
                target, start, page = self.link
                if page and not "".join(target[start:]).strip():
                    self._add(page)
                self.link = None
        elif tag in ("ac:structured-macro", "ac:macro"):
            macro = self.macros.pop() if self.macros else {"": ""}
            name = macro[""]
            if name in _PANEL_MACROS:
                self._flush()
                self.quote = max(0, self.quote - 1)
                self._blank()
            elif name in _INLINE_MACROS and macro.get(_INLINE_MACROS[name]):
                self._add(macro[_INLINE_MACROS[name]])
        elif tag == "ac:task-body":
            self._flush()
            self.prefix = ""

    def handle_data(self, data: str) -> None:
        if self.hidden:
            if self.hidden[-1] == "ac:parameter" and self.param is not None and self.macros:
                self.macros[-1][self.param] += data
            elif self.hidden[-1] == "ac:task-status":
                self.task_done = data.strip() == "complete"
            return
        if self.raw is not None:
            self.raw.append(data)
            return
        self._add(data)

    def unknown_decl(self, data: str) -> None:
        # html.parser hands <![CDATA[...]]> (code macro bodies, link bodies) over as a declaration.
        if data.startswith("CDATA["):
            self.handle_data(data[len("CDATA[") :])

    def _fence(self, language: str) -> None:
        body = "".join(self.raw or []).strip("\n")
        self.raw = None
        # longer than any backtick run that opens a line of the code, which would close it early
        runs = [len(m.group()) for m in _BACKTICK_LINE.finditer(body)]
        fence = "`" * max([3, *(n + 1 for n in runs)])
        self._emit(fence + language.strip())
        for line in body.splitlines():
            self._emit(line)
        self._emit(fence)
        self._blank()
