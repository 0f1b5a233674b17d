"""The service end to end over real HTTP and WebSocket clients, on SQLite and PostgreSQL: a run
streamed over the WebSocket, reconnecting without loss or duplicates, cancel killing a real
process, approvals over REST resuming the run, SSE with Last-Event-ID, reports."""

from __future__ import annotations

from typing import Any

import httpx

from api_harness import PROBE_TURNS, _sleeps, _wait_for, running_service, scripted


def _events(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if "seq" in m and m.get("v") == 1]


def test_a_run_streams_over_the_websocket_with_the_scripted_model(store_url: str) -> None:
    with running_service(store_url, model=scripted(turns=PROBE_TURNS)) as svc, svc.ws("alice") as ws:
        ready = ws.recv()
        assert ready["type"] == "ready"
        assert ready["user"] == {"name": "alice", "role": "operator"}
        ws.send({"type": "query", "question": "are the probes fine?"})
        got = ws.until("run_finished")
        accepted = got[0]
        assert accepted["type"] == "accepted"
        events = _events(got)
        types = [e["type"] for e in events]
        assert types[0] == "run_started"
        assert types.count("tool_call") == 2
        assert types.count("tool_result") == 2
        assert "token" in types
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert all(e["run_id"] == accepted["run_id"] for e in events)
        final = events[-1]
        assert final["status"] == "completed"
        assert "Looked at 2 probes" in final["output"]
        # The same run, read back over REST: events and the report.
        with svc.client("alice") as c:
            page = c.get(f"/v1/runs/{accepted['run_id']}/events").json()
            assert [e["seq"] for e in page["events"]] == [e["seq"] for e in events]
            assert page["finished"] is True
            report = c.get(f"/v1/runs/{accepted['run_id']}/report").json()
            assert report["status"] == "completed"
            markdown = c.get(f"/v1/runs/{accepted['run_id']}/report", params={"format": "markdown"})
            assert markdown.headers["content-type"].startswith("text/markdown")
            assert "Looked at 2 probes" in markdown.text
            session = c.get(f"/v1/sessions/{accepted['session_id']}").json()
            assert session["status"] == "completed"
            assert session["user_id"] == svc.store.get_user("alice").id


def test_reconnecting_with_last_seq_loses_and_duplicates_nothing(store_url: str) -> None:
    turns = [{"tool_calls": [{"tool": "probe", "args": {"name": str(i)}}]} for i in range(6)]
    turns.append({"text": "done with {tool_count} probes " + "word " * 40})
    with running_service(store_url, model=scripted(turns=turns)) as svc:
        with svc.ws("alice") as ws:
            ws.recv()
            ws.send({"type": "query", "question": "probe six times"})
            accepted = ws.recv()
            first = [ws.recv() for _ in range(5)]  # then the connection drops mid-run
        run_id, session_id = accepted["run_id"], accepted["session_id"]
        last = first[-1]["seq"]
        with svc.ws("alice", session_id=session_id, last_seq=last) as ws:
            ready = ws.recv()
            assert ready["run_id"] == run_id
            rest = _events(ws.until("run_finished"))
        combined = [e["seq"] for e in first + rest]
        with svc.client("alice") as c:
            stored = [
                e["seq"] for e in c.get(f"/v1/runs/{run_id}/events", params={"limit": 5000}).json()["events"]
            ]
        assert combined == stored == list(range(1, len(stored) + 1)), "no gap, no duplicate"
        assert rest[-1]["type"] == "run_finished"


def test_cancel_over_the_websocket_kills_the_tool_process(store_url: str) -> None:
    model = scripted(turns=[{"tool_calls": [{"tool": "wait_sleep"}]}, {"text": "never"}])
    with running_service(store_url, model=model) as svc, svc.ws("alice") as ws:
        ws.recv()
        ws.send({"type": "query", "question": "wait"})
        accepted = ws.recv()
        ws.until("tool_call")
        assert _wait_for(lambda: bool(_sleeps())), "the tool's sleep process started"
        ws.send({"type": "cancel"})
        got = ws.until("run_finished")
        assert {"type": "cancel_requested", "run_id": accepted["run_id"], "ok": True}.items() <= got[
            0
        ].items()
        assert got[-1]["status"] == "cancelled"
        assert _wait_for(lambda: not _sleeps(), 5), "no sleep process is left behind"
        run = svc.wait_run("alice", accepted["run_id"])
        assert run["status"] == "cancelled"
        with svc.client("alice") as c:
            assert c.get(f"/v1/sessions/{accepted['session_id']}").json()["status"] == "cancelled"


def test_cancel_over_rest_kills_the_tool_process(store_url: str) -> None:
    model = scripted(turns=[{"tool_calls": [{"tool": "wait_sleep"}]}, {"text": "never"}])
    with running_service(store_url, model=model) as svc, svc.client("alice") as c:
        run = c.post("/v1/runs", json={"question": "wait"}).json()
        assert _wait_for(lambda: bool(_sleeps())), "the tool's sleep process started"
        answer = c.post(f"/v1/runs/{run['run_id']}/cancel")
        assert answer.status_code == 202
        assert answer.json() == {"run_id": run["run_id"], "cancelled": True}
        assert svc.wait_run("alice", run["run_id"])["status"] == "cancelled"
        assert _wait_for(lambda: not _sleeps(), 5), "no sleep process is left behind"
        assert c.post(f"/v1/runs/{run['run_id']}/cancel").json()["cancelled"] is False


# The answered run continues the same model turn list (no new prompt): call, then the answer.
APPROVAL_RUNS = [
    [{"tool_calls": [{"tool": "restart", "args": {"service": "api"}}]}, {"text": "After approval: {results}"}]
]


def test_approvals_answered_over_rest_resume_the_run(store_url: str) -> None:
    with running_service(store_url, model=scripted(runs=APPROVAL_RUNS)) as svc, svc.client("alice") as c:
        run = c.post("/v1/runs", json={"question": "restart api", "mode": "agent"}).json()
        assert svc.wait_run("alice", run["run_id"])["status"] == "paused"
        sid = run["session_id"]
        pending = c.get(f"/v1/sessions/{sid}/approvals").json()
        assert [(p["tool"], p["args"], p["decision"]) for p in pending] == [
            ("restart", {"service": "api"}, "approve")
        ]
        assert c.get("/v1/approvals").json() == pending
        # A viewer may not answer (and cannot see it: 404 first); a wrong call list is refused.
        with svc.client("vic") as v:
            assert v.post(f"/v1/sessions/{sid}/approvals", json={"decision": "approve"}).status_code == 404
        wrong = c.post(f"/v1/sessions/{sid}/approvals", json={"decision": "approve", "call_ids": ["nope"]})
        assert wrong.status_code == 409
        assert wrong.headers["content-type"] == "application/problem+json"
        resumed = c.post(f"/v1/sessions/{sid}/approvals", json={"decision": "approve", "reason": "ok"})
        assert resumed.status_code == 202
        new_run = resumed.json()["run_id"]
        assert new_run != run["run_id"]
        assert svc.wait_run("alice", new_run)["status"] == "completed"
        events = c.get(f"/v1/runs/{new_run}/events").json()["events"]
        resolved = [e for e in events if e["type"] == "approval_resolved"]
        assert [(e["approved"], e["approver"]) for e in resolved] == [(True, "alice")]
        results = [e for e in events if e["type"] == "tool_result"]
        assert [(e["tool"], e["status"]) for e in results] == [("restart", "success")]
        assert "restarted" in events[-1]["output"]
        assert c.get(f"/v1/sessions/{sid}/approvals").json() == []
        assert c.get(f"/v1/runs/{new_run}").json()["parent_run_id"] == run["run_id"]


def test_a_destructive_call_needs_an_admin_and_confirm(store_url: str) -> None:
    runs = [[{"tool_calls": [{"tool": "wipe", "args": {"path": "/tmp/x"}}]}, {"text": "{results}"}]] * 2
    with running_service(store_url, model=scripted(runs=runs)) as svc:
        with svc.client("carol") as admin:
            run = admin.post("/v1/runs", json={"question": "wipe it", "mode": "agent"}).json()
            assert svc.wait_run("carol", run["run_id"])["status"] == "paused"
            sid = run["session_id"]
            (call,) = admin.get(f"/v1/sessions/{sid}/approvals").json()
            assert call["decision"] == "approve_detailed"
            assert set(call["impact"]) == {"what_changes", "what_could_be_lost", "how_to_undo"}
            no_confirm = admin.post(f"/v1/sessions/{sid}/approvals", json={"decision": "approve"})
            assert no_confirm.status_code == 400
            assert "CONFIRM" in no_confirm.json()["detail"]
            ok = admin.post(
                f"/v1/sessions/{sid}/approvals", json={"decision": "approve", "confirm": "CONFIRM"}
            )
            assert ok.status_code == 202
            assert svc.wait_run("carol", ok.json()["run_id"])["status"] == "completed"
            audit = admin.get("/v1/audit", params={"session": sid}).json()
            assert audit
            assert all(a["user_id"] == svc.store.get_user("carol").id for a in audit)
        with svc.client("alice") as operator:
            run = operator.post("/v1/runs", json={"question": "wipe it", "mode": "agent"}).json()
            assert svc.wait_run("alice", run["run_id"])["status"] == "paused"
            refused = operator.post(
                f"/v1/sessions/{run['session_id']}/approvals",
                json={"decision": "approve", "confirm": "CONFIRM"},
            )
            assert refused.status_code == 403
            denied = operator.post(f"/v1/sessions/{run['session_id']}/approvals", json={"decision": "deny"})
            assert denied.status_code == 202


def test_sse_streams_a_run_and_resumes_from_last_event_id(store_url: str) -> None:
    with running_service(store_url, model=scripted(turns=PROBE_TURNS)) as svc, svc.client("alice") as c:
        run = c.post("/v1/runs", json={"question": "probe"}).json()
        url = f"/v1/runs/{run['run_id']}/events"
        ids: list[int] = []
        with c.stream("GET", url, headers={"Accept": "text/event-stream"}) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            for line in response.iter_lines():
                if line.startswith("id:"):
                    ids.append(int(line[3:].strip()))
        assert ids == list(range(1, len(ids) + 1))
        resumed: list[int] = []
        events: list[str] = []
        headers = {"Accept": "text/event-stream", "Last-Event-ID": str(ids[2])}
        with c.stream("GET", url, headers=headers) as response:
            for line in response.iter_lines():
                if line.startswith("id:"):
                    resumed.append(int(line[3:].strip()))
                elif line.startswith("event:"):
                    events.append(line[6:].strip())
        assert resumed == ids[3:]
        assert events[-1] == "run_finished"


def test_rest_errors_are_problem_details_with_the_cli_hints(store_url: str) -> None:
    with running_service(store_url, model=scripted(turns=PROBE_TURNS)) as svc, svc.client("alice") as c:
        bad_since = c.post("/v1/runs", json={"question": "x", "inputs": {"since": "next tuesday-ish"}})
        assert bad_since.status_code == 400
        body = bad_since.json()
        assert body["status"] == 400
        assert body["title"] == "Bad Request"
        assert body["detail"]
        unknown = c.post("/v1/runs", json={"question": "x", "runbooks": ["no-such-runbook"]})
        assert unknown.status_code == 400
        assert "unknown runbook" in unknown.json()["detail"]
        invalid = c.post("/v1/runs", json={"question": ""})
        assert invalid.status_code == 422
        assert invalid.headers["content-type"] == "application/problem+json"
        assert httpx.get(svc.url + "/v1/sessions").status_code == 401
