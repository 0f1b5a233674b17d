"""``devops-agent metrics slo`` and ``metrics anomalies QUERY`` as a user runs them against a real
Prometheus: exit codes, one-line messages, and what ``--json`` says about the series.

Constant counts come from templates such as ``vector(250) # $window``: the PromQL comment holds
the ``$window`` that makes the option a template, so every window counts the same.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fixtures_cli import assert_one_line_error, cli
from fixtures_prometheus import free_port

pytestmark = pytest.mark.slow


def _env(url: str) -> dict[str, str]:
    return {"DEVOPS_AGENT_PROMETHEUS__URL": url}


def _slo(url: str, requests: str, errors: str, *args: str) -> Any:
    return cli("metrics", "slo", "--requests", requests, "--errors", errors, *args, env=_env(url))


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--objective", "1", "--objective must be a fraction strictly between 0 and 1, got 1"),
        ("--objective", "1.0", "got 1"),
        ("--objective", "99.9", "99.9% is 0.999"),
        ("--window", "abc", "--window must be a duration such as 30d, got 'abc'"),
        ("--window", "0.5s", "--window 0.5s is shorter than 3d"),
        ("--window", "10m", "--window 10m is shorter than 3d, the longest burn-rate rule window"),
    ],
)
def test_slo_objective_and_window_are_checked_before_any_query(option: str, value: str, message: str) -> None:
    # Nothing listens at this URL: a query would fail with "cannot connect" instead.
    proc = _slo(f"http://127.0.0.1:{free_port()}", "x_total", "y_total", option, value)
    assert_one_line_error(proc, 2, message)
    assert "cannot connect" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_slo_and_anomalies_exit_1_when_prometheus_cannot_be_reached() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    proc = _slo(url, "x_total", "y_total")
    assert_one_line_error(proc, 1, f"cannot connect to Prometheus at {url}")
    anomalies = cli("metrics", "anomalies", "up", "--since", "10m", env=_env(url))
    assert_one_line_error(anomalies, 1, f"cannot connect to Prometheus at {url}")


def test_a_query_prometheus_rejects_is_a_bad_request(prometheus_url: str) -> None:
    proc = cli("metrics", "anomalies", "rate(up[5m]", "--since", "10m", env=_env(prometheus_url))
    assert_one_line_error(proc, 2, "Prometheus rejected the request")


@pytest.mark.parametrize(
    ("requests", "errors", "message"),
    [
        ("+Inf", "0", "the request query returned +Inf over 5m, not a count"),
        ("100", "NaN", "the error query returned NaN over 5m, not a count"),
        ("100", "250", "the error query returned more than the request query over 5m: 250 > 100"),
        ("100", "-50", "the error query returned a negative count over 5m: -50"),
        ("-100", "0", "the request query returned a negative count over 5m: -100"),
    ],
)
def test_slo_counts_that_cannot_be_exit_2_with_the_numbers(
    prometheus_url: str, requests: str, errors: str, message: str
) -> None:
    proc = _slo(prometheus_url, f"vector({requests}) # $window", f"vector({errors}) # $window")
    assert_one_line_error(proc, 2, message)
    assert proc.stdout == ""


def test_slo_without_requests_names_no_internal_tool(prometheus_url: str) -> None:
    proc = _slo(prometheus_url, "no_such_requests_total", "no_such_errors_total")
    assert_one_line_error(proc, 2, "no requests counted by 'no_such_requests_total' over 30d")
    assert "count(no_such_requests_total) should be above 0" in proc.stderr
    assert "prom_" not in proc.stderr


def test_anomalies_without_series_exit_1_with_the_reason(prometheus_url: str) -> None:
    proc = cli("metrics", "anomalies", "no_such_metric_xyz", "--since", "10m", env=_env(prometheus_url))
    assert_one_line_error(proc, 1, "no series match 'no_such_metric_xyz' between ")
    assert "no anomalies" not in proc.stderr

    as_json = cli(
        "metrics", "anomalies", "no_such_metric_xyz", "--since", "10m", "--json", env=_env(prometheus_url)
    )
    assert as_json.returncode == 1
    data = json.loads(as_json.stdout)
    assert (data["anomalies"], data["series_total"], data["series_analyzed"]) == ([], 0, 0)
    assert data["note"].startswith("no series match")

    huge = cli("metrics", "anomalies", "up", "--since", "100000d", env=_env(prometheus_url))
    assert_one_line_error(huge, 1, "a selector sees only the 5m before each step")


def test_anomalies_with_too_few_points_exit_1_and_say_so(prometheus_url: str) -> None:
    proc = cli(
        "metrics",
        "anomalies",
        "vector(1)",
        "--since",
        "1d",
        "--step",
        "1h",
        "--json",
        env=_env(prometheus_url),
    )
    assert proc.returncode == 1, proc.stderr
    assert "25 points each at a step of 1h, the detector needs 49" in proc.stderr
    data = json.loads(proc.stdout)
    assert (data["series_total"], data["series_analyzed"]) == (1, 1)
    assert data["note"].startswith("too few points to judge 'vector(1)'")


def test_anomalies_judged_and_capped_series_are_counted(prometheus_url: str) -> None:
    proc = cli("metrics", "anomalies", "vector(1)", "--since", "10m", env=_env(prometheus_url))
    assert proc.returncode == 0, proc.stderr
    assert "no anomalies in 1 series of 'vector(1)' between " in proc.stderr
    assert "(301 points each)" in proc.stderr

    three = " or ".join(f'label_replace(vector({v}), "i", "{v}", "", "")' for v in (1, 2, 3))
    capped = cli(
        "metrics",
        "anomalies",
        three,
        "--since",
        "10m",
        "--max-series",
        "2",
        "--json",
        env=_env(prometheus_url),
    )
    assert capped.returncode == 0, capped.stderr
    data = json.loads(capped.stdout)
    assert data == {
        "anomalies": [],
        "series_total": 3,
        "series_analyzed": 2,
        "step_s": 2.0,  # 10 minutes at the automatic step: 301 points
        "step_adjusted": False,
        "note": "only the 2 series with the highest peaks of 3 were analyzed",
    }


def test_a_prometheus_url_without_scheme_is_a_config_error() -> None:
    proc = cli("metrics", "anomalies", "up", env=_env("127.0.0.1:9090"))
    assert_one_line_error(proc, 2, "prometheus.url must start with http:// or https://, got '127.0.0.1:9090'")
    assert "retry" not in proc.stderr


def test_slo_over_a_window_the_data_barely_covers_gives_no_budget_figure(prometheus_url: str) -> None:
    # Requests that exist only for the last 2 hours (a new service): over 30 days the budget left
    # was printed as "100.0% of the error budget left", which 2 hours of data cannot support.
    import time

    born = int(time.time()) - 2 * 3600
    counts = "sum_over_time((vector({n}) and on() (vector(time()) > {born}))[$window:1m])"
    requests, errors = counts.format(n=10, born=born), counts.format(n=0, born=born)
    proc = _slo(prometheus_url, requests, errors, "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["budget_remaining"] is None
    coverage = data["coverage"]
    assert coverage["budget_known"] is False
    assert 7100 <= coverage["covered_s"] <= 7500, coverage  # 2 hours, to the minute
    assert coverage["window"] == pytest.approx(coverage["covered_s"] / (30 * 86400), abs=1e-4)
    assert coverage["windows"]["1h"] == 1.0
    assert coverage["windows"]["1d"] == pytest.approx(coverage["covered_s"] / 86400, abs=1e-3)
    assert "so the error budget left is not known" in data["explanation"]

    text = _slo(prometheus_url, requests, errors)
    assert text.returncode == 0, text.stderr
    flat = " ".join(text.stdout.split())
    assert "error budget left is not known" in flat
    assert "100.0% of the error budget left" not in flat
    assert "hold only that" in flat

    # a count that is there all along covers every window: the budget is given as before
    full = json.loads(_slo(prometheus_url, "vector(10) # $window", "vector(0) # $window", "--json").stdout)
    assert full["budget_remaining"] == 1.0
    assert full["coverage"]["window"] == 1.0
