"""Isolation: every endpoint that takes a session or run id answers another user's id exactly as it
answers an id that does not exist (404, same message), over REST, SSE and the WebSocket; an admin
sees everyone's; a viewer never reaches agent mode."""

from __future__ import annotations

import re
from typing import Any

from api_harness import PROBE_TURNS, running_service, scripted
from devops_agent.config import Settings

RUNS = [[{"tool_calls": [{"tool": "restart", "args": {"service": "api"}}]}, {"text": "{results}"}]]


def requests_for(sid: str, rid: str, call: str) -> dict[tuple[str, str], dict[str, Any]]:
    """One request per route with a session or run id: (method, route path) → request."""
    return {
        ("GET", "/v1/sessions/{session_id}"): {"url": f"/v1/sessions/{sid}"},
        ("PATCH", "/v1/sessions/{session_id}"): {"url": f"/v1/sessions/{sid}", "json": {"title": "mine now"}},
        ("DELETE", "/v1/sessions/{session_id}"): {"url": f"/v1/sessions/{sid}"},
        ("GET", "/v1/sessions/{session_id}/runs"): {"url": f"/v1/sessions/{sid}/runs"},
        ("POST", "/v1/sessions/{session_id}/runs"): {
            "url": f"/v1/sessions/{sid}/runs",
            "json": {"question": "x"},
        },
        ("GET", "/v1/sessions/{session_id}/events"): {"url": f"/v1/sessions/{sid}/events"},
        ("GET", "/v1/sessions/{session_id}/outputs"): {"url": f"/v1/sessions/{sid}/outputs"},
        ("GET", "/v1/sessions/{session_id}/outputs/{tool_call_id}"): {
            "url": f"/v1/sessions/{sid}/outputs/{call}"
        },
        ("GET", "/v1/sessions/{session_id}/approvals"): {"url": f"/v1/sessions/{sid}/approvals"},
        ("POST", "/v1/sessions/{session_id}/approvals"): {
            "url": f"/v1/sessions/{sid}/approvals",
            "json": {"decision": "approve"},
        },
        ("GET", "/v1/sessions/{session_id}/plan"): {"url": f"/v1/sessions/{sid}/plan"},
        ("POST", "/v1/sessions/{session_id}/plan"): {
            "url": f"/v1/sessions/{sid}/plan",
            "json": {"decision": "approve"},
        },
        ("GET", "/v1/runs/{run_id}"): {"url": f"/v1/runs/{rid}"},
        ("POST", "/v1/runs/{run_id}/cancel"): {"url": f"/v1/runs/{rid}/cancel"},
        ("POST", "/v1/runs/{run_id}/resume"): {"url": f"/v1/runs/{rid}/resume"},
        ("GET", "/v1/runs/{run_id}/events"): {"url": f"/v1/runs/{rid}/events"},
        ("GET", "/v1/runs/{run_id}/report"): {"url": f"/v1/runs/{rid}/report"},
    }


def extra_requests(sid: str, rid: str) -> list[dict[str, Any]]:
    """Routes without an id in the path that still name a session or run."""
    return [
        {"method": "POST", "url": "/v1/runs", "json": {"question": "x", "session_id": sid}},
        {"method": "GET", "url": "/v1/audit", "params": {"session": sid}},
        {
            "method": "GET",
            "url": f"/v1/runs/{rid}/events",
            "headers": {"Accept": "text/event-stream"},
        },
    ]


def _shape(body: dict[str, Any], *ids: str) -> dict[str, Any]:
    """The problem with the ids it names replaced, to compare answers about different ids."""
    text = body["detail"]
    for i in ids:
        text = text.replace(i, "ID")
    return {**body, "detail": re.sub(r"[0-9a-f]{32}", "ID", text)}


def test_no_endpoint_lets_a_user_reach_another_users_session(store_url: str) -> None:
    with running_service(store_url, model=scripted(runs=RUNS)) as svc:
        with svc.client("alice") as alice:
            run = alice.post("/v1/runs", json={"question": "restart api", "mode": "agent"}).json()
            assert svc.wait_run("alice", run["run_id"])["status"] == "paused"
            (pending,) = alice.get(f"/v1/sessions/{run['session_id']}/approvals").json()
        sid, rid, call = run["session_id"], run["run_id"], pending["tool_call_id"]
        fake_sid, fake_rid = "f" * 32, "e" * 32
        with svc.client() as anyone:
            paths = anyone.get("/openapi.json").json()["paths"]
        routes = {
            (method.upper(), path)
            for path, ops in paths.items()
            if "{session_id}" in path or "{run_id}" in path
            for method in ops
        }
        real = requests_for(sid, rid, call)
        fake = requests_for(fake_sid, fake_rid, call)
        assert routes == set(real), "every route with a session or run id is in the matrix"
        with svc.client("bob") as bob:
            for key, req in real.items():
                method = key[0]
                got = bob.request(method, req["url"], json=req.get("json"))
                nothing = bob.request(method, fake[key]["url"], json=fake[key].get("json"))
                assert got.status_code == 404, (key, got.status_code, got.text)
                assert nothing.status_code == 404, key
                assert got.headers["content-type"] == "application/problem+json"
                assert _shape(got.json(), sid, rid) == _shape(nothing.json(), fake_sid, fake_rid), key
            for req in extra_requests(sid, rid):
                got = bob.request(
                    req["method"],
                    req["url"],
                    json=req.get("json"),
                    params=req.get("params"),
                    headers=req.get("headers"),
                )
                assert got.status_code == 404, (req, got.text)
            listed = bob.get("/v1/sessions").json()
            assert listed["total"] == 0
            assert bob.get("/v1/approvals").json() == []
            assert bob.get("/v1/audit").json() == []
            assert bob.get("/v1/sessions", params={"scope": "all"}).status_code == 403
        # Nothing bob did changed or resumed alice's session.
        with svc.client("alice") as alice:
            mine = alice.get(f"/v1/sessions/{sid}").json()
            assert (mine["title"], mine["status"], mine["pending_approvals"]) == ("restart api", "paused", 1)
            assert len(alice.get(f"/v1/sessions/{sid}/runs").json()) == 1
            # Her run's audit entries name her (a non-admin sees only entries of her own).
            mine_audit = alice.get("/v1/audit").json()
            assert mine_audit
            assert {a["session_id"] for a in mine_audit} == {sid}
        # The matrix is not trivially 404: the owner and an admin reach the same routes.
        with svc.client("carol") as admin:
            assert admin.get(f"/v1/sessions/{sid}").status_code == 200
            assert admin.get(f"/v1/runs/{rid}/events").status_code == 200
            assert admin.get("/v1/sessions", params={"scope": "all"}).json()["total"] == 1
            assert {a["session_id"] for a in admin.get("/v1/audit").json()} <= {sid}


def test_the_websocket_refuses_another_users_session_and_runs(store_url: str) -> None:
    with running_service(store_url, model=scripted(turns=PROBE_TURNS)) as svc:
        with svc.client("alice") as alice:
            run = alice.post("/v1/runs", json={"question": "probe"}).json()
        svc.wait_run("alice", run["run_id"])
        sid, rid = run["session_id"], run["run_id"]
        with svc.ws("bob", session_id=sid) as ws:
            problem = ws.recv()
            assert (problem["type"], problem["status"], problem["request"]) == ("problem", 404, "init")
            assert problem["detail"] == f"no session {sid!r}"
        with svc.ws("bob") as ws:
            assert ws.recv()["type"] == "ready"
            attempts = [
                {"type": "subscribe", "run_id": rid},
                {"type": "cancel", "run_id": rid},
                {"type": "approve", "session_id": sid},
                {"type": "deny", "session_id": sid},
                {"type": "query", "question": "x", "session_id": sid},
            ]
            for attempt in attempts:
                ws.send(attempt)
                answer = ws.recv()
                assert (answer["type"], answer["status"]) == ("problem", 404), attempt
            ws.send({"type": "ping"})
            assert ws.recv()["type"] == "pong", "no event of alice's run reached bob"


def test_a_viewer_never_reaches_agent_mode(store_url: str) -> None:
    settings = Settings(database_url=store_url, mode="agent")  # the server's default is agent mode
    with running_service(store_url, model=scripted(turns=PROBE_TURNS), settings=settings) as svc:
        with svc.client("vic") as vic:
            for method, url, body in [
                ("POST", "/v1/runs", {"question": "x", "mode": "agent"}),
                ("POST", "/v1/sessions", {"title": "x", "mode": "agent"}),
            ]:
                refused = vic.request(method, url, json=body)
                assert refused.status_code == 403, url
                assert "ask mode only" in refused.json()["detail"]
            run = vic.post("/v1/runs", json={"question": "probe"}).json()  # no mode: not the server's agent
            svc.wait_run("vic", run["run_id"])
            events = vic.get(f"/v1/runs/{run['run_id']}/events").json()["events"]
            assert events[0]["mode"] == "ask"
            session = vic.get(f"/v1/sessions/{run['session_id']}").json()
            assert session["mode"] == "ask"
            patched = vic.patch(f"/v1/sessions/{run['session_id']}", json={"mode": "agent"})
            assert patched.status_code == 403
            created = vic.post("/v1/sessions", json={"title": "mine"}).json()
            assert created["mode"] == "ask"
            again = vic.post(f"/v1/sessions/{created['id']}/runs", json={"question": "x", "mode": "agent"})
            assert again.status_code == 403
        with svc.ws("vic") as ws:
            ws.recv()
            ws.send({"type": "query", "question": "x", "mode": "agent"})
            answer = ws.recv()
            assert (answer["type"], answer["status"]) == ("problem", 403)
        with svc.client("alice") as operator:  # an operator may
            run = operator.post("/v1/runs", json={"question": "probe", "mode": "agent"}).json()
            svc.wait_run("alice", run["run_id"])
            assert operator.get(f"/v1/runs/{run['run_id']}/events").json()["events"][0]["mode"] == "agent"


def test_an_alerts_token_may_only_post_alerts(store_url: str) -> None:
    with running_service(store_url, model=scripted(turns=PROBE_TURNS)) as svc, svc.client("am") as am:
        assert am.get("/v1/sessions").status_code == 403
        assert am.post("/v1/runs", json={"question": "x"}).status_code == 403
        with svc.ws("am") as ws:
            assert ws.recv()["status"] == 403
