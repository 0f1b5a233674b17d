"""benchmarks/log_fresh.py: the call-site ground truth read from real record formats, and a saved
corpus scored again through ``--data``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fixtures_bench import BENCHMARKS, load

fresh = load("log_fresh")


def test_chromium_records_name_their_call_site() -> None:
    text = (
        "[24655:24692:1128/040355.497691:VERBOSE1:components/x/installer.cc:513] StartRegistration for Hints\n"
        "[1:2:1128/040355.5:ERROR:dbus/bus.cc(405)] Failed to connect to the bus: no socket\n"
        "/usr/bin/chromium: 9: [: unexpected operator\n"
        "  continuation of a histogram dump\n"
    )
    assert fresh.chromium_records(text) == [
        ("components/x/installer.cc:513", "StartRegistration for Hints"),
        ("dbus/bus.cc(405)", "Failed to connect to the bus: no socket"),
    ]


def test_logfmt_records_name_their_caller() -> None:
    text = (
        'ts=2026-11-28T04:03:55.980Z caller=main.go:513 level=info msg="No retention set" duration=15d\n'
        "not a logfmt line\n"
    )
    assert fresh.logfmt_records(text) == [("main.go:513", 'level=info msg="No retention set" duration=15d')]


def test_a_saved_corpus_is_scored_again_with_one_line_per_figure_and_json_last(tmp_path: Path) -> None:
    folder = tmp_path / "fresh_logs"
    folder.mkdir()
    rows = [f"a.cc:1\tOpened session {i} for user{i}" for i in range(8)]
    rows += [f"b.cc:2\tClosed connection to 10.0.0.{i} after {i} ms" for i in range(8)]
    (folder / "toy.tsv").write_text("\n".join(rows) + "\n")
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "log_fresh.py"), "--data", str(tmp_path), "--no-peer"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    report = json.loads(lines[-1])
    assert report["source"] == str(folder)
    assert report["corpora"]["toy"] == {"lines": 16, "call_sites": 2, "ga": 1.0, "drain3_ga": None}
    assert "toy: grouping accuracy, ours: 1.0" in lines
    assert "toy: grouping accuracy, drain3: None (--no-peer)" in lines
