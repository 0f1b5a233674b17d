"""Evidence on the web page, in the real Chromium against the real service: the scripted model
asks the real Prometheus for anomalies of a series that jumps, and the real logs tool for the
errors of a log file; the page draws the series as an SVG chart with the anomaly window shaded
where the jump is, the error templates as a table with their counts (sortable), and the report's
incident timeline in time order (anomaly, first error, the calls, the findings)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from devops_agent.tools import logs, prometheus
from devops_agent.tools.registry import ToolRegistry

from .web_helpers import HOSTILE_LINE, ask, axe_violations, screenshot, sign_in, wait_run, web_service

SHIFT_AGO_S = 600


def _registry() -> ToolRegistry:
    reg = ToolRegistry()
    logs.register(reg)
    prometheus.register(reg)
    return reg


def _log(path: Path, shift: float) -> Path:
    start = datetime.fromtimestamp(shift, UTC)
    lines = [
        f"{(start - timedelta(minutes=20, seconds=-i)).isoformat()} INFO request ok id={i}" for i in range(50)
    ]
    # the errors begin a minute after the metric jumped: refusals, then two disk errors later on
    lines += [
        f"{(start + timedelta(minutes=1, seconds=i)).isoformat()} ERROR connect to 10.0.0.{i % 5}:5432 refused"
        for i in range(40)
    ]
    lines += [
        f"{(start + timedelta(minutes=3, seconds=i)).isoformat()} ERROR disk full on /data" for i in range(2)
    ]
    lines.append(f"{(start + timedelta(minutes=4)).isoformat()} {HOSTILE_LINE}")  # drawn as inert text
    path.write_text("\n".join(lines) + "\n")
    return path


def _turns(query: str, log: Path) -> list[dict[str, Any]]:
    gather = {
        "tool_calls": [
            {"tool": "prom_anomalies", "args": {"query": query, "start": "40m"}},
            {"tool": "logs_errors", "args": {"paths": [str(log)]}},
        ]
    }
    answer = {
        "output": {
            "summary": "The series jumped ten minutes ago and the database refuses connections since.",
            "findings": [
                {
                    "severity": "high",
                    "title": "the series shifted to 50",
                    "citations": ["{call:prom_anomalies}"],
                },
                {
                    "severity": "medium",
                    "title": "connections to the database are refused",
                    "citations": ["{call:logs_errors}"],
                },
            ],
        }
    }
    return [gather, answer]


def test_chart_template_table_and_timeline(page: Any, tmp_path: Path, prometheus_url: str) -> None:
    shift = time.time() - SHIFT_AGO_S
    query = f"1 + 49 * (time() > bool {shift:.0f})"
    log = _log(tmp_path / "app.log", shift)
    with web_service(
        tmp_path,
        turns=_turns(query, log),
        roots=[tmp_path],
        registry_=_registry(),
        extra={"prometheus": {"url": prometheus_url}},
    ) as svc:
        sign_in(page, svc, "alice")
        ask(page, "why did the series jump?")
        run = wait_run(page, "completed", timeout=60)

        # -- the chart: the line jumps inside the shaded window -----------------------------------
        metric = run.locator('details.tool[data-tool="prom_anomalies"]')
        metric.locator("> summary").click()
        chart = metric.locator("svg.chart")
        assert chart.get_attribute("role") == "img"
        label = chart.get_attribute("aria-label") or ""
        assert label.startswith(f"Chart of {query}: ")
        assert "1 anomaly window shaded" in label
        assert chart.locator("title").first.text_content() == query
        (window,) = chart.locator("rect.anomaly").all()
        x, width = float(window.get_attribute("x") or 0), float(window.get_attribute("width") or 0)
        path = chart.locator("path.line").get_attribute("d") or ""
        points = [tuple(map(float, p.split(","))) for p in path.replace("M", "L").split("L") if p]
        top = min(y for _x, y in points)  # SVG y grows downwards: the highest value is the smallest y
        jump_x = min(px for px, py in points if py == top)
        assert x - 3 <= jump_x <= x + width, (x, width, jump_x)
        start = datetime.fromisoformat(window.get_attribute("data-start") or "")
        assert abs(start.timestamp() - shift) <= 30
        assert metric.locator("details.chart-data table.anomalies tbody tr").count() == 1
        texts = chart.locator("g.axis text").all_text_contents()
        assert texts[:3] == ["1", "25.5", "50"]  # the value axis
        assert all(t.endswith(" UTC") for t in texts[3:])  # the time axis

        # -- the template table: counts, sortable by count ---------------------------------------
        errors = run.locator('details.tool[data-tool="logs_errors"]')
        errors.locator("> summary").click()
        table = errors.locator("table.templates")
        assert table.locator("caption").inner_text() == "Error templates: 3 of 3 from 43 error records"

        def counts() -> list[str]:
            return [str(c) for c in table.locator("tbody tr td.num").all_inner_texts()]

        assert counts() == ["40", "2", "1"]
        assert "refused" in table.locator("tbody tr").first.inner_text()
        table.locator("button.sort").click()
        assert counts() == ["1", "2", "40"]
        assert table.locator("th[aria-sort]").get_attribute("aria-sort") == "ascending"
        table.locator("button.sort").click()
        assert counts() == ["40", "2", "1"]
        hostile = table.locator("tbody tr").last.inner_text()
        assert "<script>window.__pwned=1</script>" in hostile  # text, not markup
        assert "\x1b" not in hostile
        assert "␛[31m" in hostile
        assert page.evaluate("window.__pwned") is None
        assert table.locator("script, img").count() == 0

        # -- the report's timeline: in time order, each moment linked to its call ----------------
        timeline = run.locator(".report .report-timeline ol.timeline > li")
        kinds = [str(k) for k in timeline.evaluate_all("(els) => els.map((e) => e.dataset.kind)")]
        ats = [str(a) for a in timeline.evaluate_all("(els) => els.map((e) => e.dataset.at)")]
        assert [datetime.fromisoformat(a) for a in ats] == sorted(datetime.fromisoformat(a) for a in ats)
        moments = [k for k in kinds if k != "tool_call"]
        assert moments == ["anomaly", "error_onset", "error_onset", "finding", "finding"]
        assert kinds.index("anomaly") < kinds.index("error_onset") < kinds.index("tool_call")
        metric_id = metric.get_attribute("data-tool-call-id")
        anomaly = timeline.nth(kinds.index("anomaly"))
        assert anomaly.get_attribute("data-tool-call-id") == metric_id
        anomaly.locator("button").click()  # "Show the tool call" takes you to the chart's card
        focused = page.evaluate("document.activeElement.closest('details.tool').dataset.toolCallId")
        assert focused == metric_id
        assert "first error: connect to" in timeline.nth(kinds.index("error_onset")).inner_text()

        assert axe_violations(page) == [], "conversation with a chart, a template table and a timeline"
        metric.scroll_into_view_if_needed()
        screenshot(page, "web-evidence")
        errors.scroll_into_view_if_needed()
        screenshot(page, "web-templates")
        run.locator(".report .report-timeline").scroll_into_view_if_needed()
        screenshot(page, "web-timeline")
