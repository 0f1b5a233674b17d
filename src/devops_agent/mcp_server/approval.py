"""Approvals of calls that come in through MCP: asked of the client's user by elicitation.

A tool that changes things is offered only with ``--allow-mutating``, and even then each call waits
for a person, as at the CLI. Over MCP that person is the client's user, asked with an *elicitation*
form (``Run it?``; for a destructive call, type ``CONFIRM``). Both generations of the protocol:

* handshake-era sessions (2025-xx): the server sends ``elicitation/create`` while the call waits;
* 2026-07-28 sessions (stateless): the call answers ``input_required`` with the form and a signed
  ``request_state`` naming the exact call; the client asks its user and sends the call again with
  the answer, which counts only for that same tool and arguments, within 10 minutes.

A client that declared no elicitation capability cannot ask anyone: the call is refused (and
audited denied). This module builds the questions and reads the answers; the session service runs
and audits the call.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

import mcp_types as t
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from devops_agent.agent.approvals import ApprovalDecision

CONFIRM = "CONFIRM"
STATE_TTL_S = 600.0
_KEY = secrets.token_bytes(32)  # per process: a request_state outlives neither the process nor 10 minutes
ANSWER_KEY = "devops-agent-approval"


class NeedsInput(Exception):  # noqa: N818 - control flow, not an error
    """Raised by the asker on a 2026 session: the call must answer ``input_required``."""

    def __init__(self, result: t.InputRequiredResult) -> None:
        super().__init__("input required")
        self.result = result


def _digest(payload: bytes) -> str:
    return base64.urlsafe_b64encode(hmac.new(_KEY, payload, hashlib.sha256).digest()).decode()


def seal(tool: str, args: dict[str, Any], now: float | None = None) -> str:
    """A ``request_state`` naming this exact call, valid for :data:`STATE_TTL_S`."""
    body = json.dumps([tool, args, (now or time.time()) + STATE_TTL_S], sort_keys=True, default=str)
    payload = base64.urlsafe_b64encode(body.encode()).decode()
    return f"{payload}.{_digest(payload.encode())}"


def unseal(state: str | None, tool: str, args: dict[str, Any], now: float | None = None) -> bool:
    """Whether ``state`` is one :func:`seal` made for this tool and these arguments, not expired."""
    if not state or "." not in state:
        return False
    payload, _, sig = state.partition(".")
    if not hmac.compare_digest(sig, _digest(payload.encode())):
        return False
    try:
        sealed_tool, sealed_args, expires = json.loads(base64.urlsafe_b64decode(payload))
    except ValueError:
        return False
    same = json.dumps(sealed_args, sort_keys=True, default=str) == json.dumps(
        args, sort_keys=True, default=str
    )
    return bool(sealed_tool == tool and same and float(expires) > (now or time.time()))


def question(pending: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The elicitation message and form for one pending call (a destructive one asks for CONFIRM)."""
    args = json.dumps(pending.get("args", {}), ensure_ascii=False)
    lines = [f"DevOps Agent asks before running {pending.get('tool')}({args})."]
    if pending.get("command"):
        lines.append(f"Command: {pending['command']}")
    if pending.get("reason"):
        lines.append(f"Why it needs approval: {pending['reason']}")
    impact = pending.get("impact") or {}
    for label, key in (
        ("Changes", "what_changes"),
        ("Could lose", "what_could_be_lost"),
        ("Undo", "how_to_undo"),
    ):
        if impact.get(key):
            lines.append(f"{label}: {impact[key]}")
    if pending.get("decision") == "approve_detailed":
        lines.append(f"This is destructive: type {CONFIRM} to run it.")
        field: dict[str, Any] = {
            "type": "string",
            "title": f"Type {CONFIRM} to run it",
            "description": "anything else denies it",
        }
    else:
        field = {"type": "boolean", "title": "Run it?", "default": False}
    return "\n".join(lines), {"type": "object", "properties": {"answer": field}, "required": ["answer"]}


def decision_from(result: t.ElicitResult, pending: dict[str, Any], approver: str) -> ApprovalDecision:
    """The person's answer: accepted with ``true`` (or ``CONFIRM`` for a destructive call)."""
    if result.action != "accept":
        return ApprovalDecision(False, f"the client's user chose {result.action}", approver)
    answer = (result.content or {}).get("answer")
    if pending.get("decision") == "approve_detailed":
        ok = isinstance(answer, str) and answer.strip() == CONFIRM
        return ApprovalDecision(ok, "" if ok else f"{CONFIRM} was not typed", approver)
    ok = answer is True
    return ApprovalDecision(ok, "" if ok else "the client's user said no", approver)


def can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    caps = ctx.session.client_capabilities
    return caps is not None and caps.elicitation is not None


@dataclass
class ElicitingAsker:
    """The ``ask`` of :meth:`SessionService.call_tool` for one incoming MCP call."""

    ctx: ServerRequestContext[Any, Any]
    params: t.CallToolRequestParams
    approver: str

    async def __call__(self, pending: dict[str, Any]) -> ApprovalDecision:
        if not can_elicit(self.ctx):
            return ApprovalDecision(
                False, "this MCP client cannot ask its user (it supports no elicitation)", "policy"
            )
        message, schema = question(pending)
        tool, args = self.params.name, self.params.arguments or {}
        if self.ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            answers = self.params.input_responses or {}
            answer = answers.get(ANSWER_KEY)
            if isinstance(answer, t.ElicitResult) and unseal(self.params.request_state, tool, args):
                return decision_from(answer, pending, self.approver)
            request = t.ElicitRequest(
                params=t.ElicitRequestFormParams(message=message, requested_schema=schema)
            )
            raise NeedsInput(
                t.InputRequiredResult(input_requests={ANSWER_KEY: request}, request_state=seal(tool, args))
            )
        result = await self.ctx.session.elicit_form(message, schema, related_request_id=self.ctx.request_id)
        return decision_from(result, pending, self.approver)
