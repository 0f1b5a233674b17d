"""The safety gate as a wrapper: every call is judged by :func:`~devops_agent.policies.guard.evaluate`.

A verdict of ``allow`` runs the call; ``reject`` answers with an error result the model can act
on; ``halt`` stops the run; a verdict that needs a person (``approve``/``approve_detailed``) is
handled by the run's approval policy:

* ``defer`` (the model path): raise ``ApprovalRequired`` — the run pauses durably and resumes when
  someone answers, with ``ctx.tool_call_approved`` set on the approved calls;
* ``deny`` (runbooks, which never wait for a person): refuse, saying policy allowed only reads;
* ``preapproved`` (a call a person approved outside a run, e.g. posting a report to its ticket):
  run it in that person's name. Rejections and halts still never run.

A command allowed because it was rated read-only (``Verdict.confine``) runs inside
:func:`~devops_agent.tools.sandbox.confinement`, so the shell executes it in the read-only
sandbox; one the sandbox caught writing is audited ``sandbox_denied``. Every decision is audited
through the run's hook.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai import ApprovalRequired, WrapperToolset
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import ToolsetTool

from devops_agent.config.settings import SafetySettings
from devops_agent.errors import RunHaltedError
from devops_agent.policies.guard import NEEDS_APPROVAL, Verdict, evaluate
from devops_agent.policies.modes import Mode
from devops_agent.tools.base import ToolResult, spec_from_metadata
from devops_agent.tools.sandbox import confinement

ApprovalPolicy = Literal["defer", "deny", "preapproved"]

AuditHook = Callable[[str, str | None, Verdict, str, dict[str, Any]], None]
"""``(tool, tool_call_id, verdict, outcome, extra)``; outcome is executed/failed/sandbox_denied/
rejected/pending/halted; ``extra`` may hold ``exit_status``, ``approved`` and ``sandbox``."""


def execution_record(result: ToolResult) -> tuple[str, dict[str, Any]]:
    """The audit outcome of a call that ran, and its extra fields (exit status, sandbox)."""
    code = result.data.get("exit_code") if isinstance(result.data, dict) else None
    outcome = "failed" if result.status == "error" else "executed"
    if result.metadata.get("sandbox_denied"):
        outcome = "sandbox_denied"
    return outcome, {
        "exit_status": code if isinstance(code, int) else None,
        "sandbox": result.metadata.get("sandbox"),
    }


@dataclass
class GateToolset(WrapperToolset[Any]):
    """Gates every call on the safety verdict and audits the outcome."""

    mode: Mode = "ask"
    safety: SafetySettings = field(default_factory=SafetySettings)
    approvals: ApprovalPolicy = "defer"
    audit: AuditHook | None = None
    audit_reads: bool = True
    """Audit calls that needed no decision (read-only ones). Runbooks make many such calls, which
    the session records as tool calls anyway; the audit log keeps the decisions."""

    def _record(self, tool: str, call_id: str | None, v: Verdict, outcome: str, **extra: Any) -> None:
        if self.audit is not None:
            self.audit(tool, call_id, v, outcome, extra)

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> ToolResult:
        v = evaluate(name, spec_from_metadata(tool.tool_def.metadata), tool_args, self.mode, self.safety)
        call_id = ctx.tool_call_id
        needs_person = v.decision in NEEDS_APPROVAL
        approved = ctx.tool_call_approved or (needs_person and self.approvals == "preapproved")
        if v.decision == "halt" and self.approvals == "defer":
            self._record(name, call_id, v, "halted")
            raise RunHaltedError(v.reason, hint="the run was stopped; review what the model proposed")
        if v.decision in ("reject", "halt") or (needs_person and self.approvals == "deny"):
            self._record(name, call_id, v, "rejected")
            if self.approvals == "defer":
                return ToolResult.fail(v.reason, v.hint, refused_by="policy", classification=v.classification)
            return ToolResult.fail(v.reason, v.hint or "runbooks run only what policy allows")
        if needs_person and not approved:
            self._record(name, call_id, v, "pending")
            raise ApprovalRequired(metadata=v.to_metadata())
        with confinement(v.confine and not approved):
            result: ToolResult = await super().call_tool(name, tool_args, ctx, tool)
        outcome, extra = execution_record(result)
        # A write the sandbox refused is always audited: it means the classifier misjudged.
        if needs_person or self.audit_reads or outcome == "sandbox_denied":
            self._record(name, call_id, v, outcome, approved=approved, **extra)
        return result
