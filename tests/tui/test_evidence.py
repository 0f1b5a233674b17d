"""Evidence in the TUI, driven headless with Pilot over the real session service: the scripted
model asks the real Prometheus for the anomalies of a series that jumps and the real logs tool for
a real log's errors; the tool panels draw a sparkline with the anomaly window marked under the
jump, a template table with counts (``s`` flips the order), and the report screen an incident
timeline in time order. An SVG snapshot of the panels goes to docs/ for docs/tui.md."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from textual.widgets import Static

from devops_agent.evidence import AnomalyWindow, make_series
from devops_agent.tui.evidence import BARS, EvidenceView, TemplateTableView, spark
from devops_agent.tui.report_view import ReportScreen
from tui_harness import ask, chat, finished, local_client, scripted, snapshot_dir, svg_text, tui, until

T0 = datetime(2026, 11, 27, 14, 0, tzinfo=UTC)


def test_sparkline_marks_the_columns_of_the_anomaly_window() -> None:
    points = [((T0 + timedelta(minutes=i)).timestamp(), 50.0 if i >= 45 else 1.0) for i in range(60)]
    window = AnomalyWindow(start=T0 + timedelta(minutes=45), end=T0 + timedelta(minutes=59), score=1.0)
    line, marks = spark(make_series("x", {}, points, [window]), width=60)
    assert line == BARS[0] * 45 + BARS[-1] * 15
    assert marks == " " * 45 + "▔" * 15  # under the jump, nowhere else
    assert spark(make_series("x", {}, points), width=60)[1] == ""


def _log(path: Path, shift: float) -> Path:
    start = datetime.fromtimestamp(shift, UTC)
    lines = [
        f"{(start + timedelta(minutes=1, seconds=i)).isoformat()} ERROR connect to db:5432 refused"
        for i in range(30)
    ]
    lines += [
        f"{(start + timedelta(minutes=2, seconds=i)).isoformat()} ERROR disk full on /data" for i in range(4)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_panels_draw_the_chart_and_the_table_and_the_report_its_timeline(
    tmp_path: Path, prometheus_url: str
) -> None:
    where = snapshot_dir(tmp_path)
    shift = time.time() - 600
    query = f"1 + 49 * (time() > bool {shift:.0f})"
    log = _log(tmp_path / "app.log", shift)
    model = scripted(
        {
            "tool_calls": [
                {"tool": "prom_anomalies", "args": {"query": query, "start": "40m"}},
                {"tool": "logs_errors", "args": {"paths": [str(log)]}},
            ]
        },
        {
            "output": {
                "summary": "The series jumped; the database refuses connections since.",
                "findings": [
                    {
                        "severity": "high",
                        "title": "the series shifted",
                        "citations": ["{call:prom_anomalies}"],
                    }
                ],
            }
        },
    )
    client = local_client(
        tmp_path,
        model,
        builtin_tools=True,
        files={"roots": [str(tmp_path)]},
        prometheus={"url": prometheus_url},
    )

    async def go() -> None:
        app = tui(client)
        async with app.run_test(size=(120, 60)) as pilot:
            await pilot.press("n")
            await ask(pilot, "why did the series jump?")
            final = await finished(pilot, "completed", wait_s=60)
            screen = chat(app)
            views = {v.parent.parent.call.tool: v for v in screen.view.query(EvidenceView)}  # type: ignore[union-attr]
            metric, errors = views["prom_anomalies"], views["logs_errors"]
            for view in (metric, errors):
                view.parent.parent.collapsed = False  # type: ignore[union-attr]
            await pilot.pause()

            chart = str(metric.query_one(".chart", Static).render())
            lines = chart.splitlines()
            assert lines[0] == query
            spark_line = next(line for line in lines if set(line) & set(BARS))
            marks = lines[lines.index(spark_line) + 1]
            line = spark_line.split("│", 1)[1]
            offset = len(spark_line) - len(line)
            jump = line.index(BARS[-1])
            assert marks[offset + jump] == "▔", (line, marks)  # the jump's column is marked
            assert set(marks[offset : offset + jump - 2]) <= {" "}, "nothing marked well before it"
            assert "anomaly" in chart
            assert "level_shift" in chart

            table = errors.query_one(TemplateTableView)
            assert table.counts == [30, 4]
            table.focus()
            await pilot.press("s")
            assert table.counts == [4, 30]
            await pilot.press("s")
            assert table.counts == [30, 4]
            app.save_screenshot("tui-evidence.svg", str(where))

            await pilot.press("ctrl+r")
            report = await until(pilot, lambda: isinstance(app.screen, ReportScreen) and app.screen)
            await pilot.pause()
            timeline = str(report.query_one("#timeline Static", Static).render())
            kinds = [line.split()[3] for line in timeline.splitlines()[1:] if line.strip()]
            assert kinds[0] == "anomaly"
            assert kinds.index("anomaly") < kinds.index("error") < kinds.index("tool")
            assert kinds[-1] == "finding"
            assert "first error: connect to" in timeline
            app.save_screenshot("tui-timeline.svg", str(where))
            assert final.report["timeline"]

    asyncio.run(go())
    shown = svg_text(where / "tui-evidence.svg")
    assert "▔" in shown
    assert "error templates: 2 of 2 from 34 error records" in shown
    timeline_svg = svg_text(where / "tui-timeline.svg")
    assert "first error: connect to" in timeline_svg
