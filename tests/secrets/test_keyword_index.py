"""The keyword index the secret rules and the recognizers share (``secrets/keyword_index.py``): the
one-pass automaton must find the same lines as a plain scan per keyword, and ``ranges`` must join
neighbouring lines."""

from __future__ import annotations

import pytest

from devops_agent.secrets import keyword_index
from devops_agent.secrets.scrubber import LineIndex

TEXT = (
    "token=a key=b\n"  # two keywords, one line
    "\n"
    "AUTH pw secret auth\n"  # an exact-case keyword and its lower-case twin on one line
    "nothing here\n"
    "password pass pass\n"  # one keyword several times on a line
    "private key\n"
    "   \n"
    "last line with a key and no newline"
)


@pytest.mark.skipif(keyword_index._ahocorasick is None, reason="pyahocorasick (extra privacy) not installed")
def test_automaton_index_finds_the_lines_a_plain_scan_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    indexed = LineIndex(TEXT)
    monkeypatch.setattr(keyword_index, "_ahocorasick", None)
    plain = LineIndex(TEXT)
    assert not plain._indexed
    for kw in sorted(keyword_index._KEYWORDS):
        assert indexed.lines(kw) == plain.lines(kw), kw
    assert [TEXT[lo:hi] for lo, hi in indexed.lines("key")] == [
        "token=a key=b", "private key", "last line with a key and no newline"
    ]  # fmt: skip


def test_ranges_join_neighbouring_lines_only() -> None:
    index = LineIndex(TEXT)
    got = [TEXT[lo:hi] for lo, hi in index.ranges(("secret", "pass", "private key", "token"))]
    assert got == ["token=a key=b", "AUTH pw secret auth", "password pass pass\nprivate key"]
    assert index.ranges(("AUTH",)) == index.lines("AUTH")
    assert index.ranges(("no-such-keyword-here",)) == []
