"""Machine text is not prose: what the NER model reads, and which model spans are layout or vocabulary.

No model needed: these are the structural signals the NER path applies around it.
"""

from __future__ import annotations

import pytest

from devops_agent.privacy.machine_text import TemplateVocabulary, blank_machine_tokens, is_machine_span


def test_identifiers_keys_and_paths_are_blanked_names_are_not() -> None:
    line = (
        "McDowell said dfs.DataNode onExtend x=1 to MacLeod, see /var/log; Dr. M. Smith of Acme Inc. agreed"
    )
    blanked = blank_machine_tokens(line)
    assert len(blanked) == len(line)  # offsets hold
    for kept in ("McDowell", "MacLeod,", "Dr. M. Smith", "Acme Inc. agreed"):
        assert kept in blanked
    for gone in ("dfs.DataNode", "onExtend", "x=1", "/var/log;"):
        assert gone not in blanked


def span(text: str, words: str) -> tuple[str, int, int]:
    start = text.index(words)
    return text, start, start + len(words)


def at(text: str, words: str) -> tuple[int, int]:
    return span(text, words)[1:]


@pytest.mark.parametrize(
    ("text", "words", "machine"),
    [
        ("Name:         api-7d9\nLabels:       app=web\n", "Labels", True),  # kubectl describe key
        ("    Mounts:\n      /data from vol (rw)\n", "Mounts", True),  # a section key
        ("  Replicas:  3 desired | 3 updated\n", "Replicas", True),
        ("│  Node-Selectors:  <none>\n", "Node-Selectors", True),  # drawn table
        ("kubelet  Back-off restarting failed container", "kubelet  Back-off", True),  # column gap
        ("Jane Doe: You saved my life! How can I ever repay you?", "Jane Doe", False),  # a speaker
        ("Name: Jane Doe\nPhone: 555", "Jane Doe", False),  # the value of a key is not the key
        ("Please call Jane Doe at noon.", "Jane Doe", False),
    ],
)
def test_layout_spans(text: str, words: str, machine: bool) -> None:
    assert is_machine_span(*span(text, words)) is machine


def test_template_constants_need_three_distinct_lines_and_names_vary() -> None:
    event = "\n".join(f"INFO Ido chip status changed: ip=10.0.0.{d} status=M" for d in range(10, 16))
    vocab = TemplateVocabulary(event)
    assert vocab.constant(*at(event, "Ido"))
    assert not vocab.constant(*at(event, "ip=10.0.0.10"))  # a value
    # few people, each on a few lines: their names fill one slot of one template, so they vary
    people = ["Siiri Tamm", "Ubul Halász", "Mette Dahl"]
    logins = "\n".join(f"session opened for {people[d % 3]} from 10.0.0.{d}" for d in range(9))
    vocab = TemplateVocabulary(logins)
    assert not any(vocab.constant(*at(logins, p)) for p in people)
    assert vocab.constant(*at(logins, "session opened"))
    # a short text gives no evidence: one message is never mined
    assert not TemplateVocabulary("INFO Ido chip status changed\nINFO Ido chip status changed").constant(5, 8)


def test_an_event_word_beside_a_value_is_vocabulary() -> None:
    """A model span of an event word and the value after it (``Unpacking lsb-release``): its
    capitalised word is the program's constant, so the span is not a name."""
    packages = ["lsb-release", "dpkg-dev", "libjson-perl", "libguava-java", "make", "patch"]
    log = "\n".join(f"Unpacking {p} (1.{i}-2) over (1.{i}-1) ..." for i, p in enumerate(packages))
    vocab = TemplateVocabulary(log)
    assert vocab.constant(*at(log, "Unpacking lsb-release"))
    assert not vocab.constant(*at(log, "lsb-release"))  # the value alone is no constant
