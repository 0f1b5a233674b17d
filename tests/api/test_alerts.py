"""Alerts in: Alertmanager's documented webhook payload starts an investigation (202 at once),
a re-sent group joins it, a resolved notification is attached; a generic JSON alert likewise."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from api_harness import running_service
from devops_agent.config import Settings

PAYLOAD: dict[str, Any] = json.loads(
    (Path(__file__).parents[1] / "data/alertmanager/webhook.json").read_text()
)


def _settings(store_url: str) -> Settings:
    # No Prometheus here: the runbook's queries fail fast and become gaps of the report.
    return Settings(database_url=store_url, prometheus={"url": "http://127.0.0.1:9", "timeout_s": 2})


def test_the_alertmanager_payload_starts_an_investigation_and_a_duplicate_joins_it(store_url: str) -> None:
    with running_service(store_url, settings=_settings(store_url)) as svc, svc.client("am") as am:
        first = am.post("/v1/alerts/alertmanager", json=PAYLOAD)
        assert first.status_code == 202, first.text
        body = first.json()
        assert body["joined"] is False
        assert body["alerts"] == 1
        run = svc.wait_run("carol", body["run_id"], timeout=60)
        assert run["status"] == "completed"
        again = am.post("/v1/alerts/alertmanager", json=PAYLOAD).json()
        assert again == {"session_id": body["session_id"], "run_id": None, "joined": True, "alerts": 1}
        resolved = copy.deepcopy(PAYLOAD)
        resolved["status"] = "resolved"
        resolved["alerts"][0].update(status="resolved", endsAt="2026-11-22T15:00:00Z")
        closing = am.post("/v1/alerts/alertmanager", json=resolved).json()
        assert (closing["session_id"], closing["joined"]) == (body["session_id"], True)
        with svc.client("carol") as admin:
            session = admin.get(f"/v1/sessions/{body['session_id']}").json()
            assert [n["status"] for n in session["alerts"]] == ["firing", "firing", "resolved"]
            assert session["alerts"][-1]["alerts"][0]["ends_at"].startswith("2026-11-22T15:00:00")
            runs = admin.get(f"/v1/sessions/{body['session_id']}/runs").json()
            assert [r["id"] for r in runs] == [body["run_id"]], "joining starts nothing new"
            started = admin.get(f"/v1/runs/{body['run_id']}/events").json()["events"][0]
            assert started["path"] == "runbook"
            assert started["runbooks"] == ["metric-alert"]
            assert "HighRequestLatency" in started["prompt"]
            report = admin.get(f"/v1/runs/{body['run_id']}/report").json()
            assert report["report"]["verdict"] != "all_clear", "Prometheus was unreachable: not an all-clear"
        with svc.client("alice") as operator:  # another user's investigation
            assert operator.get(f"/v1/sessions/{body['session_id']}").status_code == 404
        other = copy.deepcopy(PAYLOAD)
        other["groupKey"] = '{}:{alertname="DiskFull"}'
        assert am.post("/v1/alerts/alertmanager", json=other).json()["session_id"] != body["session_id"]


def test_alert_intake_refuses_bad_payloads_and_other_tokens(store_url: str) -> None:
    with running_service(store_url, settings=_settings(store_url)) as svc:
        with svc.client("am") as am:
            bad = am.post("/v1/alerts/alertmanager", json={"version": "3", "alerts": []})
            assert bad.status_code == 400
            assert bad.headers["content-type"] == "application/problem+json"
            assert "version" in bad.json()["detail"]
        with svc.client("alice") as operator:
            refused = operator.post("/v1/alerts/alertmanager", json=PAYLOAD)
            assert refused.status_code == 403
            assert "role alerts" in refused.json()["detail"]
        with svc.client() as nobody:
            assert nobody.post("/v1/alerts/alertmanager", json=PAYLOAD).status_code == 401


def test_a_generic_alert_starts_an_investigation_and_its_fingerprint_dedupes(store_url: str) -> None:
    alert = {
        "title": "CheckoutErrors",
        "severity": "critical",
        "description": "checkout returns 5xx",
        "labels": {"service": "checkout"},
        "query": 'sum(rate(http_requests_total{code=~"5.."}[5m])) > 1',
        "fingerprint": "checkout-5xx",
    }
    with running_service(store_url, settings=_settings(store_url)) as svc, svc.client("am") as am:
        first = am.post("/v1/alerts/generic", json=alert).json()
        assert first["joined"] is False
        svc.wait_run("carol", first["run_id"], timeout=60)
        assert am.post("/v1/alerts/generic", json=alert).json()["joined"] is True
        with svc.client("carol") as admin:
            started = admin.get(f"/v1/runs/{first['run_id']}/events").json()["events"][0]
            assert started["runbooks"] == ["metric-alert"]
            assert "CheckoutErrors" in started["prompt"]


def test_a_run_can_investigate_an_alert_payload_like_investigate_alert(store_url: str) -> None:
    with running_service(store_url, settings=_settings(store_url)) as svc, svc.client("alice") as c:
        run = c.post("/v1/runs", json={"inputs": {"alert": PAYLOAD}})
        assert run.status_code == 202, run.text
        svc.wait_run("alice", run.json()["run_id"], timeout=60)
        started = c.get(f"/v1/runs/{run.json()['run_id']}/events").json()["events"][0]
        assert started["runbooks"] == ["metric-alert"]
        assert started["prompt"].startswith("Alert HighRequestLatency")
        wrong = c.post("/v1/runs", json={"inputs": {"alert": PAYLOAD, "alert_index": 2}})
        assert wrong.status_code == 400
        assert "holds 1 alert" in wrong.json()["detail"]
        assert c.post("/v1/runs", json={}).status_code == 400
