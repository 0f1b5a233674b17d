"""Alertmanager intake: threshold splitting, the analysis range, and what ``investigate --alert``
runs with. Pure functions over payloads shaped like Alertmanager's (webhook format version 4)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import pytest

from devops_agent.analysis.alert_intake import (
    MAX_HISTORY,
    MIN_HISTORY,
    describe_payload,
    history_before,
    investigation_order,
    is_constant,
    parse_webhook,
    split_threshold,
    to_question,
)

RATIO = (
    'sum by (job) (rate(http_requests_total{code=~"5.."}[5m])) / sum by (job) (rate(http_requests_total[5m]))'
)
P99 = 'histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{job="api"}[5m])))'


@pytest.mark.parametrize(
    ("expr", "series", "threshold"),
    [
        (f"{P99} > 0.5", P99, "> 0.5"),
        (f"{RATIO} > 0.05", RATIO, "> 0.05"),
        ('up{job="x"} == 0', 'up{job="x"}', "== 0"),
        ("0.9 < x", "x", "> 0.9"),
        ("5 >= rate(x[5m])", "rate(x[5m])", "<= 5"),
        (
            'node_filesystem_avail_bytes{mountpoint!="/boot"} < 10 * 1024^3',
            'node_filesystem_avail_bytes{mountpoint!="/boot"}',
            "< 10 * 1024^3",
        ),
        ("(rate(x[5m]) > 50)", "rate(x[5m])", "> 50"),
        ("(a) / (b) != 1e-3", "(a) / (b)", "!= 1e-3"),
        ("x offset 1h > -1", "x offset 1h", "> -1"),
        ('rate(x{path=~".*>.*", a!="b"}[5m:1m]) >= 2', 'rate(x{path=~".*>.*", a!="b"}[5m:1m])', ">= 2"),
        (
            "label_replace(x, 'd', '$1 > 2', 's', '(.*)') > 3",
            "label_replace(x, 'd', '$1 > 2', 's', '(.*)')",
            "> 3",
        ),
        ("sum(rate(errors_total[5m]))  # errors per second\n  > 3", "sum(rate(errors_total[5m]))", "> 3"),
    ],
)
def test_a_top_level_threshold_against_a_constant_is_split_off(
    expr: str, series: str, threshold: str
) -> None:
    assert split_threshold(expr) == (series, threshold)


@pytest.mark.parametrize(
    "expr",
    [
        'absent(up{job="x"})',  # no comparison
        "x > on(instance) group_left y",  # two vectors
        "max_over_time(x[1h]) > max_over_time(x[1h] offset 1d) * 1.5",
        "foo < bool 3",  # bool: a 0/1 value, not a filter
        "x > BOOL 3",
        "a > 5 and b < 3",  # a set operator at the top level
        "x > 5 unless y",
        "a > 5 < 10",  # two comparisons
        'count(up{job!="x"} == 0)',  # inside a call: the result is not filtered
        "1 > bool 0",
    ],
)
def test_expressions_without_a_constant_threshold_are_left_alone(expr: str) -> None:
    assert split_threshold(expr) == (expr, None)


def test_constants() -> None:
    assert all(is_constant(c) for c in ("50", "0.05", "-1", "1e9", "10 * 1024^3", "(2 + 3)", "Inf", "0x1F"))
    assert not any(is_constant(c) for c in ("x", "Info", "1.5.2", "vector(1)", "", "()", "on(a) b"))


def test_history_before_the_alert_is_sized_for_the_detector() -> None:
    assert history_before(timedelta(minutes=5)) == MIN_HISTORY
    assert history_before(timedelta(hours=1, seconds=10)) == timedelta(hours=4, minutes=1)
    assert history_before(timedelta(days=3)) == MAX_HISTORY
    assert history_before(timedelta(minutes=-3)) == MIN_HISTORY  # clock skew: startsAt in the future


def _payload(*alerts: dict[str, Any]) -> dict[str, Any]:
    return {"version": "4", "status": "firing", "receiver": "devops-agent", "alerts": list(alerts)}


def _alert(name: str, expr: str | None, **extra: Any) -> dict[str, Any]:
    alert: dict[str, Any] = {
        "status": "firing",
        "labels": {"alertname": name, "severity": "page", "job": "api"},
        "startsAt": "2026-11-25T18:29:18Z",
        "endsAt": "0001-01-01T00:00:00Z",
        **({"generatorURL": f"http://p:9090/graph?g0.expr={quote(expr)}&g0.tab=1"} if expr else {}),
    }
    return {**alert, **extra}


NOW = datetime(2026, 11, 25, 19, 29, 18, 500_000, tzinfo=UTC)


def test_investigation_inputs_of_a_firing_alert_with_a_threshold() -> None:
    (alert,) = parse_webhook(_payload(_alert("HighLatency", f"{P99} > 0.5")), now=NOW)
    assert alert.expr == f"{P99} > 0.5"
    assert (alert.series_expr, alert.threshold) == (P99, "> 0.5")
    inputs = alert.investigation_inputs()
    assert inputs["query"] == P99
    assert inputs["threshold"] == "> 0.5"
    assert inputs["onset"] == "2026-11-25T18:29:18Z"
    assert inputs["since"] == "2026-11-25T14:28:18Z"  # 4 x (1 h and a bit), in whole minutes
    assert "until" not in inputs
    assert inputs["alert_title"] == "HighLatency (page) on job=api: "
    assert alert.runbook_inputs()["since"] == "2026-11-25T18:14:18Z"  # the cause margin is unchanged

    own = alert.investigation_inputs("rate(other[5m])")
    assert own["query"] == "rate(other[5m])"
    assert "threshold" not in own, "the alert's threshold does not apply to another query"


def test_a_resolved_alert_is_bounded_by_its_end_and_one_without_expression_says_so() -> None:
    resolved = _alert("DiskFull", None, status="resolved", endsAt="2026-11-25T18:40:18Z")
    (alert,) = parse_webhook(_payload(resolved), now=NOW)
    inputs = alert.investigation_inputs()
    assert inputs["until"] == "2026-11-25T18:40:18Z"
    assert inputs["since"] == "2026-11-25T16:29:18Z"  # fired 11 minutes: the 2 h floor
    assert "query" not in inputs
    assert inputs["alert_title"] == "DiskFull (page) on job=api (resolved)"  # not read as firing
    assert "carries no PromQL expression (no generatorURL)" in to_question(alert, now=NOW)


def test_firing_alerts_are_investigated_first_and_the_payload_is_described() -> None:
    alerts = parse_webhook(
        _payload(
            _alert("DiskFull", "x < 1", status="resolved", endsAt="2026-11-25T18:40:18Z"),
            _alert("HighLatency", "y > 2"),
            _alert("ErrorRate", "z > 3"),
        ),
        now=NOW,
    )
    assert [a.alertname for a in investigation_order(alerts)] == ["HighLatency", "ErrorRate", "DiskFull"]
    text = describe_payload(alerts, 1)
    assert text == (
        "The payload held 3 alerts: #1 DiskFull (page) on job=api (resolved); "
        "#2 HighLatency (page) on job=api (firing, investigated here); #3 ErrorRate (page) on job=api (firing)."
    )
    assert describe_payload(alerts[:1], 0) == ""
