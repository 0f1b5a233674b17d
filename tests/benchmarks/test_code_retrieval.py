"""The code retrieval benchmark's scoring helpers (benchmarks/code_retrieval.py), on local files only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fixtures_bench import load

bench = load("code_retrieval")


def _release(cache: Path, version: str, files: dict[str, str]) -> Path:
    """An already-extracted sdist of package ``pkg`` in the benchmark's cache layout."""
    root = cache / "src" / f"pkg-{version}"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".complete").touch()
    return root


def _defs(*names: str) -> str:
    return "".join(f"def {n}():\n    pass\n\n" for n in names)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(bench, "CACHE", tmp_path)
    sdist = [{"packagetype": "sdist"}]
    releases = {"1.0": sdist, "1.1rc1": sdist, "1.1": sdist, "2.0": sdist, "0.9": sdist}
    (tmp_path / "pypi").mkdir()
    (tmp_path / "pypi" / "pkg.json").write_text(json.dumps({"releases": releases}))
    return tmp_path


def test_a_renamed_gold_file_is_traced_to_its_old_name_by_the_names_it_defines(cache: Path) -> None:
    old = _release(
        cache,
        "1.0",
        {
            "pkg/voting_classifier.py": _defs("fit", "predict", "_weights", "transform")
            + "class Voter:\n    pass\n",
            "pkg/forest.py": _defs("fit", "predict", "grow"),
        },
    )
    later = _release(
        cache,
        "1.1",
        {"pkg/voting.py": _defs("fit", "predict", "_weights", "transform", "score") + "class Voter: ..."},
    )
    assert bench.predecessor("pkg", "1.0", old, "pkg/voting.py") == "pkg/voting_classifier.py"
    # Remembered on disk: the answer stands without the later release.
    assert json.loads((cache / "renames.json").read_text()) == {
        "pkg==1.0:pkg/voting.py": "pkg/voting_classifier.py"
    }
    shutil.rmtree(later)
    assert bench.predecessor("pkg", "1.0", old, "pkg/voting.py") == "pkg/voting_classifier.py"


def test_a_new_file_with_no_old_self_has_no_predecessor(cache: Path) -> None:
    old = _release(cache, "1.0", {"pkg/core.py": _defs("load", "save", "fit")})
    # The later release adds a file sharing one name of three with core.py: Jaccard 0.2, below 0.5.
    _release(cache, "1.1", {"pkg/plots.py": _defs("fit", "draw", "legend")})
    assert bench.predecessor("pkg", "1.0", old, "pkg/plots.py") is None


def test_only_final_releases_after_the_indexed_one_are_read(cache: Path) -> None:
    old = _release(cache, "1.0", {"pkg/a.py": _defs("x", "y")})
    # 0.9 is older and 1.1rc1 a pre-release: neither may be used; 1.1 lacks the file, 2.0 has it.
    _release(cache, "0.9", {"pkg/b.py": _defs("m", "n")})
    _release(cache, "1.1", {"pkg/c.py": _defs("q")})
    _release(cache, "2.0", {"pkg/b.py": _defs("x", "y", "z")})
    assert bench.predecessor("pkg", "1.0", old, "pkg/b.py") == "pkg/a.py"


def test_recall_counts_every_case_and_mrr_rewards_rank() -> None:
    m = bench._metrics([1, 3, None, 6])
    assert m == {"recall_at_1": 0.25, "recall_at_5": 0.5, "mrr": pytest.approx((1 + 1 / 3 + 1 / 6) / 4)}
    assert bench._rank(["a.py", "b.py", "c.py"], ["x.py", "c.py"]) == 3
    assert bench._rank(["a.py"], ["x.py"]) is None


def test_fusion_weights_are_tuned_and_cross_validated_on_cases_they_did_not_see() -> None:
    """retrieval_cv: coordinate ascent finds the channel that ranks the gold file first, and each
    fold is scored with weights chosen on the other folds only."""
    cv = load("retrieval_cv")
    # chunk BM25 puts a neighbour first and the gold file second; the symbol channel names the gold
    # file alone. At equal weights the neighbour's two votes win; more weight on symbols fixes it.
    cases = [
        (
            {"chunk_bm25": [f"n{i}.py", f"g{i}.py"], "file_bm25": [f"n{i}.py"], "symbols": [f"g{i}.py"]},
            "query",
            [f"g{i}.py"],
        )
        for i in range(10)
    ]
    start = {"chunk_bm25": 1.0, "file_bm25": 1.0, "symbols": 1.0}
    channels = ["chunk_bm25", "file_bm25", "symbols"]
    assert cv.ranks(cases, start, 10) == [2] * 10
    weights, k, score = cv.tune(cases, start, 10, channels)
    assert cv.ranks(cases, weights, k) == [1] * 10
    assert score > cv.objective([2] * 10)
    found, chosen = cv.cross_validate(cases, start, 10, 5, channels)
    assert found == [1] * 10
    assert [c["fold"] for c in chosen] == list(range(5))
    # a case no fold's weights can fix stays a miss: CV does not see the answer
    stuck = [*cases, ({"chunk_bm25": ["x.py"], "symbols": ["y.py"]}, "query", ["z.py"])]
    assert cv.cross_validate(stuck, start, 10, 5, channels)[0][-1] is None
