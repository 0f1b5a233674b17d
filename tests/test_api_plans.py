"""Plans decided over the service, on SQLite and PostgreSQL, with the scripted model proposing
them: approved over REST (its steps run, in the approver's name), edited then rejected over the
WebSocket, and who may decide (owner only, a viewer only a read-only plan, 409 with none waiting)."""

from __future__ import annotations

from typing import Any

from api_harness import running_service, scripted

STEPS = [
    {"title": "Read probe a", "tools": ["probe"], "intent": "is a fine?"},
    {"title": "Read probe b", "tools": ["probe"], "expected_evidence": "b's state"},
]
READ_A = {"tool_calls": [{"tool": "probe", "args": {"name": "a"}}]}
READ_B = {"tool_calls": [{"tool": "probe", "args": {"name": "b"}}]}
READ_BOTH = [READ_A, READ_B]
"""One after the other: a call belongs to the first unfinished step that names its tool."""
ANSWER = {"output": {"summary": "Both probes answer; nothing is wrong with them.", "findings": []}}


def plan_call(steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"tool": "propose_plan", "args": {"goal": "are the probes fine", "steps": steps}}]}


def _events(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if "seq" in m and m.get("v") == 1]


def test_a_plan_approved_over_rest_runs_its_steps(store_url: str) -> None:
    model = scripted(turns=[plan_call(STEPS), *READ_BOTH, ANSWER])
    with running_service(store_url, model=model) as svc, svc.client("alice") as c:
        run = c.post("/v1/runs", json={"question": "are the probes fine?", "mode": "ask"}).json()
        assert svc.wait_run("alice", run["run_id"])["status"] == "paused"
        sid = run["session_id"]
        events = c.get(f"/v1/runs/{run['run_id']}/events").json()["events"]
        [proposed] = [e for e in events if e["type"] == "plan_proposed"]
        assert proposed["awaiting_decision"] is True
        assert not [e for e in events if e["type"] == "tool_result"], "nothing ran before the decision"

        shown = c.get(f"/v1/sessions/{sid}/plan")
        assert shown.status_code == 200
        plan = shown.json()
        assert (plan["revision"], plan["goal"], plan["mutating"]) == (1, "are the probes fine", False)
        assert [s["title"] for s in plan["steps"]] == ["Read probe a", "Read probe b"]
        # No approvals wait: the plan is not a pending call.
        assert c.get(f"/v1/sessions/{sid}/approvals").json() == []

        decided = c.post(f"/v1/sessions/{sid}/plan", json={"decision": "approve"})
        assert decided.status_code == 202, decided.text
        new_run = decided.json()["run_id"]
        assert new_run != run["run_id"]
        assert svc.wait_run("alice", new_run)["status"] == "completed"
        events = c.get(f"/v1/runs/{new_run}/events").json()["events"]
        resolved = [(e["decision"], e["approver"]) for e in events if e["type"] == "plan_resolved"]
        assert resolved == [("approved", "alice")]
        done = {e["index"] for e in events if e["type"] == "plan_step" and e["status"] == "done"}
        assert done == {0, 1}
        results = [
            (e["tool"], e["status"]) for e in events if e["type"] == "tool_result" and e["tool"] == "probe"
        ]
        assert results == [("probe", "success"), ("probe", "success")]
        # Decided: nothing waits any more, and a second decision is a conflict.
        again = c.post(f"/v1/sessions/{sid}/plan", json={"decision": "approve"})
        assert again.status_code == 409
        assert again.headers["content-type"] == "application/problem+json"
        assert c.get(f"/v1/sessions/{sid}/plan").status_code == 409


def test_a_plan_edited_then_rejected_over_the_websocket(store_url: str) -> None:
    model = scripted(turns=[plan_call(STEPS[:1] * 2), plan_call(STEPS), *READ_BOTH, ANSWER])
    with running_service(store_url, model=model) as svc, svc.ws("alice") as ws:
        assert ws.recv()["type"] == "ready"
        ws.send({"type": "query", "question": "are the probes fine?", "mode": "ask"})
        first = _events(ws.until("run_finished"))
        assert first[-1]["status"] == "paused"
        assert [e["revision"] for e in first if e["type"] == "plan_proposed"] == [1]

        ws.send({"type": "plan", "decision": "edit"})  # an edit without what to change
        problem = ws.until("problem")[-1]
        assert (problem["request"], problem["status"]) == ("plan", 400)
        assert "what to change" in problem["detail"]
        ws.send({"type": "plan", "decision": "maybe"})
        assert ws.until("problem")[-1]["status"] == 400

        ws.send({"type": "plan", "decision": "edit", "text": "read probe b too"})
        got = ws.until("run_finished")
        assert got[0]["type"] == "accepted"
        edited = _events(got)
        resolved = [(e["decision"], e["feedback"]) for e in edited if e["type"] == "plan_resolved"]
        assert resolved == [("edited", "read probe b too")]
        [revised] = [e for e in edited if e["type"] == "plan_proposed"]
        assert (revised["revision"], revised["feedback"], len(revised["plan"]["steps"])) == (
            2,
            "read probe b too",
            2,
        )
        assert edited[-1]["status"] == "paused"

        ws.send({"type": "plan", "decision": "reject", "text": "not now"})
        rejected = _events(ws.until("run_finished"))
        assert [(e["decision"], e["approver"]) for e in rejected if e["type"] == "plan_resolved"] == [
            ("rejected", "alice")
        ]
        assert not [e for e in rejected if e["type"] == "tool_call"], "a rejected plan runs nothing"
        assert "rejected by alice: not now" in (rejected[-1]["output"] or "")


def test_who_may_decide_a_plan(store_url: str) -> None:
    model = scripted(turns=[plan_call(STEPS), *READ_BOTH, ANSWER])
    with (
        running_service(store_url, model=model) as svc,
        svc.client("vic") as v,
        svc.client("bob") as b,
        svc.client("alice") as a,
    ):
        # Nothing waits in a fresh session: 409.
        fresh = a.post("/v1/sessions", json={"title": "empty"}).json()
        assert a.post(f"/v1/sessions/{fresh['id']}/plan", json={"decision": "approve"}).status_code == 409

        # A viewer decides the read-only plan of its own (ask-mode) session.
        run = v.post("/v1/runs", json={"question": "are the probes fine?"}).json()
        assert svc.wait_run("vic", run["run_id"])["status"] == "paused"
        sid = run["session_id"]
        # Another user's session is not found, whatever the role.
        for other in (b, a):
            assert other.get(f"/v1/sessions/{sid}/plan").status_code == 404
            assert other.post(f"/v1/sessions/{sid}/plan", json={"decision": "reject"}).status_code == 404
        # Its session switched to agent mode (by the CLI on the same store): no longer the
        # viewer's to decide (its steps could change things); a refusal decides nothing.
        svc.store.update_session(sid, mode="agent")
        refused = v.post(f"/v1/sessions/{sid}/plan", json={"decision": "approve"})
        assert refused.status_code == 403
        assert "read-only plan of an ask-mode session" in refused.json()["detail"]
        assert v.get(f"/v1/sessions/{sid}/plan").status_code == 200
        svc.store.update_session(sid, mode="ask")
        ok = v.post(f"/v1/sessions/{sid}/plan", json={"decision": "approve"})
        assert ok.status_code == 202, ok.text
        assert svc.wait_run("vic", ok.json()["run_id"])["status"] == "completed"
