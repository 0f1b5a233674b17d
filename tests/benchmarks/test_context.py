"""The context benchmarks run, end with their JSON line, and hold their invariants at small size."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "benchmarks"


def last_json(*args: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=ROOT, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_structured_output_accepts_no_invalid_answer() -> None:
    out = last_json("benchmarks/structured_output.py", "--per-kind", "3")
    assert out["cases"] == 69
    assert out["accepted_invalid"] == 0
    assert out["peer_accepted_invalid"] == 15, "the corpus does hold answers a naive validator takes"
    assert out["recovered"] + out["escalated"] + out["failed"] == 69


@pytest.mark.skipif(not (DATA / "loghub2k").is_dir(), reason="benchmark data not here (../shared/benchmarks)")
def test_context_budget_keeps_every_request_in_the_window() -> None:
    out = last_json("benchmarks/context_budget.py", "--steps", "50", "--kb", "40", "--early", "6")
    assert out["over_window"] == 0
    assert out["early_findings_kept"] == 1.0
    runs = out["runs"]
    assert isinstance(runs, dict)
    assert runs["tokenizer"]["compaction_events"] > 0, "the run needed the budget"
    assert runs["tokenizer"]["over_window_without_budget"] > 0
    assert runs["naive"]["early_findings_kept"] < 1.0, "the peer loses what the budget keeps"
    assert runs["tokenizer"]["requests"] == 51


@pytest.mark.skipif(not (DATA / "loghub2k").is_dir(), reason="benchmark data not here (../shared/benchmarks)")
def test_token_count_measures_every_method() -> None:
    out = last_json("benchmarks/token_count.py")
    methods = out["methods"]
    assert isinstance(methods, dict)
    assert methods["tokenizer"]["o200k"]["mae"] == 0.0
    assert methods["estimate"]["o200k"]["mae"] < methods["chars/4"]["o200k"]["mae"]
    from devops_agent.policies.context.tokens import ESTIMATE_MARGIN

    assert out["margin_estimate"] <= ESTIMATE_MARGIN + 0.005, "the shipped margin covers the measured error"
