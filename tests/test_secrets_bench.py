"""The secrets benchmark's leaky-repo scoring (benchmarks/secrets_bench.py), on a small local repo."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_scripts import load

bench = load("secrets_bench")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".leaky-meta").mkdir()
    (tmp_path / ".leaky-meta" / "secrets.csv").write_text(
        "# path,num_risk,num_informative\nconfig/master.key,1,0\n.env,1,1\nREADME,0,0\n"
    )
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "master.key").write_text("3ebf21f8e5d1ab86b27a720842c3bb56\n")
    (tmp_path / ".env").write_text(
        "DB_PASSWORD=Hunter2-canary\nDB_HOST=billing-db-7.prod.corp.example\nLOG=info\n"
    )
    (tmp_path / "README").write_text("see db1.corp.example for details\n")
    return tmp_path


def test_leaky_scoring_counts_lines_per_file_and_passes_the_path(repo: Path) -> None:
    score = bench.score_leaky(repo, bench.ours_lines)
    # master.key is found by its name, both .env lines count, the README host is one false positive
    assert score == {"found": 3, "expected": 3, "fp": 1, "files_covered": 3}
    # without the path the bare key is nothing: the finder must be given it
    assert bench.score_leaky(repo, lambda text, path="": bench.ours_lines(text))["found"] == 2
    assert bench.score_leaky(repo, bench.ours_secret_lines) == {
        "found": 2, "expected": 3, "fp": 0, "files_covered": 2,
    }  # fmt: skip


def test_peer_finder_takes_a_path_or_not(repo: Path) -> None:
    peer = bench._detect_secrets_finder()
    if peer is None:
        pytest.skip("detect-secrets is not installed (extra bench)")
    assert peer("password = 'Hunter2-canary-Secret'") == peer("password = 'Hunter2-canary-Secret'", "x.cfg")
    assert bench.score_leaky(repo, peer)["files_covered"] >= 1
