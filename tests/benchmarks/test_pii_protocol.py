"""The PII benchmark's presidio-evaluator-style scoring (benchmarks/pii_bench.py), on hand-made spans."""

from __future__ import annotations

from fixtures_bench import load

bench = load("pii_bench")
SKIP, _ = bench._skip_words()


tokens = bench._tokens


def span(text: str, part: str) -> tuple[int, int]:
    start = text.index(part)
    return start, start + len(part)


def test_pieces_of_one_address_join_and_skip_words_are_trimmed() -> None:
    text = "Ship to Allika 46\n Suite 501\n Riisa, Estonia please."
    gold = [("STREET_ADDRESS", span(text, "Allika 46")), ("STREET_ADDRESS", span(text, "Suite 501")),
            ("GPE", span(text, "Riisa")), ("GPE", span(text, "Estonia"))]  # fmt: skip
    runs = bench._runs(tokens(text), gold, SKIP)
    # The street and suite lines are one span ("Suite" is a skip word, so nothing else lies between);
    # the two places join across the comma. Different types never join.
    assert [text[a:b] for a, b in runs] == ["Allika 46\n Suite 501", "Riisa, Estonia"]


def test_a_word_that_is_not_a_skip_word_keeps_pieces_apart() -> None:
    text = "Allika 46 near Riisa 12"
    gold = [("STREET_ADDRESS", span(text, "Allika 46")), ("STREET_ADDRESS", span(text, "Riisa 12"))]
    assert [text[a:b] for a, b in bench._runs(tokens(text), gold, SKIP)] == ["Allika 46", "Riisa 12"]


def test_a_span_of_skip_words_only_is_dropped_and_edges_are_trimmed() -> None:
    text = "the city of Paris and"
    runs = bench._runs(tokens(text), [("GPE", (0, len(text))), ("GPE", span(text, "the city"))], SKIP)
    assert [text[a:b] for a, b in runs] == ["Paris"]


def test_several_predictions_may_cover_one_gold_span_and_count_once() -> None:
    gold = [(0, 20)]
    # Two halves: each alone has IoU 0.5, together 1.0 -> one hit, one prediction counted.
    assert bench._match(gold, [(0, 10), (10, 20)], 0.9) == (1, 1)
    # (18, 40) overlaps but would lower the IoU (it widens the union more than it adds): not taken,
    # so it counts as a false positive.
    assert bench._match(gold, [(0, 20), (18, 40)], 0.9) == (1, 2)


def test_below_the_threshold_is_a_miss_and_every_prediction_counts() -> None:
    assert bench._match([(0, 20)], [(0, 12)], 0.7) == (0, 1)
    assert bench._match([(0, 20)], [(0, 12)], 0.5) == (1, 1)
    assert bench._match([(0, 10), (30, 40)], [(0, 10)], 0.5) == (1, 1)
    assert bench._match([], [(0, 10)], 0.5) == (0, 1)


def test_dotted_skip_words_are_one_token_so_a_lone_title_is_dropped() -> None:
    text = "Dear Mr. Lopez, P.O. Box 12"
    words = [t for _, _, t in tokens(text)]
    assert "mr." in words
    assert "p.o." in words
    # A span that is only "Mr." holds nothing but a skip word: it is dropped, as upstream drops it.
    runs = bench._runs(tokens(text), [("TITLE", span(text, "Mr.")), ("PERSON", span(text, "Lopez"))], SKIP)
    assert [text[a:b] for a, b in runs] == ["Lopez"]


def test_street_and_place_pieces_join_once_mapped_to_one_type() -> None:
    text = "Allika 46\n Suite 501\n Riisa\n Estonia 62488"
    gold = [("STREET_ADDRESS", span(text, "Allika 46\n Suite 501")), ("GPE", span(text, "Riisa\n Estonia")),
            ("STREET_ADDRESS", span(text, "62488"))]  # fmt: skip
    mapped = [(bench._PROTOCOL_TYPES.get(t, t), sp) for t, sp in gold]
    assert [text[a:b] for a, b in bench._runs(tokens(text), mapped, SKIP)] == [text]
    assert len(bench._runs(tokens(text), gold, SKIP)) == 3  # unmapped, the types keep them apart
