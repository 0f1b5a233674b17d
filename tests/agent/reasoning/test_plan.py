"""Interactive planning with a scripted model: proposed, edited, revised, approved, executed;
rejected; answered from another process; a mutating step still asks for its own approval."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from devops_agent.agent.approvals import PENDING_KEY, ApprovalDecision
from devops_agent.agent.durability import RunRequest
from devops_agent.agent.reasoning.plan import PENDING_PLAN_KEY, PlanDecision
from devops_agent.agent.runners.planner import ANSWERED_PLAN_KEY
from devops_agent.errors import UserError
from devops_agent.events import (
    ApprovalRequested,
    PlanDeviation,
    PlanProposed,
    PlanResolved,
    PlanStepEvent,
    ToolCall,
)
from devops_agent.store import Store
from devops_agent.tools.base import ToolResult
from fixtures_reasoning import ReasoningKit

STEPS = [
    {"title": "Check the status", "tools": ["svc_status"], "intent": "is it up?"},
    {"title": "Read the logs", "tools": ["svc_logs"], "expected_evidence": "the first error"},
]
REVISED = [*STEPS, {"title": "Read the error rate", "tools": ["svc_metrics"]}]
ANSWER = {
    "summary": "api is down since 14:05: it cannot reach its database.",
    "findings": [
        {
            "severity": "high",
            "title": "api down since 14:05",
            "evidence": ["api: down since 14:05"],
            "citations": ["{call:svc_status}"],
        },
        {
            "severity": "high",
            "title": "connection refused to db:5432",
            "evidence": ["14:05:02 ERROR connection refused to db:5432"],
            "citations": ["{call:svc_logs}"],
        },
    ],
}


def plan_call(steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"tool": "propose_plan", "args": {"goal": "why is api down", "steps": steps}}]}


def test_plan_edited_revised_approved_and_executed_with_step_events(
    sqlite_store: Store, kit: ReasoningKit
) -> None:
    model = kit.scripted(
        {
            "turns": [
                plan_call(STEPS),
                plan_call(REVISED),
                {
                    "tool_calls": [
                        {"tool": "svc_status", "args": {"service": "api"}},
                        {"tool": "svc_logs", "args": {"service": "api"}},
                    ]
                },
                {"tool_calls": [{"tool": "svc_metrics", "args": {"service": "api"}}]},
                {"output": ANSWER},
            ]
        }
    )
    svc = kit.service(sqlite_store, model)
    first = kit.drain(svc, "why is api down?", mode="ask")
    assert kit.final(first).status == "paused"
    [proposed] = kit.of(first, PlanProposed)
    assert proposed.awaiting_decision
    assert proposed.revision == 1
    assert [s["title"] for s in proposed.plan["steps"]] == ["Check the status", "Read the logs"]
    assert not kit.of(first, ToolCall)[1:], "nothing but the proposal ran before the decision"
    sid = first[0].session_id
    assert sqlite_store.get_session(sid).context_state[PENDING_PLAN_KEY]["revision"] == 1

    edited = kit.follow(svc, svc.answer_plan(sid, PlanDecision("edit", "also read the error rate", "alice")))
    [resolved] = kit.of(edited, PlanResolved)
    assert (resolved.decision, resolved.feedback, resolved.approver) == (
        "edited",
        "also read the error rate",
        "alice",
    )
    [revised] = kit.of(edited, PlanProposed)
    assert revised.revision == 2
    assert revised.feedback == "also read the error rate"
    assert len(revised.plan["steps"]) == 3
    assert kit.final(edited).status == "paused"

    done = kit.follow(svc, svc.answer_plan(sid, PlanDecision("approve", approver="alice")))
    assert kit.final(done).status == "completed"
    steps = [(e.index, e.status) for e in kit.of(done, PlanStepEvent)]
    assert steps[:3] == [(0, "pending"), (1, "pending"), (2, "pending")]
    for index in range(3):
        assert steps.index((index, "running")) < steps.index((index, "done"))
    assert not kit.of(done, PlanDeviation)
    report = kit.final(done).report
    assert report is not None
    assert [s["status"] for s in report["plan"]["steps"]] == ["done", "done", "done"]
    assert report["plan"]["approved_by"] == "alice"
    assert report["plan"]["revision"] == 2
    assert report["verdict"] == "problems_found"
    assert [f["title"] for f in report["findings"]] == [
        "api down since 14:05",
        "connection refused to db:5432",
    ]
    assert "## Plan" in (kit.final(done).output or "")
    assert PENDING_PLAN_KEY not in sqlite_store.get_session(sid).context_state


def test_rejected_plan_runs_nothing(sqlite_store: Store, kit: ReasoningKit) -> None:
    model = kit.scripted(
        {"turns": [plan_call(STEPS), {"tool_calls": [{"tool": "svc_status", "args": {"service": "api"}}]}]}
    )
    svc = kit.service(sqlite_store, model)
    first = kit.drain(svc, "why is api down?", mode="ask")
    sid = first[0].session_id
    # A waiting plan is answered first: a new question or an approval would leave it dangling.
    with pytest.raises(UserError, match="waits for a decision on its plan"):
        kit.drain(svc, "and the database?", session_id=sid)
    with pytest.raises(UserError, match="waits for a decision on its plan"):
        kit.follow(svc, svc.answer(sid, {"x": ApprovalDecision(True)}))
    rejected = kit.follow(svc, svc.answer_plan(sid, PlanDecision("reject", "not now", "bob")))
    assert [e.decision for e in kit.of(rejected, PlanResolved)] == ["rejected"]
    assert not kit.of(rejected, ToolCall)
    outcome = kit.final(rejected)
    assert outcome.status == "completed"
    assert outcome.report is not None
    assert outcome.report["verdict"] == "inconclusive"
    assert "rejected by bob: not now" in (outcome.output or "")
    assert sqlite_store.list_tool_calls(sid) == [], "no tool ran"
    with pytest.raises(Exception, match="no plan waiting"):
        kit.follow(svc, svc.answer_plan(sid, PlanDecision("approve")))


def test_mutating_step_of_an_approved_plan_still_asks_for_its_approval(
    sqlite_store: Store, kit: ReasoningKit
) -> None:
    steps = [{"title": "Restart api", "tools": ["svc_restart"]}]
    model = kit.scripted(
        {"turns": [plan_call(steps), {"tool_calls": [{"tool": "svc_restart", "args": {"service": "api"}}]}]}
    )
    svc = kit.service(sqlite_store, model)
    first = kit.drain(svc, "restart api", mode="agent")
    [proposed] = kit.of(first, PlanProposed)
    assert proposed.plan["steps"][0]["mutating"] is True, "marked by its tool's spec, not the model's word"
    assert proposed.awaiting_decision, "auto: a step that changes things is never a lookup"
    sid = first[0].session_id
    approved = kit.follow(svc, svc.answer_plan(sid, PlanDecision("approve")))
    assert kit.final(approved).status == "paused"
    [asked] = kit.of(approved, ApprovalRequested)
    assert asked.tool == "svc_restart"
    assert kit.restarted == [], "approving the plan did not approve the call"
    denied = kit.follow(svc, svc.answer(sid, {asked.tool_call_id: ApprovalDecision(False, "no", "bob")}))
    assert kit.final(denied).status == "completed"
    assert kit.restarted == []


def test_auto_runs_a_lookup_plan_at_once_and_records_what_it_did_not_plan(
    sqlite_store: Store, kit: ReasoningKit
) -> None:
    model = kit.scripted(
        {
            "turns": [
                plan_call(STEPS[:1]),
                {
                    "tool_calls": [
                        {"tool": "svc_status", "args": {"service": "api"}},
                        {"tool": "svc_metrics", "args": {"service": "api"}},
                    ]
                },
                {"output": {"summary": "api is down.", "findings": [ANSWER["findings"][0]]}},
            ]
        }
    )
    events = kit.drain(kit.service(sqlite_store, model), "is api up?", mode="ask")
    assert kit.final(events).status == "completed", "a one-step read-only plan waits for nobody"
    [proposed] = kit.of(events, PlanProposed)
    assert not proposed.awaiting_decision
    [resolved] = kit.of(events, PlanResolved)
    assert (resolved.decision, resolved.approver) == ("approved", "policy"), (
        "no person: the policy's decision"
    )
    [deviation] = kit.of(events, PlanDeviation)
    assert deviation.kind == "unplanned_call"
    assert "svc_metrics" in deviation.detail
    report = kit.final(events).report or {}
    assert report["plan"]["steps"] == [{"title": "Check the status", "status": "done", "mutating": False}]
    assert report["plan"]["deviations"] == [deviation.detail]


class _Died(BaseException):
    """A worker killed mid-run: nothing of the run's own handling runs after it."""


@dataclass
class _Worker:
    """A durable executor's part in one execution of a run, kept in memory: the checkpoints and
    ``once`` keys survive from one execution to the next as the store keeps them for workers."""

    done: dict[str, str]
    once_keys: set[str]
    die_at_first_call: bool = False
    die_after: str | None = None
    """A ``once`` key whose action completes and whose record is never written: the worker died."""
    worker: str = "w"
    limiter: None = None
    completed_steps: int = 0

    @property
    def checkpoint(self) -> _Worker:
        return self

    def recorded(self, key: str) -> ToolResult | None:
        if self.die_at_first_call:
            raise _Died
        value = self.done.get(key)
        return ToolResult.model_validate_json(value) if value is not None else None

    async def record(self, key: str, result: ToolResult) -> ToolResult:
        self.done.setdefault(key, result.model_dump_json())
        return result

    def model_capabilities(self) -> list[Any]:
        return []

    async def once(self, key: str, action: Callable[[], Awaitable[None]]) -> bool:
        if key in self.once_keys:
            return False
        await action()
        if key == self.die_after:
            raise _Died
        self.once_keys.add(key)
        return True

    async def finishing(self, outcome: Any, emit: Any) -> None:
        return None


@pytest.mark.parametrize("death", ["at the first tool call", "after the denial, before its record"])
def test_a_plan_decision_replayed_after_a_takeover_is_recorded_once(
    death: str, sqlite_store: Store, kit: ReasoningKit
) -> None:
    """A worker dies after recording the decision on a plan; the worker that takes the run over
    replays it from the start: the decision is found, not asked for again, and the run goes on."""
    # A restart asked for beside the plan waits too; deciding the plan denies it (once).
    propose = plan_call(STEPS)
    propose["tool_calls"].append({"tool": "svc_restart", "args": {"service": "api"}})
    model = kit.scripted(
        {
            "turns": [
                propose,
                {
                    "tool_calls": [
                        {"tool": "svc_status", "args": {"service": "api"}},
                        {"tool": "svc_logs", "args": {"service": "api"}},
                    ]
                },
                {"output": ANSWER},
            ]
        }
    )
    svc = kit.service(sqlite_store, model)
    first = kit.drain(svc, "why is api down?", mode="agent")
    assert kit.final(first).status == "paused"
    sid = first[0].session_id
    assert list(sqlite_store.get_session(sid).context_state[PENDING_KEY]), "the restart waits"
    run_id = uuid.uuid4().hex
    sqlite_store.create_run(sid, run_id, path="planner", status="queued")
    request = RunRequest(
        sid, run_id, None, "agent", plan=PlanDecision("approve", approver="alice"), path="planner"
    )
    done: dict[str, str] = {}
    once_keys: set[str] = set()
    dying = _Worker(done, once_keys, die_at_first_call=death.startswith("at"))
    dying.die_after = None if dying.die_at_first_call else "plan.deny_waiting"
    with pytest.raises(_Died):
        asyncio.run(svc.execute(request, dying))
    context = sqlite_store.get_session(sid).context_state
    assert context[ANSWERED_PLAN_KEY]["run_id"] == run_id, "the decision is recorded before anything else"
    assert (PENDING_PLAN_KEY in context) is (dying.die_after is not None)
    assert PENDING_KEY not in context, "the restart was denied before the worker died"
    last = "plan_resolved" if dying.die_after is None else "approval_resolved"
    deadline = time.monotonic() + 10
    while not any(e.type == last for e in sqlite_store.run_events(run_id)):
        assert time.monotonic() < deadline, "the dead worker's journal wrote its events"
        time.sleep(0.05)

    final = asyncio.run(svc.execute(request, _Worker(done, once_keys)))
    assert final is not None
    assert final.status == "completed", [e.payload for e in sqlite_store.run_events(run_id)][-3:]
    stored = [json.loads(e.payload) for e in sqlite_store.run_events(run_id)]
    assert [e["decision"] for e in stored if e["type"] == "plan_resolved"] == ["approved"], "once"
    assert sorted(c.tool for c in sqlite_store.list_tool_calls(sid)) == ["svc_logs", "svc_status"]
    assert final.report is not None
    assert final.report["plan"]["approved_by"] == "alice"
    assert kit.restarted == []
    outcomes = [a.outcome for a in sqlite_store.list_audit(session_id=sid, tool="svc_restart")]
    assert sorted(outcomes) == ["denied", "pending"], "paused once, denied once"
