"""A usage limit stops a planner run as it stops the plain loop: a partial report that says which
limit, what was read so far, and no answer the run did not get to; the question's reasoning state
is cleared so the session takes a new question."""

from __future__ import annotations

from devops_agent.agent.reasoning.plan import ACTIVE_PLAN_KEY
from devops_agent.agent.runners.planner import REASONING_KEY
from devops_agent.events import LimitReached, ToolResultEvent
from devops_agent.store import Store
from fixtures_reasoning import ReasoningKit


def test_a_tool_call_limit_ends_a_planner_run_with_a_partial_report(
    sqlite_store: Store, kit: ReasoningKit
) -> None:
    model = kit.scripted(
        {
            "turns": [
                {"tool_calls": [{"tool": "svc_status", "args": {"service": "api"}}]},
                {"tool_calls": [{"tool": "svc_logs", "args": {"service": "api"}}]},
                {"output": {"summary": "never reached"}},
            ]
        }
    )
    svc = kit.service(sqlite_store, model, limits={"run": {"tool_calls": 1}})
    events = kit.drain(svc, "why is api down?", mode="ask", inputs={"plan": "never"})
    done = kit.final(events)
    assert done.status == "completed"
    [hit] = kit.of(events, LimitReached)
    assert (hit.scope, hit.limit) == ("run", "tool_calls")
    assert [r.tool for r in kit.of(events, ToolResultEvent) if r.status == "success"] == ["svc_status"]
    output = done.output or ""
    assert output.startswith("# Partial report (stopped by a usage limit)")
    assert "never reached" not in output
    report = done.report or {}
    assert report["verdict"] == "inconclusive"
    assert [c["tool"] for c in report["checks"]] == ["svc_status"]
    state = sqlite_store.get_session(done.session_id).context_state
    assert REASONING_KEY not in state
    assert ACTIVE_PLAN_KEY not in state
