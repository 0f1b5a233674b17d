"""Chunkers: Python symbols with exact line ranges, headings for prose, blocks for other code."""

from __future__ import annotations

import textwrap

import pytest

from devops_agent.knowledge import syntax
from devops_agent.knowledge.chunking import MAX_LINES, chunk_text, language_of

PY = textwrap.dedent(
    '''\
    """Module doc."""
    import os

    TIMEOUT = 5


    @decorator
    def fetch(url):
        return os.getenv(url)


    class Client:
        """A client."""

        def get(self):
            return 1
    '''
)


def test_python_chunks_carry_symbols_and_exact_lines() -> None:
    chunks = chunk_text("pkg/client.py", PY)
    got = [(c.kind, c.symbol, c.start_line, c.end_line) for c in chunks]
    assert got == [
        ("module", "client", 1, 4),
        ("function", "fetch", 7, 9),
        ("class", "Client", 12, 16),
    ]
    lines = PY.splitlines()
    for c in chunks:
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])
    assert chunks[1].text.startswith("@decorator")
    assert chunks[1].citation == "pkg/client.py:7-9"


def test_large_python_class_is_split_into_methods() -> None:
    body = "\n".join(f"    def m{i}(self):\n" + "        x = 1\n" * 10 for i in range(20))
    src = "class Big:\n    attr = 1\n\n" + body + "\n"
    chunks = chunk_text("big.py", src)
    methods = [c for c in chunks if c.kind == "method"]
    assert [c.symbol for c in methods][:3] == ["Big.m0", "Big.m1", "Big.m2"]
    assert len(methods) == 20
    assert chunks[0].kind == "class"
    assert chunks[0].start_line == 1
    assert all(c.end_line - c.start_line + 1 <= MAX_LINES for c in chunks)


def test_invalid_python_falls_back_to_blocks() -> None:
    chunks = chunk_text("broken.py", "def ok():\n    pass\n\ndef broken(:\n    pass\n    x\n")
    assert chunks
    assert all(c.kind == "block" for c in chunks)


def test_markdown_splits_on_headings_not_in_fences() -> None:
    md = "intro\n# Deploy\nsteps\n## Rollback\nundo\n```\n# not a heading\n```\n# Alerts\npage\n"
    chunks = chunk_text("runbook.md", md)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [
        ("runbook.md", 1, 1),
        ("Deploy", 2, 3),
        ("Deploy > Rollback", 4, 8),
        ("Alerts", 9, 10),
    ]


def test_asciidoc_and_rst_headings() -> None:
    adoc = chunk_text("a.adoc", "= Title\ntext\n== Part\nmore\n")
    assert [c.symbol for c in adoc] == ["Title", "Title > Part"]
    rst = chunk_text("a.rst", "Title\n=====\ntext\nPart\n----\nmore\n")
    assert [c.symbol for c in rst] == ["Title", "Title > Part"]


def test_go_fallback_cuts_at_top_level_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(syntax, "syntax_chunks", lambda *args: None)  # as without knowledge-syntax
    go = 'package main\n\nimport "fmt"\n\nfunc A() {\n\tfmt.Println(1)\n}\n\nfunc (s *S) B() {\n\treturn\n}\n'
    chunks = chunk_text("main.go", go)
    symbols = [c.symbol for c in chunks]
    assert "A" in symbols
    assert "B" in symbols
    b = next(c for c in chunks if c.symbol == "B")
    assert b.start_line == 9
    assert b.end_line == 11


def test_language_detection() -> None:
    assert language_of("Dockerfile") == "dockerfile"
    assert language_of("infra/main.tf") == "terraform"
    assert language_of("a/b.YAML") == "yaml"
