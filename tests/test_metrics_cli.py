"""``devops-agent metrics anomalies --file``: the CSV reader as a user meets it, real files, real CLI.

Every series is two hours of one-minute samples around 100 with one spike to 400 at 09:20; the
tests change how the file is written (order, encoding, delimiter, time unit, holes) and check
that the spike is still found, or that the error is one line with exit code 2.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from devops_agent.analysis import detect
from devops_agent.analysis.context import ContextDetector
from devops_agent.cli.metrics_cmd import _read_csv
from fixtures_cli import assert_one_line_error, cli

pytestmark = pytest.mark.slow

START = datetime(2026, 11, 25, 8, 0, tzinfo=UTC)
SPIKE_AT = 80  # 09:20


def _series() -> list[tuple[datetime, str]]:
    rng = random.Random(7)
    return [
        (START + timedelta(minutes=i), "400" if i == SPIKE_AT else f"{rng.gauss(100, 2):.2f}")
        for i in range(120)
    ]


def _write(
    path: Path,
    rows: list[tuple[datetime, str]],
    *,
    sep: str = ",",
    stamp: Callable[[datetime], str] = datetime.isoformat,
) -> Path:
    lines = [f"timestamp{sep}value"] + [f"{stamp(t)}{sep}{v}" for t, v in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def _anomalies(path: Path) -> tuple[dict[str, object], str]:
    proc = cli("metrics", "anomalies", "--file", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout), proc.stderr


def _assert_spike_found(data: dict[str, object]) -> None:
    found = data["anomalies"]
    assert isinstance(found, list)
    assert [(a["kind"], a["start"][:16]) for a in found] == [("spike", "2026-11-25T09:20")]


def test_non_finite_values_are_skipped_counted_and_the_spike_still_found(tmp_path: Path) -> None:
    rows = _series()
    for i, bad in zip((20, 50, 51, 100), ("nan", "inf", "-inf", "1e309"), strict=True):
        rows[i] = (rows[i][0], bad)
    data, stderr = _anomalies(_write(tmp_path / "prom.csv", rows))
    _assert_spike_found(data)
    assert data["skipped"] == {"non_finite": 4, "missing_value": 0, "duplicate": 0}
    assert "skipped 4 row(s) with a non-finite value" in stderr

    table = cli("metrics", "anomalies", "--file", str(tmp_path / "prom.csv"))
    assert table.returncode == 0, table.stderr
    assert "spiked to 400" in table.stdout


def test_only_non_finite_values_is_too_few_points_and_says_why(tmp_path: Path) -> None:
    rows = [(t, "NaN") for t, _ in _series()]
    proc = cli("metrics", "anomalies", "--file", str(_write(tmp_path / "gaps.csv", rows)))
    assert_one_line_error(proc, 2, "0 points is too few", "120 row(s) without a finite value were skipped")


def test_the_detector_treats_a_non_finite_value_as_missing() -> None:
    context = ContextDetector(min_history=0)
    for v in (1.0, 2.0, 3.0, 4.0):
        context.update(v)
    assert context.update(math.nan) == 0.0
    assert context.update(math.inf) == 0.0
    assert context.count == 4, "nothing was learnt from the missing samples"
    assert context._range.bounds() == (1.0, 4.0)

    rows = _series()
    times = [t for t, _ in rows]
    values = [float(v) for _, v in rows]
    values[50] = math.nan
    found = detect(times, values).anomalies
    assert [(a.kind, a.start) for a in found] == [("spike", times[SPIKE_AT])]


@pytest.mark.parametrize("order", ["reversed", "shuffled"])
def test_rows_out_of_time_order_are_sorted_before_detection(tmp_path: Path, order: str) -> None:
    rows = _series()
    if order == "reversed":
        rows.reverse()
    else:
        random.Random(3).shuffle(rows)
    data, stderr = _anomalies(_write(tmp_path / f"{order}.csv", rows))
    _assert_spike_found(data)
    assert "sorted by timestamp" in stderr


def test_equal_timestamps_keep_their_file_order(tmp_path: Path) -> None:
    rows = _series()
    rows[10] = (rows[9][0], "7")
    rows[11] = (rows[9][0], "5")
    rows.reverse()  # file order at the duplicate stamp: 5, 7, then the original row 9
    series = _read_csv(_write(tmp_path / "dup.csv", rows))
    assert series.reordered
    at = series.times.index(rows[-10][0])
    assert series.values[at : at + 3] == [5.0, 7.0, float(rows[-10][1])]
    assert series.times == sorted(series.times)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("latin.csv", "zeit,wert°\n2026-11-25T08:00:00Z,1\n".encode("latin-1")),
        ("export.bin", bytes(range(256)) * 4),
    ],
)
def test_a_file_that_is_not_utf8_is_a_one_line_error(tmp_path: Path, name: str, content: bytes) -> None:
    (tmp_path / name).write_bytes(content)
    proc = cli("metrics", "anomalies", "--file", str(tmp_path / name))
    assert_one_line_error(proc, 2, name, "not UTF-8", "timestamp,value")


def test_a_utf8_bom_is_not_part_of_the_first_timestamp(tmp_path: Path) -> None:
    path = tmp_path / "bom.csv"
    path.write_text("".join(f"{t.isoformat()},{v}\n" for t, v in _series()), encoding="utf-8-sig")
    series = _read_csv(path)
    assert (series.times[0], len(series.values)) == (START, 120), "the first row is data, not a header"


@pytest.mark.parametrize(
    "stamp",
    [
        lambda t: f"{t.timestamp():.0f}",
        lambda t: f"{t.timestamp() * 1000:.0f}",
        lambda t: f"{t.timestamp() * 1_000_000_000:.0f}",
    ],
    ids=["seconds", "milliseconds", "nanoseconds"],
)
def test_epoch_timestamps_in_seconds_or_finer_units(tmp_path: Path, stamp: Callable[[datetime], str]) -> None:
    data, _ = _anomalies(_write(tmp_path / "epoch.csv", _series(), stamp=stamp))
    _assert_spike_found(data)


@pytest.mark.parametrize("sep", [";", "\t"], ids=["semicolon", "tab"])
def test_semicolon_and_tab_separated_files_are_read(tmp_path: Path, sep: str) -> None:
    data, _ = _anomalies(_write(tmp_path / "other.csv", _series(), sep=sep))
    _assert_spike_found(data)


def test_an_unknown_delimiter_is_a_one_line_error_naming_the_row(tmp_path: Path) -> None:
    proc = cli("metrics", "anomalies", "--file", str(_write(tmp_path / "pipe.csv", _series(), sep="|")))
    assert_one_line_error(proc, 2, "pipe.csv:2: expected 'timestamp,value'", "separates the columns")


def test_empty_and_absent_values_are_both_skipped_and_counted(tmp_path: Path) -> None:
    path = _write(tmp_path / "holes.csv", _series())
    lines = path.read_text().splitlines()
    lines[31] = lines[31].split(",")[0] + ","  # empty value
    lines[61] = lines[61].split(",")[0]  # no value column
    path.write_text("\n".join(lines) + "\n")
    data, stderr = _anomalies(path)
    _assert_spike_found(data)
    assert data["skipped"] == {"non_finite": 0, "missing_value": 2, "duplicate": 0}
    assert "skipped 2 row(s) with no value" in stderr
