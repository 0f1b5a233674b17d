"""The prometheus toolset against a real Prometheus scraping a real node-exporter, and the
Alertmanager webhook intake.

The server comes from the session fixture ``prometheus_url`` (``tests/fixtures_prometheus.py``,
started by ``scripts/prometheus.sh``). Only the 5xx mapping uses a recorded answer through
``httpx.MockTransport``: a real Prometheus cannot be made to fail that way on demand.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from devops_agent.agent.doctor import check_integrations
from devops_agent.analysis.alert_intake import (
    DEFAULT_MARGIN,
    expr_from_generator_url,
    parse_webhook,
    to_question,
)
from devops_agent.config import LoadedSettings, Settings
from devops_agent.config.settings import PrometheusSettings
from devops_agent.errors import UserError
from devops_agent.tools.base import ToolsetBuilder
from devops_agent.tools.prometheus import (
    ANOMALY_MIN_POINTS,
    DEFAULT_URL,
    PROMETHEUS_MAX_POINTS,
    PromConfig,
    build,
    build_for,
    check_slo_args,
    choose_step,
    parse_duration,
    register,
    summarize_series,
)
from devops_agent.tools.registry import ToolRegistry
from fixtures_prometheus import REQUIRE_PROMETHEUS_ENV, free_port, start_prometheus, stop_processes

TOOLS = {
    "prom_query",
    "prom_query_range",
    "prom_anomalies",
    "prom_series",
    "prom_labels",
    "prom_label_values",
    "prom_metrics",
    "prom_targets",
    "prom_alerts",
    "prom_rules",
    "prom_slo",
}


@pytest.fixture(scope="module")
def prom(prometheus_url: str) -> ToolsetBuilder:
    return build_for(PromConfig(prometheus_url))


def call(ts: ToolsetBuilder, name: str, **args: Any) -> Any:
    return ts.entries[name].function(**args)


# --- toolset shape and settings ---------------------------------------------------------------


def test_toolset_registers_read_only_metrics_tools_with_documented_args() -> None:
    registry = ToolRegistry()
    register(registry)
    ts = registry.build(Settings())["prometheus"]
    assert set(ts.entries) == TOOLS
    for entry in ts.entries.values():
        assert entry.spec.category == "metrics"
        assert entry.spec.read_only is True
        assert entry.spec.risk == "safe"
        doc = entry.function.__doc__ or ""
        assert "Args:" in doc, entry.name
    ts.to_pydantic_ai()  # every signature must be expressible as a tool schema


def test_url_comes_from_settings_section_when_present() -> None:
    assert PromConfig.from_settings(Settings()).url == DEFAULT_URL
    section = PrometheusSettings(url="http://prom.example:9090/", timeout_s=3, max_points=500)
    config = PromConfig.from_settings(Settings(prometheus=section))
    assert config == PromConfig("http://prom.example:9090", 3.0, 500)
    assert set(build(Settings()).entries) == TOOLS


def test_more_points_than_prometheus_serves_is_refused_by_the_settings() -> None:
    """Prometheus answers at most 11,000 points per series; the setting cannot ask for more."""
    assert Settings().prometheus.max_points == PROMETHEUS_MAX_POINTS
    with pytest.raises(ValidationError, match="max_points"):
        PrometheusSettings(max_points=PROMETHEUS_MAX_POINTS + 1)


def test_automatic_step_is_nice_and_stays_within_the_point_limit() -> None:
    assert choose_step(60, None) == 1
    assert choose_step(3600, None) == 15  # 3600/300 = 12 -> next nice step
    assert choose_step(86400, None) == 300
    for range_s in (1, 59, 3600, 7 * 86400, 400 * 86400):
        step = choose_step(range_s, None)
        assert step >= 1
        assert range_s / step + 1 <= PROMETHEUS_MAX_POINTS
    # An explicit step is kept when it fits and raised only as far as needed when not.
    assert choose_step(3600, 30) == 30
    raised = choose_step(30 * 86400, 1)
    assert 30 * 86400 / raised + 1 <= PROMETHEUS_MAX_POINTS
    assert raised < 240


@pytest.mark.parametrize(
    ("text", "seconds"), [("30s", 30), ("5m", 300), ("1h", 3600), ("250ms", 0.25), ("10", 10)]
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_summary_skips_nan_and_keeps_extremes() -> None:
    values = [[100, "1"], [101, "NaN"], [102, "7"], [103, "-2"], [104, "3"]]
    s = summarize_series({"job": "x"}, values)
    assert s["points"] == 5
    assert s["non_finite_points"] == 1
    assert (s["min"], s["max"], s["last"]) == (-2.0, 7.0, 3.0)
    assert s["mean"] == 2.25
    assert [p["v"] for p in s["samples"]] == [1.0, 7.0, -2.0, 3.0]
    json.dumps(s)  # no NaN sneaks into the JSON


# --- against the real server ------------------------------------------------------------------


def test_instant_query_up_shows_node_exporter_up(prom: ToolsetBuilder) -> None:
    r = call(prom, "prom_query", query="up")
    assert r.status == "success", r
    by_job = {s["labels"]["job"]: s["value"] for s in r.data["series"]}
    assert by_job["node"] == 1.0
    assert r.data["result_type"] == "vector"
    earlier = call(prom, "prom_query", query='up{job="node"}', time="2s")
    assert earlier.status == "success"
    assert earlier.data["series"][0]["at"] < r.data["series"][0]["at"]


def test_instant_query_caps_series(prom: ToolsetBuilder) -> None:
    r = call(prom, "prom_query", query="node_cpu_seconds_total", limit=2)
    assert r.status == "success"
    assert len(r.data["series"]) == 2
    assert r.data["series_total"] > 2
    assert r.data["series_truncated"] is True


def test_range_query_is_summarized_with_bounded_size_and_sane_step(prom: ToolsetBuilder) -> None:
    r = call(prom, "prom_query_range", query="rate(node_cpu_seconds_total[30s])", start="5m", max_series=5)
    assert r.status == "success", r
    d = r.data
    assert d["step_s"] == 1  # 300 s / ~300 points
    assert d["series_total"] >= 1
    assert len(d["series"]) <= 5
    assert d["series_truncated"] == (d["series_total"] > 5)
    assert d["points_returned"] >= d["series_total"] * 2
    assert r.metadata["points_returned"] == d["points_returned"]
    for s in d["series"]:
        assert {"labels", "points", "min", "max", "mean", "last", "samples"} <= set(s)
        assert s["min"] <= s["mean"] <= s["max"]
        assert 1 <= len(s["samples"]) <= 4
        assert s["labels"]["job"] == "node"
        assert s["points"] <= 301
    peaks = [s["max"] for s in d["series"]]
    assert peaks == sorted(peaks, reverse=True)
    assert len(json.dumps(d)) < 8000


def test_range_query_raises_a_too_fine_step(prom: ToolsetBuilder) -> None:
    # vector(1) has a value at every step, so the point count is exactly what the step allows.
    r = call(prom, "prom_query_range", query="vector(1)", start="1d", step="1s")
    assert r.status == "success", r
    assert r.data["step_adjusted"] is True
    assert 86400 / r.data["step_s"] + 1 <= PROMETHEUS_MAX_POINTS
    assert PROMETHEUS_MAX_POINTS - 2 <= r.data["points_returned"] <= PROMETHEUS_MAX_POINTS
    assert r.data["series"][0]["samples"][0]["v"] == 1.0


def test_range_query_rejects_inverted_range(prom: ToolsetBuilder) -> None:
    r = call(prom, "prom_query_range", query="up", start="1m", end="2h")
    assert r.status == "error"
    assert "start" in (r.hint or "")


def test_unknown_metric_is_no_data(prom: ToolsetBuilder) -> None:
    r = call(prom, "prom_query_range", query="no_such_metric_xyz", start="5m")
    assert r.status == "no_data"
    assert "prom_metrics" in (r.hint or "")


def test_promql_syntax_error_returns_the_parser_message(prom: ToolsetBuilder) -> None:
    r = call(prom, "prom_query", query="rate(up[5m]")
    assert r.status == "error"
    assert "parse error" in (r.error or "")
    assert "1:" in (r.error or "")  # the line:column Prometheus reports
    assert "syntax" in (r.hint or "")
    assert "transient" not in r.metadata
    ranged = call(prom, "prom_query_range", query="sum by (job up", start="5m")
    assert ranged.status == "error"
    assert "parse error" in (ranged.error or "")


def test_bad_time_argument_is_an_error_with_the_accepted_forms(prom: ToolsetBuilder) -> None:
    r = call(prom, "prom_query", query="up", time="the day before")
    assert r.status == "error"
    assert "ISO 8601" in (r.hint or "")


def test_series_labels_and_label_values(prom: ToolsetBuilder) -> None:
    series = call(prom, "prom_series", match="up")
    assert series.status == "success"
    assert {s["job"] for s in series.data["series"]} == {"node", "prometheus"}

    labels = call(prom, "prom_labels", match="up")
    assert labels.status == "success"
    assert {"__name__", "job", "instance"} <= set(labels.data["labels"])

    jobs = call(prom, "prom_label_values", label="job")
    assert jobs.status == "success"
    assert {"node", "prometheus"} <= set(jobs.data["values"])

    cpus = call(prom, "prom_label_values", label="mode", match='node_cpu_seconds_total{job="node"}')
    assert "idle" in cpus.data["values"]

    bad = call(prom, "prom_label_values", label="job}/../x")
    assert bad.status == "error"


def test_metrics_lists_node_metrics_with_help(prom: ToolsetBuilder) -> None:
    r = call(prom, "prom_metrics", match="^node_cpu")
    assert r.status == "success", r
    by_name = {m["name"]: m for m in r.data["metrics"]}
    cpu = by_name["node_cpu_seconds_total"]
    assert cpu["type"] == "counter"
    assert "CPU" in cpu["help"]
    assert all(name.startswith("node_cpu") for name in by_name)

    capped = call(prom, "prom_metrics", limit=3, with_help=False)
    assert len(capped.data["metrics"]) == 3
    assert capped.data["truncated"] is True
    assert call(prom, "prom_metrics", match="^zz_nothing").status == "no_data"
    assert call(prom, "prom_metrics", match="(").status == "error"


def test_targets_show_node_exporter_up(prom: ToolsetBuilder) -> None:
    r = call(prom, "prom_targets")
    assert r.status == "success"
    node = next(t for t in r.data["targets"] if t["job"] == "node")
    assert node["health"] == "up"
    assert node["last_error"] is None
    assert node["scrape_url"].endswith("/metrics")
    assert r.data["counts"]["up"] == 2


def test_alerts_show_the_always_firing_test_alert(prom: ToolsetBuilder) -> None:
    r = call(prom, "prom_alerts")
    assert r.status == "success"
    alert = next(a for a in r.data["alerts"] if a["name"] == "DevOpsAgentTestAlwaysFiring")
    assert alert["state"] == "firing"
    assert alert["severity"] == "info"
    assert "test suite" in alert["annotations"]["summary"]
    assert r.data["counts"]["firing"] >= 1


def test_rules_list_alerting_and_recording_rules(prom: ToolsetBuilder) -> None:
    r = call(prom, "prom_rules")
    assert r.status == "success"
    by_name = {rule["name"]: rule for rule in r.data["rules"]}
    alert = by_name["DevOpsAgentTestAlwaysFiring"]
    assert alert["type"] == "alert"
    assert alert["query"] == "vector(1) > 0"
    assert alert["state"] == "firing"
    assert alert["health"] == "ok"
    assert by_name["devops_agent:up:sum"]["type"] == "record"

    only_records = call(prom, "prom_rules", kind="record")
    assert {rule["type"] for rule in only_records.data["rules"]} == {"record"}
    assert call(prom, "prom_rules", kind="bogus").status == "error"


# --- failures that need no server --------------------------------------------------------------


def test_connection_refused_names_the_url_and_the_setting() -> None:
    port = free_port()  # nothing listens there
    ts = build_for(PromConfig(f"http://127.0.0.1:{port}"))
    r = call(ts, "prom_query", query="up")
    assert r.status == "error"
    assert f"127.0.0.1:{port}" in (r.error or "")
    assert "is Prometheus running at" in (r.hint or "")
    assert "prometheus.url" in (r.hint or "")


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A real listening socket that accepts connections and never answers."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock.getsockname()[1]


def test_timeout_is_transient(silent_server: int) -> None:
    ts = build_for(PromConfig(f"http://127.0.0.1:{silent_server}", timeout_s=0.3))
    r = call(ts, "prom_query", query="up")
    assert r.status == "error"
    assert r.metadata["transient"] is True
    assert "did not answer" in (r.error or "")


def test_server_errors_are_transient() -> None:
    # The body Prometheus sends when a query is cancelled under load (errorType "unavailable").
    body = {"status": "error", "errorType": "unavailable", "error": "query queue full"}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, json=body)

    ts = build_for(PromConfig("http://prom.test"), transport=httpx.MockTransport(handler))
    r = call(ts, "prom_query_range", query="up", start="1h")
    assert r.status == "error"
    assert r.metadata["transient"] is True
    assert "503" in (r.error or "")
    assert "query queue full" in (r.error or "")


def test_not_prometheus_is_reported() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="<html>hello</html>")

    ts = build_for(PromConfig("http://web.test"), transport=httpx.MockTransport(handler))
    r = call(ts, "prom_targets")
    assert r.status == "error"
    assert "prometheus.url" in (r.hint or "")


# --- scripts/prometheus.sh lifecycle -----------------------------------------------------------


@pytest.mark.slow
def test_script_is_idempotent_and_its_processes_can_be_stopped(tmp_path: Path, prometheus_url: str) -> None:
    # prometheus_url first: it skips this test where the binaries cannot be installed. The script
    # installs Alertmanager itself when asked for it; where Prometheus is required (CI) it must.
    required = os.environ.get(REQUIRE_PROMETHEUS_ENV) == "1"
    no_binary = shutil.which("prometheus-alertmanager") is None and shutil.which("alertmanager") is None
    if no_binary and not required:
        pytest.skip(f"alertmanager binary not installed (set {REQUIRE_PROMETHEUS_ENV}=1 to install it)")
    ports = {"prometheus": free_port(), "node": free_port(), "alertmanager": free_port()}
    try:
        url = start_prometheus(tmp_path, ports, alertmanager=True)
        assert url == f"http://127.0.0.1:{ports['prometheus']}"
        pids = {p.name: p.read_text() for p in tmp_path.glob("*.pid")}
        assert set(pids) == {"prometheus.pid", "node-exporter.pid", "alertmanager.pid"}
        assert start_prometheus(tmp_path, ports, alertmanager=True) == url
        assert {p.name: p.read_text() for p in tmp_path.glob("*.pid")} == pids  # nothing restarted
        with httpx.Client(timeout=5) as client:
            assert client.get(f"http://127.0.0.1:{ports['alertmanager']}/-/ready").status_code == 200
            assert client.get(f"{url}/-/ready").status_code == 200
    finally:
        assert stop_processes(tmp_path) == []
    with pytest.raises(httpx.ConnectError), httpx.Client(timeout=2) as client:
        client.get(f"{url}/-/ready")


def test_script_refuses_a_taken_port(tmp_path: Path, silent_server: int) -> None:
    if shutil.which("prometheus") is None:
        pytest.skip("prometheus binary not installed")
    with pytest.raises(RuntimeError, match="taken by another process"):
        start_prometheus(tmp_path, {"prometheus": silent_server, "node": free_port()})
    assert stop_processes(tmp_path) == []


# --- Alertmanager webhook intake ---------------------------------------------------------------

# Shaped after the webhook_config payload documented at
# https://prometheus.io/docs/alerting/latest/configuration/#webhook_config (version "4"); values
# are what Alertmanager 0.25 sends for a Prometheus rule: endsAt is the zero time while firing.
WEBHOOK: dict[str, Any] = {
    "receiver": "devops-agent",
    "status": "firing",
    "alerts": [
        {
            "status": "firing",
            "labels": {
                "alertname": "HighErrorRate",
                "instance": "api-7d9f:8080",
                "job": "api",
                "namespace": "shop",
                "severity": "critical",
            },
            "annotations": {
                "summary": "5xx ratio above 5% for 10 minutes",
                "description": "api in shop returns 12.3% errors.",
                "runbook_url": "https://runbooks.example/HighErrorRate",
            },
            "startsAt": "2026-11-22T14:05:30.123Z",
            "endsAt": "0001-01-01T00:00:00Z",
            "generatorURL": "http://prometheus:9090/graph?g0.expr=sum+by+%28job%29+%28rate%28http_requests_total"
            "%7Bcode%3D~%225..%22%7D%5B5m%5D%29%29+%2F+sum+by+%28job%29+%28rate%28http_requests_total%5B5m%5D%29%29"
            "+%3E+0.05&g0.tab=1",
            "fingerprint": "8a6f7f1a2b3c4d5e",
        },
        {
            "status": "resolved",
            "labels": {"alertname": "DiskFilling", "instance": "db-1:9100", "job": "node"},
            "annotations": {},
            "startsAt": "2026-11-21T22:00:00Z",
            "endsAt": "2026-11-22T01:30:00Z",
            "generatorURL": "",
            "fingerprint": "0f1e2d3c4b5a6978",
        },
    ],
    "groupLabels": {"alertname": "HighErrorRate"},
    "commonLabels": {"receiver_team": "shop"},
    "commonAnnotations": {},
    "externalURL": "http://alertmanager:9093",
    "version": "4",
    "groupKey": '{}:{alertname="HighErrorRate"}',
    "truncatedAlerts": 0,
}


def test_webhook_is_parsed_into_requests() -> None:
    firing, resolved = parse_webhook(WEBHOOK)
    assert firing.alertname == "HighErrorRate"
    assert firing.status == "firing"
    assert firing.severity == "critical"
    assert firing.labels["receiver_team"] == "shop"  # common labels are merged in
    assert firing.summary == "5xx ratio above 5% for 10 minutes"
    assert firing.starts_at == datetime(2026, 11, 22, 14, 5, 30, 123000, tzinfo=UTC)
    assert firing.ends_at is None
    assert firing.since == firing.starts_at - DEFAULT_MARGIN
    assert firing.expr == (
        'sum by (job) (rate(http_requests_total{code=~"5.."}[5m])) / sum by (job) (rate(http_requests_total[5m])) > 0.05'
    )
    assert firing.receiver == "devops-agent"

    assert resolved.status == "resolved"
    assert resolved.severity is None
    assert resolved.expr is None
    assert resolved.ends_at == datetime(2026, 11, 22, 1, 30, tzinfo=UTC)


def test_question_and_runbook_inputs() -> None:
    firing, resolved = parse_webhook(WEBHOOK, margin=timedelta(minutes=5))
    q = to_question(firing, now=datetime(2026, 11, 22, 15, 0, tzinfo=UTC))
    assert q.startswith(
        "Alert HighErrorRate (critical) firing since 14:05 UTC on namespace=shop, job=api, "
        "instance=api-7d9f:8080: 5xx ratio above 5% for 10 minutes."
    )
    assert "api in shop returns 12.3% errors." in q
    assert 'Expression: `sum by (job) (rate(http_requests_total{code=~"5.."}[5m]))' in q
    assert q.endswith("Investigate the cause.")

    later = to_question(resolved, now=datetime(2026, 11, 23, 9, 0, tzinfo=UTC))
    assert "resolved; it fired from 2026-11-21 22:00 UTC to 2026-11-22 01:30 UTC" in later
    assert "on job=node, instance=db-1:9100." in later

    inputs = firing.runbook_inputs()
    assert inputs["since"] == "2026-11-22T14:00:30.123000Z"
    assert inputs["question"].startswith("Alert HighErrorRate")
    assert "until" not in inputs
    assert resolved.runbook_inputs()["until"] == "2026-11-22T01:30:00Z"


def test_expr_from_generator_url() -> None:
    assert expr_from_generator_url("http://p:9090/graph?g0.expr=up+%3D%3D+0&g0.tab=1") == "up == 0"
    assert expr_from_generator_url("http://p:9090/graph?g0.tab=1") is None
    assert expr_from_generator_url("") is None


def _without(key: str) -> dict[str, Any]:
    return {k: v for k, v in WEBHOOK.items() if k != key}


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (_without("alerts"), "alerts: Field required"),
        ({**WEBHOOK, "version": "3"}, "version: Input should be '4'"),
        ({**WEBHOOK, "alerts": [{**WEBHOOK["alerts"][0], "startsAt": "yesterday-ish"}]}, "alerts.0.startsAt"),
        ({**WEBHOOK, "alerts": [{**WEBHOOK["alerts"][0], "labels": {"job": "api"}}]}, "alertname"),
        ({**WEBHOOK, "alerts": [{**WEBHOOK["alerts"][0], "status": "exploded"}]}, "alerts.0.status"),
        (["not", "an", "object"], "expected a JSON object"),
    ],
)
def test_malformed_webhook_payloads_are_refused_clearly(payload: Any, message: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_webhook(payload)
    assert caught.value.message.startswith("invalid Alertmanager webhook payload")
    assert message in caught.value.message
    assert "webhook_config" in (caught.value.hint or "")


def test_slo_burn_rates_and_alerts_from_prometheus_own_request_counter(
    prom: ToolsetBuilder, prometheus_url: str
) -> None:
    """Prometheus counts its own API requests by code: 400s are the errors of an SLO on them."""
    handler = 'prometheus_http_requests_total{handler="/api/v1/query_range"'

    def send(n: int) -> None:
        with httpx.Client(base_url=prometheus_url, timeout=10) as client:
            for i in range(n):
                bad = i % 4 != 0  # 3 of 4 are malformed range queries (400)
                params = {"query": "up(" if bad else "up", "start": "1", "end": "2", "step": "1"}
                client.get("/api/v1/query_range", params=params)
        time.sleep(3)  # scraped every second

    send(4)  # a counter's first sample is its baseline: let the 400 series exist first
    send(40)  # 30 errors, 10 good

    r = call(prom, "prom_slo", requests=handler + "}", errors=handler + ',code=~"4.."}', objective=0.99)
    assert r.status == "success", r
    five = r.data["counts"]["5m"]
    assert five["errors"] >= 25
    assert five["requests"] >= five["errors"] + 8
    expected = five["errors"] / five["requests"] / 0.01
    assert r.data["burn_rates"]["5m"] == pytest.approx(expected, rel=1e-3)
    assert r.data["burn_rates"]["5m"] > 14.4
    assert {"page", "ticket"} == {a["severity"] for a in r.data["alerts"]}
    # far more than 1% of the requests failed, but this server began minutes ago: what is left of
    # a 30-day budget is not known, and is not claimed
    assert r.data["budget_remaining"] is None
    assert r.data["coverage"]["window"] < 0.01
    assert "so the error budget left is not known" in r.data["explanation"]
    assert "PAGE: burning" in r.data["explanation"]

    none = call(prom, "prom_slo", requests="no_such_requests_total", errors="no_such_errors_total")
    assert none.status == "no_data"
    bad = call(prom, "prom_slo", requests=handler + "}", errors=handler + "}", objective=99.9)
    assert bad.status == "error"
    assert "0.999" in (bad.hint or "")


def test_tools_can_run_in_parallel_threads(prom: ToolsetBuilder) -> None:
    # Runbooks call tools from worker threads; each call owns its HTTP client.
    results: list[str] = []

    def work() -> None:
        results.append(call(prom, "prom_query", query="up").status)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["success"] * 4


# --- SLO arguments and counts, anomalies without a verdict, URL and doctor checks -----------------


def _const(value: str) -> str:
    """A constant count for every window: the PromQL comment makes it a ``$window`` template."""
    return f"vector({value}) # $window"


@pytest.mark.parametrize(
    ("objective", "window", "message"),
    [
        (1.0, "30d", "objective must be a fraction strictly between 0 and 1, got 1"),
        (0.0, "30d", "got 0"),
        (99.9, "30d", "got 99.9"),
        (float("nan"), "30d", "got nan"),
        (0.999, "abc", "window must be a duration such as 30d, got 'abc'"),
        (0.999, "0.5s", "window 0.5s is shorter than 3d"),
        (0.999, "10m", "window 10m is shorter than 3d"),
        (0.999, "367d", "window 367d is longer than 366d"),
    ],
)
def test_slo_arguments_are_refused_before_any_query(objective: float, window: str, message: str) -> None:
    with pytest.raises(UserError) as caught:
        check_slo_args(objective, window)
    assert message in caught.value.message
    # The tool refuses them without a request: nothing listens at this URL.
    nowhere = build_for(PromConfig(f"http://127.0.0.1:{free_port()}"))
    r = call(nowhere, "prom_slo", requests="a", errors="b", objective=objective, window=window)
    assert r.status == "error"
    assert message in (r.error or "")
    assert check_slo_args(0.999, "3d") == timedelta(days=3)
    assert check_slo_args(0.99, "28d") == timedelta(days=28)


@pytest.mark.parametrize(
    ("requests", "errors", "message"),
    [
        ("+Inf", "0", "the request query returned +Inf over 5m, not a count"),
        ("100", "NaN", "the error query returned NaN over 5m, not a count"),
        ("100", "-Inf", "the error query returned -Inf over 5m"),
        ("100", "250", "the error query returned more than the request query over 5m: 250 > 100"),
        ("100", "-50", "the error query returned a negative count over 5m: -50"),
        ("-100", "0", "the request query returned a negative count over 5m: -100"),
    ],
)
def test_slo_counts_that_cannot_be_are_errors(
    prom: ToolsetBuilder, requests: str, errors: str, message: str
) -> None:
    r = call(prom, "prom_slo", requests=_const(requests), errors=_const(errors))
    assert r.status == "error", r
    assert message in (r.error or "")
    assert r.hint


def test_slo_errors_a_little_above_requests_count_as_all_failing(prom: ToolsetBuilder) -> None:
    # increase() extrapolates each series on its own: a few percent over is noise, not a mistake.
    r = call(prom, "prom_slo", requests=_const("100"), errors=_const("105"), objective=0.99)
    assert r.status == "success", r
    assert r.data["counts"]["1h"] == {"requests": 100.0, "errors": 100.0}
    assert r.data["burn_rates"]["1h"] == 100.0  # 100% errors / 1% budget
    assert "errors exceed requests (105 > 100)" in r.metadata["warnings"][0]


def test_slo_without_requests_points_at_the_selector_not_at_a_tool(prom: ToolsetBuilder) -> None:
    r = call(prom, "prom_slo", requests="no_such_requests_total", errors="no_such_errors_total")
    assert r.status == "no_data"
    assert r.hint == (
        "no requests counted by 'no_such_requests_total' over 30d: check that it matches counter "
        "series: count(no_such_requests_total) should be above 0"
    )


def test_anomalies_say_why_nothing_was_judged(prom: ToolsetBuilder) -> None:
    none = call(prom, "prom_anomalies", query="no_such_metric_xyz", start="10m")
    assert none.status == "no_data"
    assert none.hint.startswith("no series match 'no_such_metric_xyz' between ")
    assert none.metadata["series_total"] == 0

    short = call(prom, "prom_anomalies", query="vector(1)", start="1d", step="1h")
    assert short.status == "no_data"
    assert "too few points to judge 'vector(1)'" in short.hint
    assert f"25 points each at a step of 1h, the detector needs {ANOMALY_MIN_POINTS}" in short.hint
    assert (short.metadata["series_analyzed"], short.metadata["series_too_short"]) == (1, 1)

    huge = call(prom, "prom_anomalies", query="up", start="100000d")
    assert huge.status == "no_data"
    assert "a selector sees only the 5m before each step" in huge.hint


def test_anomalies_count_series_and_report_short_ones_apart(prom: ToolsetBuilder) -> None:
    # vector(1) has 301 points over 10 minutes; the "late" series only the last ~20 seconds.
    late = f'label_replace(vector(time()) > {time.time() - 20:.0f}, "i", "late", "", "")'
    r = call(prom, "prom_anomalies", query=f"vector(1) or {late}", start="10m")
    assert r.status == "no_data"
    assert " (301 points each)" in r.hint
    assert r.hint.startswith("no anomalies in 1 series of")
    assert r.metadata["series_total"] == 2
    assert r.metadata["series_too_short"] == 1
    assert r.metadata["note"].startswith("1 series had too few points to judge (fewest ")
    assert r.metadata["too_short"][0]["series"] == "vector(1) or " + late + "{i=late}"

    three = " or ".join(f'label_replace(vector({v}), "i", "{v}", "", "")' for v in (1, 2, 3))
    capped = call(prom, "prom_anomalies", query=three, start="10m", max_series=2)
    assert (capped.metadata["series_total"], capped.metadata["series_analyzed"]) == (3, 2)
    assert capped.metadata["note"] == "only the 2 series with the highest peaks of 3 were analyzed"


def test_anomalies_list_the_latest_of_a_series_and_count_them_all(prom: ToolsetBuilder) -> None:
    # a 20 s spike every two minutes (wider than the 10 s step, so every one is sampled), each
    # higher than the last: every one is a new record
    query = f"(time() % 120 < bool 20) * (time() - {time.time() - 1800:.0f}) + 1"
    r = call(prom, "prom_anomalies", query=query, start="30m")
    assert r.status == "success"
    [series] = r.data["anomalous"]
    assert series["anomalies_total"] > 5
    assert len(series["anomalies"]) == 5
    starts = [a["start"] for a in series["anomalies"]]
    assert starts == sorted(starts)
    assert starts[-1] > (datetime.now(UTC) - timedelta(minutes=3)).isoformat()  # the latest are kept
    assert r.data["note"] == "only the last 5 anomalies of a series are listed (anomalies_total has all)"


@pytest.mark.parametrize("url", ["127.0.0.1:9090", "prometheus.monitoring:9090/", "ftp://prom:9090"])
def test_a_url_without_http_is_a_configuration_error(url: str) -> None:
    r = call(build_for(PromConfig(url)), "prom_query", query="up")
    assert r.status == "error"
    assert r.error == f"prometheus.url must start with http:// or https://, got {url!r}"
    assert "transient" not in r.metadata
    assert "prometheus.url" in (r.hint or "")


def test_doctor_checks_a_configured_prometheus(prometheus_url: str) -> None:
    def check(url: str) -> Any:
        checks = check_integrations(LoadedSettings(Settings(prometheus={"url": url})))
        return next(c for c in checks if c.name == "prometheus")

    up = check(prometheus_url)
    assert (up.level, up.detail.startswith(prometheus_url)) == ("ok", True)
    assert "Prometheus" in up.detail
    down = check(f"http://127.0.0.1:{free_port()}")
    assert down.level == "warn"
    assert down.detail.startswith("configured, not reachable: cannot connect")
    assert "must start with http://" in check("127.0.0.1:9090").detail
    default = check_integrations(LoadedSettings(Settings()))
    assert all(c.name != "prometheus" for c in default)


def test_anomalies_attach_the_series_and_the_window_to_chart(prom: ToolsetBuilder) -> None:
    """The chart's evidence: the real points (bounded), the anomaly window where the level shifted,
    its start on the timeline; a model reads none of it (it is not in ``data``)."""
    shift = time.time() - 600  # the series jumps from 1 to 50 ten minutes ago
    query = f"1 + 49 * (time() > bool {shift:.0f})"
    r = call(prom, "prom_anomalies", query=query, start="40m")
    assert r.status == "success", r
    evidence = r.evidence
    assert evidence is not None
    (series,) = evidence.series
    assert series.name == query
    assert 200 < len(series.points) <= 500
    assert series.points_total == len(series.points)
    assert {v for _t, v in series.points} == {1.0, 50.0}
    first_high = min(t for t, v in series.points if v == 50.0)
    assert series.anomalies, "the level shift is a window"
    window = series.anomalies[0]
    assert abs(window.start.timestamp() - first_high) <= 30  # where the jump is, within a step or so
    assert window.end >= window.start
    assert window.score > 0
    moment = evidence.timeline[0]
    assert moment.kind == "anomaly"
    assert moment.at == window.start
    # what a model reads is the summary: the points are not serialized with the result
    assert "evidence" not in r.model_dump()
    assert len(r.model_dump_json()) < 2_000 < len(evidence.model_dump_json())


def test_a_range_query_charts_its_highest_series_first(prom: ToolsetBuilder) -> None:
    three = " or ".join(f'label_replace(vector({v}), "i", "{v}", "", "")' for v in (1, 3, 2))
    r = call(prom, "prom_query_range", query=three, start="10m")
    assert r.status == "success"
    assert r.evidence is not None
    assert [s.labels["i"] for s in r.evidence.series] == ["3", "2", "1"]
    assert all(s.anomalies == [] for s in r.evidence.series)  # the range query does not judge
