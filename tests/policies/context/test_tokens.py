"""Offline token counting: the encodings are OpenAI's own files (hash-checked), the estimate
stays within its measured margin, and the calibration from provider usage only ever scales up."""

from __future__ import annotations

import hashlib
import inspect
import random
from pathlib import Path

import pytest

from devops_agent.policies.context import encodings
from devops_agent.policies.context.encodings import OFFICIAL, EncodingUnavailable, ensure_file
from devops_agent.policies.context.profiles import shipped_profile
from devops_agent.policies.context.tokens import (
    ESTIMATE_MARGIN,
    Calibration,
    EstimateCounter,
    TiktokenCounter,
    estimate_tokens,
    text_counter,
)


def test_pinned_urls_and_hashes_are_the_ones_tiktoken_itself_pins() -> None:
    from tiktoken_ext import openai_public

    source = inspect.getsource(openai_public)
    for name, (url, digest) in OFFICIAL.items():
        body = inspect.getsource(getattr(openai_public, name))
        assert url in body, name
        assert f'expected_hash="{digest}"' in body, name
    assert source  # the module is the one tiktoken loads its encodings from


def test_rebuilt_files_are_byte_identical_to_openais(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    path = ensure_file("cl100k_base", tmp_path)
    assert path.parent == tmp_path / "tiktoken"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == OFFICIAL["cl100k_base"][1]
    # tiktoken's cache key is the sha1 of the URL: it finds the file and never downloads.
    assert path.name == hashlib.sha1(OFFICIAL["cl100k_base"][0].encode()).hexdigest()


def test_a_corrupted_cached_file_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    path = ensure_file("cl100k_base", tmp_path)
    path.write_bytes(b"tampered")
    again = ensure_file("cl100k_base", tmp_path)
    assert hashlib.sha256(again.read_bytes()).hexdigest() == OFFICIAL["cl100k_base"][1]


def test_data_that_fails_the_hash_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.setattr(encodings, "rebuild", lambda name: b"not the vocabulary\n")
    with pytest.raises(EncodingUnavailable, match="does not match"):
        ensure_file("o200k_base", tmp_path)
    assert not any((tmp_path / "tiktoken").glob("*"))


def test_tokenizer_counts_known_text() -> None:
    counter = TiktokenCounter("o200k_base")
    # "hello world" is two tokens in every OpenAI encoding.
    assert counter.count("hello world") == 2
    assert counter.method == "tokenizer:o200k_base"
    assert text_counter(shipped_profile("openai:gpt-4o")).method == "tokenizer:o200k_base"
    assert text_counter(shipped_profile("anthropic:claude-sonnet-4-5")).method == "estimate"
    assert text_counter(shipped_profile("openai:gpt-4o"), "estimate").method == "estimate"


def _fresh_text(rng: random.Random) -> str:
    """Text the estimate was not fitted on: this repository's own docs and generated logs."""
    docs = sorted((Path(__file__).resolve().parents[3] / "docs").glob("*.md"))
    doc = rng.choice(docs).read_text()
    start = rng.randrange(max(1, len(doc) - 4000))
    lines = [
        f"2024-05-0{rng.randint(1, 9)}T1{rng.randint(0, 9)}:{rng.randint(10, 59)}:00Z "
        f"{rng.choice(['INFO', 'WARN', 'ERROR'])} svc-{rng.randint(1, 40)} request {rng.randint(1, 10**6)} "
        f"took {rng.randint(1, 900)}ms status={rng.choice([200, 404, 500])}"
        for _ in range(40)
    ]
    return rng.choice([doc[start : start + 4000], "\n".join(lines)])


def test_the_estimate_stays_within_its_margin_on_text_it_was_not_fitted_on() -> None:
    truth = TiktokenCounter("o200k_base")
    rng = random.Random(3)
    under = []
    for _ in range(60):
        text = _fresh_text(rng)
        real = truth.count(text)
        under.append((real - estimate_tokens(text)) / real)
    assert max(under) <= ESTIMATE_MARGIN, "an under-count beyond the margin the budget allows for"
    assert sum(abs(u) for u in under) / len(under) < 0.10
    assert EstimateCounter().margin == ESTIMATE_MARGIN > 0


def test_estimate_is_not_a_character_ratio() -> None:
    # Digits cost more tokens per character than words do; chars/4 misses that, the estimate does not.
    digits = " ".join(str(n) for n in range(1000, 1600))
    prose = "the quick brown fox jumps over the lazy dog " * 60
    truth = TiktokenCounter("o200k_base")
    for text in (digits, prose):
        assert abs(estimate_tokens(text) - truth.count(text)) / truth.count(text) < 0.2
    assert abs(len(digits) / 4 - truth.count(digits)) / truth.count(digits) > 0.3


def test_calibration_scales_up_by_the_worst_ratio_seen_never_down() -> None:
    cal = Calibration()
    assert cal.scale(1000) == 1000
    cal.observe(counted=1000, reported=1100)
    cal.observe(counted=1000, reported=1050)
    assert cal.scale(1000) == 1100
    low = Calibration()
    low.observe(counted=1000, reported=800)
    assert low.scale(1000) == 1000


def test_a_part_counted_again_is_not_serialized_again_and_a_changed_one_is() -> None:
    """Each request recounts the run's history: the same part (same content object) is served from
    the counter's memo; a part whose content was replaced is counted anew."""
    from pydantic_ai.messages import ModelRequest, ToolReturnPart

    from devops_agent.policies.context.tokens import EstimateCounter, count_message

    class Counting(EstimateCounter):
        calls = 0

        def count(self, text: str) -> int:
            Counting.calls += 1
            return super().count(text)

    counter = Counting()
    part = ToolReturnPart("noop", {"i": 1, "rows": list(range(50))}, tool_call_id="c1")
    message = ModelRequest(parts=[part])
    first = count_message(counter, message)
    assert Counting.calls == 1
    assert count_message(counter, message) == first
    assert Counting.calls == 1  # served from the memo
    part.content = {"i": 1, "rows": list(range(500))}  # a new object: counted again, and larger
    assert count_message(counter, message) > first
    assert Counting.calls == 2
