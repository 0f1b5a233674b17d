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
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

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


def _rows(n: int = 120, spike_at: int = 80, spike: float = 400.0) -> list[tuple[datetime, float]]:
    rng = random.Random(7)
    return [
        (START + timedelta(minutes=i), spike if i == spike_at else round(rng.gauss(100, 2), 2))
        for i in range(n)
    ]


def _csv(path: Path, rows: list[tuple[datetime, float]]) -> Path:
    path.write_text("timestamp,value\n" + "".join(f"{t.isoformat()},{v!r}\n" for t, v in rows))
    return path


def _strict_json(text: str) -> Any:
    """JSON as RFC 8259 has it: NaN and Infinity are not JSON (jq and most parsers refuse them)."""

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in --json output")

    return json.loads(text, parse_constant=refuse)


def _strict_anomalies(path: Path) -> tuple[dict[str, Any], str]:
    proc = cli("metrics", "anomalies", "--file", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = _strict_json(proc.stdout)
    return data, proc.stderr


def test_a_csv_shorter_than_the_detector_needs_is_an_error_not_no_anomalies(tmp_path: Path) -> None:
    # 45 points with a spike to 900 at the end: the detector scores nothing before 48 points, so
    # "no anomalies found" (exit 0) was a false all-clear
    path = _csv(tmp_path / "short.csv", _rows(n=45, spike_at=40, spike=900.0))
    proc = cli("metrics", "anomalies", "--file", str(path))
    assert_one_line_error(proc, 2, "short.csv: 45 points is too few to judge", "needs at least 49")
    assert "no anomalies" not in proc.stdout + proc.stderr


def test_a_concatenated_export_is_read_once_and_its_spike_still_found(tmp_path: Path) -> None:
    # Two overlapping exports pasted together: every sample twice. Kept twice, half the steps are
    # exactly 0, the rate-of-change baseline collapses, and the real spike was missed while
    # nonsense "spikes" of 0.96x were reported.
    rows = _rows()
    data, stderr = _strict_anomalies(_csv(tmp_path / "twice.csv", rows + rows))
    assert [(a["kind"], a["start"][:16]) for a in data["anomalies"]] == [("spike", "2026-11-25T09:20")]
    assert data["skipped"]["duplicate"] == 120
    assert "skipped 120 row(s) repeating an earlier row" in stderr


def test_a_json_file_is_named_as_json_not_too_few_points(tmp_path: Path) -> None:
    path = tmp_path / "series.json"
    path.write_text(json.dumps([{"timestamp": t.isoformat(), "value": v} for t, v in _rows()]))
    proc = cli("metrics", "anomalies", "--file", str(path))
    assert_one_line_error(proc, 2, "series.json: looks like JSON", "timestamp,value")
    assert "too few" not in proc.stderr


def test_values_near_the_float_limit_give_valid_json_and_a_readable_ratio(tmp_path: Path) -> None:
    data, _ = _strict_anomalies(_csv(tmp_path / "huge.csv", _rows(spike=1.7e308)))
    [found] = data["anomalies"]  # _strict_json: the score was NaN (inf / inf), not JSON
    assert found["score"] == 1.0
    assert "1.7e+306×" in found["explanation"], "not a 300-digit fixed-point ratio"
    assert len(found["explanation"]) < 200

    times = [t for t, _ in _rows()]
    values = [v for _, v in _rows(spike=1.7e308)]
    assert all(s == s for s in detect(times, values).scores), "no NaN scores"


@pytest.mark.parametrize(
    ("zone", "shown"),
    [(UTC, "at 2026-11-25 09:20 UTC"), (timezone(timedelta(hours=2)), "at 2026-11-25 11:20 +02:00")],
    ids=["utc", "offset"],
)
def test_the_explanation_says_which_zone_its_time_is_in(tmp_path: Path, zone: timezone, shown: str) -> None:
    rows = [(t.astimezone(zone), v) for t, v in _rows()]
    data, _ = _strict_anomalies(_csv(tmp_path / "tz.csv", rows))
    [found] = data["anomalies"]
    assert found["explanation"].endswith(shown), found["explanation"]


def test_a_level_shift_four_days_after_a_4x_spike_is_reported(tmp_path: Path) -> None:
    # The +60 shift alone was found; after a 4x spike, even 4 days earlier, it was not: the spike
    # had set the bar for "unusual" and the shift read as ordinary.
    rng = random.Random(3)
    shift_at = 6 * 288
    rows = []
    for i in range(7 * 288):  # a week at 5 minutes
        value = rng.gauss(100, 5) * (4 if 2 * 288 <= i < 2 * 288 + 6 else 1) + (60 if i >= shift_at else 0)
        rows.append((START + timedelta(minutes=5 * i), round(value, 2)))
    data, _ = _strict_anomalies(_csv(tmp_path / "latency.csv", rows))
    found = [(a["kind"], a["start"]) for a in data["anomalies"]]
    assert found == [
        ("spike", rows[2 * 288][0].isoformat()),
        ("level_shift", rows[shift_at][0].isoformat()),
    ], found


def test_slo_warns_when_the_error_selector_matches_nothing(prometheus_url: str) -> None:
    env = {"DEVOPS_AGENT_PROMETHEUS__URL": prometheus_url}
    requests = "prometheus_http_requests_total"  # the server counts its own API requests
    typo = cli(
        "metrics", "slo", "--requests", requests, "--errors", "promethues_http_requests_total", env=env
    )
    assert typo.returncode == 0, typo.stderr
    # the server began minutes ago: no budget figure is claimed for 30 days (issue 21)
    assert "error budget left is not known" in " ".join(typo.stdout.split())
    assert (
        "warning: the error query 'promethues_http_requests_total' matched no series over 30d" in typo.stderr
    )

    matched = cli("metrics", "slo", "--requests", requests, "--errors", f'{requests}{{code="200"}}', env=env)
    assert matched.returncode in (0, 3), matched.stderr
    assert "matched no series" not in matched.stderr


def test_a_series_of_only_nan_samples_says_so_instead_of_asking_for_a_finer_step(prometheus_url: str) -> None:
    # 0/0 at every step: Prometheus returns ~240 NaN samples; "0 points each ... use a finer step"
    # sent the user after the wrong cause
    proc = cli(
        "metrics",
        "anomalies",
        "vector(0) / 0",
        "--since",
        "1h",
        env={"DEVOPS_AGENT_PROMETHEUS__URL": prometheus_url},
    )
    assert_one_line_error(proc, 1, "NaN or Inf sample(s) left out", "guard the division")
    assert "finer step" not in proc.stderr


def test_an_alert_whose_series_is_too_short_is_not_reported_as_no_anomaly(
    prometheus_url: str, tmp_path: Path
) -> None:
    # A series that only began 3 minutes ago (a new pod, a new metric): a handful of points at the
    # 30 s step the alert's range gets. The finding said "No anomaly in ..." and the summary
    # "No problems found": an all-clear for a firing alert nothing was judged about.
    now = datetime.now(UTC).replace(microsecond=0)
    born = now - timedelta(minutes=3)
    expr = f"(vector(time()) > {born.timestamp():.0f}) > 0"
    alert = {
        "status": "firing",
        "labels": {"alertname": "NewSeries", "severity": "critical", "job": "api"},
        "annotations": {"summary": "a series that just appeared"},
        "startsAt": (now - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": f"http://prometheus:9090/graph?g0.expr={quote(expr)}&g0.tab=1",
    }
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({"version": "4", "status": "firing", "alerts": [alert]}))
    proc = cli(
        "investigate",
        "--alert",
        str(payload),
        "--json",
        env={"DEVOPS_AGENT_PROMETHEUS__URL": prometheus_url},
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)["report"]
    # nothing was judged: a gap that says so, and the verdict "could not tell" (it was a medium
    # finding, which made the report claim a problem it had not found either)
    assert not [f for f in report["findings"] if f.get("source", "").startswith("prom_anomalies")]
    (gap,) = [g for g in report["gaps"] if g["tool"] == "prom_anomalies"]
    assert gap["reason"].startswith("could not judge"), gap["reason"]
    assert "too few points to judge" in gap["reason"]
    assert report["verdict"] == "inconclusive"
    assert not str(report["summary"]).startswith("No problems found"), report["summary"]


def test_a_raised_step_is_said_not_silently_done(prometheus_url: str) -> None:
    # 1 day at 1 s would be 86,401 points a series: the step is raised to fit the point limit, and
    # a coarser step can hide a short spike, so the user is told (stderr and --json)
    proc = cli(
        "metrics",
        "anomalies",
        "vector(1)",
        "--since",
        "1d",
        "--step",
        "1s",
        "--json",
        env={"DEVOPS_AGENT_PROMETHEUS__URL": prometheus_url},
    )
    assert proc.returncode == 0, proc.stderr
    assert "warning: step raised from 1s to " in proc.stderr
    data = _strict_json(proc.stdout)
    assert data["step_adjusted"] is True
    assert data["step_s"] > 1
    fine = cli(
        "metrics", "anomalies", "vector(1)", "--since", "1h", "--step", "1m", "--json",
        env={"DEVOPS_AGENT_PROMETHEUS__URL": prometheus_url},
    )  # fmt: skip
    assert fine.returncode == 0, fine.stderr
    assert "step raised" not in fine.stderr
    assert _strict_json(fine.stdout)["step_adjusted"] is False


def test_a_level_shift_after_a_spike_is_reported_from_prometheus(prometheus_url: str) -> None:
    # The same through a PromQL range: deterministic noise (a sine sampled at an irrational
    # fraction of its period), a 6-minute 4x spike 4 hours ago and a +60 shift an hour ago.
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    spike, shift = (now - timedelta(hours=4)).timestamp(), (now - timedelta(hours=1)).timestamp()
    t = "vector(time())"
    expr = (
        f"100 + 5 * sin({t} * 0.0647) + 300 * ({t} >= bool {spike:.0f}) * ({t} < bool {spike + 360:.0f})"
        f" + 60 * ({t} >= bool {shift:.0f})"
    )
    proc = cli(
        "metrics",
        "anomalies",
        expr,
        "--since",
        "6h",
        "--step",
        "1m",
        "--json",
        env={"DEVOPS_AGENT_PROMETHEUS__URL": prometheus_url},
    )
    assert proc.returncode == 0, proc.stderr
    found = [(a["kind"], datetime.fromisoformat(a["start"])) for a in _strict_json(proc.stdout)["anomalies"]]
    assert [kind for kind, _start in found] == ["spike", "level_shift"], found
    assert abs(found[0][1].timestamp() - spike) <= 60
    assert abs(found[1][1].timestamp() - shift) <= 60
