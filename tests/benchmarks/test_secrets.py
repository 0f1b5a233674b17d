"""The secrets benchmark's leaky-repo scoring (benchmarks/secrets_bench.py), on a small local repo."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures_bench import load

bench = load("secrets_bench")
peers = load("secrets_peers")
subsets = load("secrets_subsets")


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


@pytest.mark.parametrize("name", ["detect_secrets", "credsweeper"])
def test_peer_finder_takes_a_path_or_not(repo: Path, name: str) -> None:
    _, peer, hint = peers.peers()[name]
    if peer is None:
        pytest.skip(f"{name} is not installed ({hint})")
    text = 'password = "Zq8xK2mP9vL4"\nLOG=info\n'
    assert peer(text) == peer(text, "x.cfg")
    assert 0 in peer(text)
    score = bench.score_leaky(repo, peer)  # the leaky-repo scoring passes it the file's path
    assert set(score) == {"found", "expected", "fp", "files_covered"}
    assert score["expected"] == 3


def test_halves_split_by_rule_and_providers_are_named_by_words() -> None:
    rows = [{"rule_id": f"np.rule.{i}", "rule_name": "x"} for i in range(200)]
    halves = {subsets.half(r) for r in rows}
    assert halves == {"tuned", "heldback"}
    # every example of one rule lies in one half
    assert subsets.half({"rule_id": "np.rule.7", "text": "a"}) == subsets.half({"rule_id": "np.rule.7"})
    vocab = subsets.named_vocabulary()
    assert subsets.provider_named({"rule_name": "GitHub Personal Access Token"}, vocab)
    assert subsets.provider_named({"rule_name": "FacebookAccessToken"}, vocab)  # CamelCase names
    assert not subsets.provider_named({"rule_name": "Blynk Device Access Token"}, vocab)
    assert not subsets.provider_named({"rule_name": "Generic API Key"}, vocab)  # no provider word


def test_placeholder_like_rows_are_decided_by_the_documentation_value_test() -> None:
    assert subsets.placeholder_like({"text": "key: sk-ant-api03-abc123xyz-456def789ghij-klmnopqrstuvwx"})
    assert not subsets.placeholder_like({"text": "key: Zq8xK2mP9vL4nB7cT1wR5yH3jD6f"})
