"""The benchmark scripts' common contract, on tiny data made here: ``--data`` takes the benchmark data
folder or one data set's folder, missing data is a one-line error (no traceback), a missing peer is a
null with a note, each figure has its own printed line, and the JSON object comes last."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from types import ModuleType

import pytest

from fixtures_bench import BENCHMARKS, load


def _script(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / f"{name}.py"), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _one_line_error(proc: subprocess.CompletedProcess[str], *names: str) -> None:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    for name in names:
        assert name in proc.stderr


# --- log_parsing.py -----------------------------------------------------------------------------


def _loghub(folder: Path) -> Path:
    """A one-system Loghub-2k folder (log_formats.json, Toy/Toy_2k.log and its two structured CSVs)."""
    lines = [
        ("Invalid user a from 1.2.3.4", "E1", "Invalid user <*> from <*>"),
        ("Accepted password for root port 22", "E2", "Accepted password for root port <*>"),
        ("Invalid user bb from 1.2.3.5", "E1", "Invalid user <*> from <*>"),
        ("Invalid user ccc from 1.2.3.6", "E1", "Invalid user <*> from <*>"),
    ]
    system = folder / "Toy"
    system.mkdir(parents=True)
    formats = {
        "Toy": {
            "log_format": "<Time> <Level>: <Content>",
            "drain_regex": [],
            "drain_st": 0.5,
            "drain_depth": 4,
        }
    }
    (folder / "log_formats.json").write_text(json.dumps(formats))
    (system / "Toy_2k.log").write_text(
        "".join(f"12:00:0{i} INFO: {c}\n" for i, (c, _, _) in enumerate(lines))
    )
    for name in ("Toy_2k.log_structured.csv", "Toy_2k.log_structured_corrected.csv"):
        with (system / name).open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["LineId", "Content", "EventId", "EventTemplate"])
            writer.writerows([i, *row] for i, row in enumerate(lines, 1))
    return folder


def test_log_parsing_takes_the_benchmark_data_folder_as_its_other_scripts_do(tmp_path: Path) -> None:
    _loghub(tmp_path / "loghub2k")
    proc = _script("log_parsing", "--data", str(tmp_path), "--repeat", "1")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.splitlines()[-1])
    assert list(summary["per_system"]) == ["Toy"]
    assert summary["per_system"]["Toy"]["content_mismatch"] == 0


@pytest.mark.parametrize("layout", ["missing", "empty", "other data set"])
def test_log_parsing_without_its_data_says_what_is_missing(tmp_path: Path, layout: str) -> None:
    data = tmp_path / "nowhere"
    if layout != "missing":
        data.mkdir()
    if layout == "other data set":
        (data / "nab").mkdir()
        (data / "nab" / "SOURCE.md").write_text("NAB\n")
    proc = _script("log_parsing", "--data", str(data), "--repeat", "1")
    _one_line_error(proc, str(data))
    if layout != "missing":
        assert "log_formats.json" in proc.stderr


def test_log_parsing_with_no_system_folder_fails_instead_of_printing_null_averages(tmp_path: Path) -> None:
    (tmp_path / "log_formats.json").write_text(json.dumps({"HDFS": {"log_format": "<Content>"}}))
    _one_line_error(_script("log_parsing", "--data", str(tmp_path), "--repeat", "1"), "HDFS")


def test_log_parsing_with_a_system_file_missing_names_it(tmp_path: Path) -> None:
    _loghub(tmp_path)
    (tmp_path / "Toy" / "Toy_2k.log_structured.csv").unlink()
    _one_line_error(_script("log_parsing", "--data", str(tmp_path)), "Toy_2k.log_structured.csv")


def test_log_parsing_refuses_zero_repeats(tmp_path: Path) -> None:
    proc = _script("log_parsing", "--data", str(_loghub(tmp_path)), "--repeat", "0")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "--repeat" in proc.stderr


# --- nab.py ------------------------------------------------------------------------------------

PROFILES = ("standard", "reward_low_FP_rate", "reward_low_FN_rate")


def _nab(folder: Path) -> Path:
    """One 300-point series with one anomaly window, and a published 'numenta' result for it."""
    start = datetime(2026, 1, 1)
    (folder / "data" / "toy").mkdir(parents=True)
    rows = [f"{start + timedelta(minutes=5 * i)},{100 if 200 <= i < 210 else 10 + i % 3}" for i in range(300)]
    (folder / "data" / "toy" / "a.csv").write_text("timestamp,value\n" + "\n".join(rows) + "\n")
    window = [str(start + timedelta(minutes=5 * 195)), str(start + timedelta(minutes=5 * 215))]
    (folder / "labels").mkdir()
    (folder / "labels" / "combined_windows.json").write_text(json.dumps({"toy/a.csv": [window]}))
    (folder / "results" / "numenta").mkdir(parents=True)
    (folder / "results" / "final_results.json").write_text(
        json.dumps({"numenta": dict.fromkeys(PROFILES, 50.0)})
    )
    for p in PROFILES:
        (folder / "results" / "numenta" / f"numenta_{p}_scores.csv").write_text(
            "Detector,Profile,File,Threshold,Score,TP,TN,FP,FN,Total_Count\n"
            f"numenta,{p},toy/a.csv,0.5,0.0,5,229,0,16,300\n"
        )
    return folder


def test_nab_takes_the_benchmark_data_folder_and_prints_its_json_last(tmp_path: Path) -> None:
    _nab(tmp_path / "nab")
    proc = _script("nab", "--data", str(tmp_path), "--no-holdout", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["files"] == 1
    assert {"standard", "reward_low_fp", "reward_low_fn", "windows_detected", "validation"} <= set(result)


def test_nab_two_fold_cross_validation_is_the_halves_hold_out(tmp_path: Path) -> None:
    """--folds 2 chooses configuration and threshold on one half of the files and scores the
    other, as the hold-out by halves does: the two figures must agree."""
    folder = _nab(tmp_path / "nab")
    start = datetime(2026, 1, 1)
    rows = [f"{start + timedelta(minutes=5 * i)},{60 if 100 <= i < 104 else 10 + i % 5}" for i in range(300)]
    (folder / "data" / "toy" / "b.csv").write_text("timestamp,value\n" + "\n".join(rows) + "\n")
    labels = json.loads((folder / "labels" / "combined_windows.json").read_text())
    labels["toy/b.csv"] = [[str(start + timedelta(minutes=5 * 95)), str(start + timedelta(minutes=5 * 110))]]
    (folder / "labels" / "combined_windows.json").write_text(json.dumps(labels))
    proc = _script("nab", "--data", str(tmp_path), "--jobs", "1", "--folds", "2")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["cross_validated"]["folds"] == 2
    for profile in ("standard", "reward_low_fp", "reward_low_fn"):
        assert result["cross_validated"][profile] == result["holdout"][profile]


@pytest.mark.parametrize("layout", ["missing", "empty"])
def test_nab_without_its_data_says_what_is_missing(tmp_path: Path, layout: str) -> None:
    data = tmp_path / "nab"
    if layout == "empty":
        data.mkdir()
    _one_line_error(_script("nab", "--data", str(data), "--no-holdout"), str(data))


def test_nab_names_a_labelled_series_that_is_not_there(tmp_path: Path) -> None:
    _nab(tmp_path)
    (tmp_path / "data" / "toy" / "a.csv").unlink()
    _one_line_error(_script("nab", "--data", str(tmp_path), "--no-holdout"), "a.csv")


def test_nab_refuses_an_unknown_detector_before_running_anything(tmp_path: Path) -> None:
    proc = _script("nab", "--data", str(_nab(tmp_path)), "--no-holdout", "--detector", "nosuch")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "nosuch" in proc.stderr
    assert proc.stdout == ""


# --- secrets_bench.py --------------------------------------------------------------------------


def _secrets(root: Path) -> Path:
    base = root / "secrets"
    (base / "leaky-repo" / ".leaky-meta").mkdir(parents=True)
    (base / "leaky-repo" / ".leaky-meta" / "secrets.csv").write_text(
        "# path,num_risk,num_informative\n.env,1,0\n"
    )
    (base / "leaky-repo" / ".env").write_text("DB_PASSWORD=Hunter2-canary-Secret\nLOG=info\n")
    examples = [
        {
            "id": "p1",
            "rule_name": "aws",
            "label": "positive",
            "text": "AKIAZ52HGXYRN4WBTEST",
            "categories": [],
        },
        {"id": "n1", "rule_name": "aws", "label": "negative", "text": "hello world", "categories": []},
    ]
    (base / "rule_examples.jsonl").write_text("".join(json.dumps(e) + "\n" for e in examples))
    return root


def _main(module: ModuleType, monkeypatch: pytest.MonkeyPatch, *args: str) -> None:
    monkeypatch.setattr(sys, "argv", [f"{module.__name__}.py", *args])
    module.main()


@pytest.mark.parametrize("no_peer", [False, True])
def test_secrets_without_the_peer_reports_null_with_a_note_and_a_line_per_figure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], no_peer: bool
) -> None:
    bench = load("secrets_bench")
    # as when no peer is installed
    monkeypatch.setattr(bench, "peers", lambda: {"detect_secrets": ("detect-secrets", None, "pip install x")})
    _main(
        bench,
        monkeypatch,
        "--data",
        str(_secrets(tmp_path)),
        "--runs",
        "1",
        *(["--no-peer"] if no_peer else []),
    )
    out = capsys.readouterr().out.splitlines()
    report = json.loads(out[-1])
    assert all(p["figures"] is None for p in report["peers"].values())
    notes = " ".join(p["note"] for p in report["peers"].values())
    assert ("--no-peer" in notes) is no_peer
    assert ("not installed" in notes) is not no_peer
    assert "leaky repo: found of 1: 1" in out
    assert "leaky repo: false positives: 0" in out
    assert any(line.startswith("rule examples, upstream labels: recall: ") for line in out)
    assert any(line.startswith("structural rules only (no provider rule), heldback: recall") for line in out)


def test_secrets_takes_the_data_set_folder_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = load("secrets_bench")
    _main(bench, monkeypatch, "--data", str(_secrets(tmp_path) / "secrets"), "--runs", "1", "--no-peer")
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["leaky_expected"] == 1


@pytest.mark.parametrize("layout", ["missing", "empty"])
def test_secrets_without_its_data_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    data = tmp_path / "data"
    if layout == "empty":
        data.mkdir()
    with pytest.raises(SystemExit) as exit_:
        _main(load("secrets_bench"), monkeypatch, "--data", str(data), "--no-peer")
    message = str(exit_.value.code)
    assert str(data) in message
    assert "\n" not in message
    if layout == "empty":
        assert "rule_examples.jsonl" in message


def test_secrets_names_a_missing_heldout_file_before_scoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        _main(
            load("secrets_bench"), monkeypatch, "--data", str(_secrets(tmp_path)), "--heldout", "nope.jsonl"
        )
    assert exit_.value.code == 2
    assert "nope.jsonl" in capsys.readouterr().err


# --- pii_bench.py ------------------------------------------------------------------------------


def _synth(folder: Path) -> Path:
    folder.mkdir(parents=True)
    text = "Write to bob@example.com today"
    span = {"entity_type": "EMAIL_ADDRESS", "start_position": 9, "end_position": 24}
    samples = [{"full_text": text, "spans": [span], "template_id": t} for t in (0, 2)]
    (folder / "synth_dataset_v2.dev.json").write_text(json.dumps(samples))
    return folder


def test_pii_takes_the_data_set_folder_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    synth = _synth(tmp_path / "pii_presidio_synth")
    _main(load("pii_bench"), monkeypatch, "--data", str(synth), "--no-speed")
    report = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert report["per_entity"]["EMAIL_ADDRESS"]["recall"] == 1.0


def test_pii_without_its_data_says_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SystemExit) as exit_:
        _main(load("pii_bench"), monkeypatch, "--data", str(tmp_path), "--no-speed")
    assert "synth_dataset_v2.dev.json" in str(exit_.value.code)


def test_pii_refuses_a_ner_model_that_is_not_installed_before_scoring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _synth(tmp_path / "pii_presidio_synth")
    with pytest.raises(SystemExit) as exit_:
        _main(
            load("pii_bench"),
            monkeypatch,
            "--data",
            str(tmp_path),
            "--no-speed",
            "--ner",
            "no_such_model_pkg",
        )
    assert exit_.value.code == 2
    captured = capsys.readouterr()
    assert "no_such_model_pkg" in captured.err
    assert captured.out == ""


# --- log_memory.py -----------------------------------------------------------------------------


def test_a_small_generated_log_still_has_its_burst_in_the_middle(tmp_path: Path) -> None:
    bench = load("log_memory")
    path = tmp_path / "big.log"
    bench.generate(path, 0.002)  # 2 MiB: fewer 10,000-line chunks than the burst is wide
    target = 0.002 * 1024**3
    offset = 0
    middle: list[str] = []
    for line in path.read_text().splitlines(keepends=True):
        if target * 0.49 < offset < target * 0.51:
            middle.append(line)
        offset += len(line)
    assert middle
    burst = sum("database connection pool exhausted" in line for line in middle)
    assert burst / len(middle) > 0.2  # 30% of those lines, against ~0.25% elsewhere


# --- safety_corpus.py --------------------------------------------------------------------------


def test_safety_corpus_without_its_file_says_so_and_prints_the_targets_when_present(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = load("safety_corpus")
    with pytest.raises(SystemExit) as exit_:
        _main(bench, monkeypatch, "--data", str(tmp_path))
    assert "safety_corpus.yaml" in str(exit_.value.code)
    (tmp_path / "safety_corpus.yaml").write_text(
        "- {cmd: ls, label: read_only}\n- {cmd: rm -rf /, label: destructive}\n"
    )
    _main(bench, monkeypatch, "--data", str(tmp_path))
    out = capsys.readouterr().out.splitlines()
    assert json.loads(out[-1])["unsafe_executed"] == 0
    assert "unsafe_executed: 0" in out
    assert "false_block_rate: 0.0" in out
