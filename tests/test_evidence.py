"""The evidence model: bounded series, template tables and timelines, and text mapping for masking."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from devops_agent.events import ToolResultEvent, event_from_json, event_to_json
from devops_agent.evidence import (
    MAX_POINTS,
    MAX_TEMPLATES,
    MAX_TEXT,
    MAX_TIMELINE,
    AnomalyWindow,
    Evidence,
    TemplateRow,
    TimelineEntry,
    build_timeline,
    downsample,
    entry,
    make_series,
    parse_time,
    template_table,
)

T0 = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


def test_downsampling_keeps_a_one_point_spike_and_time_order() -> None:
    points = [(float(i), 1.0) for i in range(10_000)]
    points[7_777] = (7_777.0, 99.0)  # one sample in 10,000: every-n-th sampling would miss it
    points[3_333] = (3_333.0, -5.0)
    out = downsample(points)
    assert len(out) <= MAX_POINTS
    assert (7_777.0, 99.0) in out
    assert (3_333.0, -5.0) in out
    assert [t for t, _ in out] == sorted(t for t, _ in out)
    assert out[0][0] < 100
    assert out[-1][0] > 9_900


def test_short_series_pass_whole_and_non_finite_values_are_dropped() -> None:
    points = [(1.0, 1.0), (2.0, float("nan")), (3.0, float("inf")), (float("nan"), 5.0), (4.0, 2.0)]
    assert downsample(points) == [(1.0, 1.0), (4.0, 2.0)]
    series = make_series("up", {"job": "node"}, points)
    assert series.points_total == 2
    assert series.points == [(1.0, 1.0), (4.0, 2.0)]


def test_a_series_keeps_its_latest_anomaly_windows_and_cuts_long_text() -> None:
    windows = [AnomalyWindow(start=T0 + timedelta(minutes=i), end=T0, score=i) for i in range(30)]
    series = make_series("x" * 1000, {"path": "p" * 1000}, [(1.0, 1.0)], windows)
    assert len(series.anomalies) == 20
    assert series.anomalies[-1].score == 29
    assert len(series.name) == MAX_TEXT
    assert series.name.endswith("…")
    assert len(series.labels["path"]) == MAX_TEXT


def test_template_table_keeps_the_most_frequent() -> None:
    rows = [TemplateRow(template=f"t{i}", count=i) for i in range(80)]
    table = template_table(rows, total=80, lines=3160)
    assert len(table.rows) == MAX_TEMPLATES
    assert [r.count for r in table.rows] == list(range(79, 29, -1))
    assert (table.total, table.lines, table.errors_only) == (80, 3160, False)


def test_timeline_is_in_time_order_without_duplicates_and_drops_tool_calls_first() -> None:
    moments = [entry(T0 + timedelta(minutes=i), "commit", f"c{i}") for i in range(60)]
    calls = [entry(T0 + timedelta(minutes=i), "tool_call", f"call {i}", f"id{i}") for i in range(60)]
    timeline = build_timeline([*reversed(moments), *calls, moments[0]])
    assert len(timeline) == MAX_TIMELINE
    assert sum(e.kind == "commit" for e in timeline) == 60  # every moment kept
    assert [e.at for e in timeline] == sorted(e.at for e in timeline)
    kept_calls = [e.label for e in timeline if e.kind == "tool_call"]
    assert kept_calls == [f"call {i}" for i in range(20, 60)]  # the latest calls


def test_a_moment_sorts_before_a_call_at_the_same_time() -> None:
    timeline = build_timeline([entry(T0, "tool_call", "call"), entry(T0, "alert_start", "fired")])
    assert [e.kind for e in timeline] == ["alert_start", "tool_call"]


def test_map_text_touches_text_not_numbers_or_times() -> None:
    ev = Evidence(
        series=[
            make_series(
                "latency",
                {"host": "db1"},
                [(1.0, 2.0)],
                [AnomalyWindow(start=T0, end=T0, score=3, explanation="db1")],
            )
        ],
        templates=template_table([TemplateRow(template="on db1", count=4, sample="db1 x")], total=1, lines=4),
        timeline=[TimelineEntry(at=T0, kind="commit", label="db1 fix")],
    )
    up = ev.map_text(str.upper)
    assert up.series[0].name == "LATENCY"
    assert up.series[0].labels == {"host": "DB1"}  # label names stay
    assert up.series[0].points == [(1.0, 2.0)]
    assert up.series[0].anomalies[0].explanation == "DB1"
    assert up.templates is not None
    assert (up.templates.rows[0].template, up.templates.rows[0].sample, up.templates.rows[0].count) == (
        "ON DB1",
        "DB1 X",
        4,
    )
    assert up.timeline[0].label == "DB1 FIX"
    assert up.timeline[0].at == T0


def test_for_call_stamps_the_call_on_every_entry() -> None:
    ev = Evidence(timeline=[entry(T0, "commit", "a"), entry(T0, "deploy", "b")])
    assert {e.tool_call_id for e in ev.for_call("call-7").timeline} == {"call-7"}


def test_parse_time_reads_iso_and_unix_seconds() -> None:
    assert parse_time(T0) is T0
    assert parse_time(T0.replace(tzinfo=None)) == T0  # a naive datetime is UTC too
    assert parse_time("2026-11-27T12:00:00Z") == T0
    assert parse_time("2026-11-27T12:00:00") == T0  # naive is UTC
    assert parse_time(T0.timestamp()) == T0
    assert parse_time("15m") is None
    assert parse_time(None) is None
    assert parse_time(True) is None


def test_the_event_carries_evidence_through_json() -> None:
    ev = Evidence(series=[make_series("up", {}, [(1.0, 1.0), (2.0, 0.0)])])
    event = ToolResultEvent(
        session_id="s", run_id="r", tool_call_id="c", tool="t", status="success", evidence=ev
    )
    back = event_from_json(event_to_json(event))
    assert isinstance(back, ToolResultEvent)
    assert back.evidence == ev
    old = event_from_json(
        '{"type":"tool_result","session_id":"s","run_id":"r","tool_call_id":"c","tool":"t","status":"ok"}'
    )
    assert isinstance(old, ToolResultEvent)
    assert old.evidence is None
