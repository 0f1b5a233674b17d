"""The approval broker of one run: pause for a person's answers, record them, resume.

:meth:`ApprovalBroker.pause` stores what waits in the session (so any process can answer) and
announces each call with an ``approval_requested`` event; :meth:`ApprovalBroker.answer` checks the
answers, records them — an ``approval_resolved`` event each, an audit entry for each denial —
clears what was pending, and returns them in the form that resumes the model run. The pending
calls' format and the answer checks are :mod:`devops_agent.agent.approvals`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pydantic_ai import DeferredToolRequests, DeferredToolResults

from devops_agent.agent.approvals import (
    PENDING_KEY,
    ApprovalDecision,
    check_answers,
    deferred_results,
    pending_from,
)
from devops_agent.events import ApprovalRequested, ApprovalResolved, RunEvent
from devops_agent.policies.guard import Verdict
from devops_agent.store import SessionRecord, Store

AuditWriter = Callable[[str, str | None, Verdict, str, str, int | None], None]
"""``(tool, tool_call_id, verdict, outcome, actor, exit_status)``: one audit entry of the run."""


@dataclass
class ApprovalBroker:
    """Pauses one run for approvals and records the answers."""

    store: Store
    emit: Callable[[RunEvent], RunEvent]
    audit: AuditWriter

    def pause(self, session_id: str, requests: DeferredToolRequests) -> None:
        """Store the calls that wait for a person and announce each of them."""
        pending = pending_from(requests)
        state = self.store.get_session(session_id).context_state
        self.store.update_session(session_id, context_state=dict(state, **{PENDING_KEY: pending}))
        for call_id, p in pending.items():
            self.emit(
                ApprovalRequested(
                    session_id=session_id,
                    run_id="",
                    tool_call_id=call_id,
                    tool=p["tool"],
                    args=p["args"],
                    reason=p.get("reason", ""),
                    decision=p.get("decision", "approve"),
                    command=p.get("command"),
                    classification=p.get("classification"),
                    impact=p.get("impact"),
                )
            )

    def answer(self, session: SessionRecord, answers: Mapping[str, ApprovalDecision]) -> DeferredToolResults:
        """Record ``answers`` to the session's pending calls; the results that resume the run."""
        pending = session.context_state.get(PENDING_KEY, {})
        check_answers(pending, answers)
        for call_id, a in answers.items():
            self.emit(
                ApprovalResolved(
                    session_id=session.id,
                    run_id="",
                    tool_call_id=call_id,
                    approved=a.approved,
                    reason=a.reason,
                    approver=a.approver,
                )
            )
            if not a.approved:
                p = pending[call_id]
                denied = Verdict(
                    p.get("decision", "approve"),
                    a.reason or "denied",
                    None,
                    p.get("command"),
                    p.get("classification"),
                )
                self.audit(p["tool"], call_id, denied, "denied", a.approver, None)
        latest = self.store.get_session(session.id).context_state
        self.store.update_session(
            session.id, context_state={k: v for k, v in latest.items() if k != PENDING_KEY}
        )
        return deferred_results(answers)

    def answer_again(self, session_id: str, answers: Mapping[str, ApprovalDecision]) -> None:
        """:meth:`answer` inside a durable run's ``once``, which a worker may die in after the
        answers were recorded and before ``once`` was: a replay then finds no pending calls, and
        answering them again would fail; so they are answered only while still pending."""
        session = self.store.get_session(session_id)
        if session.context_state.get(PENDING_KEY):
            self.answer(session, answers)
