"""Operating the service: health, readiness, metrics, access log, request limits, the per-user run
limit, back-pressure on the WebSocket, and a shutdown that stops runs at a step boundary (left
resumable) — all against the real server."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

from api_harness import PROBE_TURNS, SLEEP_MARKER, _sleeps, _wait_for, running_service, scripted
from devops_agent.api.ws import LAG_AFTER_S
from devops_agent.config import Settings
from devops_agent.store import Store
from fixtures_db import sqlite_url


def test_health_readiness_metrics_and_the_access_log(store_url: str) -> None:
    with running_service(store_url, model=scripted(turns=PROBE_TURNS)) as svc:
        with svc.client() as anyone:
            assert anyone.get("/healthz").json() == {"status": "ok"}
            ready = anyone.get("/readyz").json()
            assert ready["status"] == "ready"
            assert ready["migration"] == svc.store.schema_status()[1]
        with svc.client("alice") as c, svc.ws("alice") as ws:
            ws.recv()
            run = c.post("/v1/runs", json={"question": "probe"}).json()
            svc.wait_run("alice", run["run_id"])
            time.sleep(0.2)  # the follower counts the final event just after the run is stored
            text = c.get("/metrics").text
        assert 'devops_agent_runs_started_total{path="model"} 1.0' in text
        assert 'devops_agent_runs_finished_total{path="model",status="completed"} 1.0' in text
        assert 'devops_agent_tool_calls_total{status="success",tool="probe"} 2.0' in text
        assert 'devops_agent_tool_latency_seconds_count{tool="probe"} 2.0' in text
        assert "devops_agent_ws_clients 1.0" in text
        assert "devops_agent_approvals_pending 0.0" in text
        assert 'devops_agent_run_duration_seconds_count{path="model"} 1.0' in text
        lines = [json.loads(line) for line in svc.access_log.getvalue().splitlines()]
        posted = [line for line in lines if line["method"] == "POST" and line["path"] == "/v1/runs"]
        assert posted[0]["status"] == 202
        assert posted[0]["user"] == "alice"
        assert posted[0]["duration_ms"] >= 0
        # The WebSocket's line is written when the server's handler ends, just after the client left.
        assert _wait_for(
            lambda: '"method": "WS", "path": "/v1/ws", "status": 101' in svc.access_log.getvalue()
        )
        assert svc.tokens["alice"] not in svc.access_log.getvalue(), "no token in the log"


def test_request_size_limit_and_the_per_user_run_limit(store_url: str) -> None:
    settings = Settings(
        database_url=store_url, server={"max_body_bytes": 2048, "max_runs_per_user": 1, "shutdown_grace_s": 1}
    )
    model = scripted(turns=[{"tool_calls": [{"tool": "wait_sleep"}]}, {"text": "never"}])
    with running_service(store_url, model=model, settings=settings) as svc, svc.client("alice") as c:
        big = c.post("/v1/runs", json={"question": "x" * 5000})
        assert big.status_code == 413
        assert big.headers["content-type"] == "application/problem+json"
        assert "2048" in big.json()["detail"]
        first = c.post("/v1/runs", json={"question": "wait"}).json()
        second = c.post("/v1/runs", json={"question": "wait too"})
        assert second.status_code == 429
        assert second.headers["retry-after"].isdigit()
        assert "limit 1" in second.json()["detail"]
        with svc.client("bob") as other:  # the limit is per user
            other_run = other.post("/v1/runs", json={"question": "wait"})
            assert other_run.status_code == 202
            other.post(f"/v1/runs/{other_run.json()['run_id']}/cancel")
        c.post(f"/v1/runs/{first['run_id']}/cancel")
        svc.wait_run("alice", first["run_id"])
        assert _wait_for(lambda: c.get("/v1/me").json()["active_runs"] == 0, 5)
        assert c.post("/v1/runs", json={"question": "wait"}).status_code == 202


def test_a_slow_websocket_client_gets_lagged_and_resumes_without_loss(tmp_path: Path) -> None:
    # Back-pressure is the server's, not the store's: SQLite only. Enough events to fill the
    # kernel's socket buffers (~4 MB here) when the client reads nothing.
    store_url = sqlite_url(tmp_path)
    words = " ".join(f"{i:06d}" + "x" * 1000 for i in range(6000))  # ~7 MB of token events
    settings = Settings(database_url=store_url, server={"ws_send_buffer": 10})
    with running_service(store_url, model=scripted(turns=[{"text": words}]), settings=settings) as svc:
        with svc.ws("alice", slow=True) as ws:
            ws.recv()
            ws.send({"type": "query", "question": "talk"})
            accepted = ws.recv()
            # The client reads nothing; the run is not held back by it.
            run = svc.wait_run("alice", accepted["run_id"], timeout=60)
            assert run["status"] == "completed"
            time.sleep(LAG_AFTER_S + 1)  # still reading nothing: the server gives up on this client
            # Reading now: let the socket take more at a time (4 KB windows would crawl).
            ws.conn.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
            got = ws.until("lagged", timeout=60)
            lagged = got[-1]
            before = [m["seq"] for m in got if "seq" in m]
            assert before == list(range(1, lagged["last_seq"] + 1))
            assert lagged["run_id"] == accepted["run_id"]
            ws.send({"type": "subscribe", "run_id": accepted["run_id"], "last_seq": lagged["last_seq"]})
            seqs = list(before)
            while True:
                message = ws.recv()
                if message["type"] == "lagged":  # it may lag again; resume again
                    ws.send(
                        {"type": "subscribe", "run_id": accepted["run_id"], "last_seq": message["last_seq"]}
                    )
                    continue
                seqs.append(message["seq"])
                if message["type"] == "run_finished":
                    break
        assert seqs == list(range(1, len(seqs) + 1)), "every event once, in order"
        assert len(seqs) > 6000


def test_shutdown_stops_runs_at_a_step_boundary_and_they_resume(store_url: str) -> None:
    settings = Settings(database_url=store_url, server={"shutdown_grace_s": 15})
    turns = [
        {"tool_calls": [{"tool": "short_sleep"}]},
        {"tool_calls": [{"tool": "probe", "args": {"name": "second step"}}]},
        {"text": "did {tool_count} steps"},
    ]
    with running_service(store_url, model=scripted(turns=turns), settings=settings) as svc:
        tokens = svc.tokens
        with svc.client("alice") as c:
            run = c.post("/v1/runs", json={"question": "two steps"}).json()
            assert _wait_for(
                lambda: any(
                    e["type"] == "tool_call"
                    for e in c.get(f"/v1/runs/{run['run_id']}/events").json()["events"]
                )
            )
    # The server is gone: the run stopped after its first step finished, before the second.
    with Store(store_url) as store:
        record = store.get_run(run["run_id"])
        events = [json.loads(e.payload) for e in store.run_events(run["run_id"])]
        assert record.status == "interrupted"
        assert store.get_session(run["session_id"]).status == "interrupted"
    calls = [e["tool"] for e in events if e["type"] == "tool_call"]
    results = [(e["tool"], e["status"]) for e in events if e["type"] == "tool_result"]
    assert calls == ["short_sleep"]
    assert results == [("short_sleep", "success")], "the tool in flight finished; nothing was cut"
    assert events[-1]["type"] == "run_finished"
    assert events[-1]["status"] == "interrupted"
    # A new service on the same store resumes it: same session, same question.
    restarted = running_service(store_url, model=scripted(turns=PROBE_TURNS), users={}, tokens=tokens)
    with restarted as svc2, svc2.client("alice") as c:
        info = c.get(f"/v1/runs/{run['run_id']}").json()
        assert info["resumable"] is True
        resumed = c.post(f"/v1/runs/{run['run_id']}/resume")
        assert resumed.status_code == 202
        new = resumed.json()
        assert new["session_id"] == run["session_id"]
        assert svc2.wait_run("alice", new["run_id"])["status"] == "completed"
        first = c.get(f"/v1/runs/{new['run_id']}/events").json()["events"][0]
        assert first["prompt"] == "two steps"
        assert c.post(f"/v1/runs/{new['run_id']}/resume").status_code == 409


def test_shutdown_stops_a_long_tool_after_the_grace_and_kills_it(tmp_path: Path) -> None:
    store_url = sqlite_url(tmp_path)
    settings = Settings(database_url=store_url, server={"shutdown_grace_s": 0.5})
    model = scripted(turns=[{"tool_calls": [{"tool": "wait_sleep"}]}, {"text": "never"}])
    with running_service(store_url, model=model, settings=settings) as svc, svc.client("alice") as c:
        run = c.post("/v1/runs", json={"question": "wait"}).json()
        assert _wait_for(lambda: bool(_sleeps()))
    with Store(store_url) as store:
        assert store.get_run(run["run_id"]).status == "interrupted"
    assert _wait_for(lambda: not _sleeps(), 5), f"no `sleep {SLEEP_MARKER}` left behind"


def test_a_trusted_proxy_header_names_the_user_only_when_configured(tmp_path: Path) -> None:
    store_url = sqlite_url(tmp_path)
    settings = Settings(database_url=store_url, server={"trusted_user_header": "X-Forwarded-User"})
    with running_service(store_url, settings=settings) as svc, svc.client() as proxy:
        assert proxy.get("/v1/me", headers={"X-Forwarded-User": "alice"}).json()["name"] == "alice"
        assert proxy.get("/v1/me", headers={"X-Forwarded-User": "mallory"}).status_code == 401
        assert proxy.get("/v1/me").status_code == 401
    with running_service(sqlite_url(tmp_path / "b"), users={}) as svc, svc.client() as anyone:
        assert anyone.get("/v1/me", headers={"X-Forwarded-User": "alice"}).status_code == 401, (
            "off by default"
        )
