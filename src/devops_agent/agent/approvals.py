"""Pending approvals of a paused run, kept in the session so any process can answer them.

When the guard asks for approval, the model run ends with pydantic-ai's ``DeferredToolRequests``.
The session service stores what is pending in ``session.context_state["pending_approvals"]``
(tool, args and the guard's verdict per tool call id) next to the serialized history, sets the
session to ``paused``, and emits ``approval_requested`` events. Later — in the same process or
another — :func:`check_answers` validates the answers and :func:`deferred_results` turns them
into the ``DeferredToolResults`` that resume the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the CLI imports this module for every command; the runtime only when it runs
    from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied

from devops_agent.errors import UserError

PENDING_KEY = "pending_approvals"
POLICY_KEY = "approvals_policy"
"""Where a session keeps how its calls that need approval are answered (``ask``, ``deny``,
``pause``), so that a run resumed by ``devops-agent approve`` in another process keeps to it."""


@dataclass(frozen=True)
class ApprovalDecision:
    """A person's answer to one pending call."""

    approved: bool
    reason: str = ""
    approver: str = "user"


def pending_from(requests: DeferredToolRequests) -> dict[str, dict[str, Any]]:
    """What to store for each call waiting for approval, by tool call id."""
    return {
        part.tool_call_id: {
            "tool": part.tool_name,
            "args": part.args_as_dict(),
            **requests.metadata.get(part.tool_call_id, {}),
        }
        for part in requests.approvals
    }


def check_answers(pending: Mapping[str, Any], answers: Mapping[str, ApprovalDecision]) -> None:
    """Every pending call must be answered, and nothing else."""
    if not pending:
        raise UserError(
            "this session has no pending approvals", hint="`devops-agent sessions show ID --events`"
        )
    unknown = sorted(set(answers) - set(pending))
    missing = sorted(set(pending) - set(answers))
    if unknown:
        raise UserError(
            f"no pending approval with id {unknown[0]!r}", hint=f"pending: {', '.join(sorted(pending))}"
        )
    if missing:
        raise UserError(f"approval {missing[0]!r} was not answered", hint="answer every pending call at once")


def deferred_results(answers: Mapping[str, ApprovalDecision]) -> DeferredToolResults:
    """The pydantic-ai form of the answers; a denial carries its reason to the model."""
    from pydantic_ai import DeferredToolResults, ToolDenied

    approvals: dict[str, bool | ToolApproved | ToolDenied] = {}
    for call_id, a in answers.items():
        if a.approved:
            approvals[call_id] = True
        else:
            why = f": {a.reason}" if a.reason else ""
            approvals[call_id] = ToolDenied(
                f"{a.approver} denied this call{why}. Do not retry it; find another way."
            )
    return DeferredToolResults(approvals=approvals)
