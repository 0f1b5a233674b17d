"""Markdown for the terminal in which ``<…>`` is text.

Its own module so that the Markdown parser is imported when something is rendered, not by every
command (``--help`` among them).
"""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt
from rich.markdown import Markdown


class LiteralMarkdown(Markdown):
    """Markdown whose ``<…>`` is text, not HTML: a log template's ``<NUM>`` and ``<DUR>``, a
    placeholder ``<<HOST_1>>`` or ``<pod>`` in a command are shown, where HTML would drop them."""

    def __init__(self, markup: str, **kwargs: Any) -> None:
        super().__init__(markup, **kwargs)
        parser = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")
        self.parsed = parser.parse(markup)
