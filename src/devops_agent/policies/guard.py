"""The safety gate every tool call passes: mode, command classification, approvals, halts, audit.

:func:`evaluate` turns (tool spec, arguments, mode, safety settings) into a :class:`Verdict`:

* ``allow`` — run it;
* ``reject`` — do not run it; the model gets an error result with a reason and a hint it can act on;
* ``approve`` / ``approve_detailed`` — a person must approve first (the detailed form carries an
  impact analysis and asks the approver to type CONFIRM);
* ``halt`` — stop the whole run (:class:`~devops_agent.errors.RunHaltedError`).

Tools whose spec names a ``command_arg`` (the shell tool) are judged by the classifier on the
actual command; other tools by their spec: read-only tools run in both modes, the rest are
refused in ``ask`` mode and need approval in ``agent`` mode. :class:`GuardToolset` applies the
verdict around a pydantic-ai toolset: approvals become ``ApprovalRequired``, so the run pauses
durably and resumes when the answer comes (see the session service).

A command allowed *because it was rated read-only* gets ``Verdict.confine``: the guard runs it
inside :func:`~devops_agent.tools.sandbox.confinement`, so the shell tool executes it in the
read-only sandbox; a write the sandbox refused is audited as ``sandbox_denied``. Commands a
person approved, or that an allow pattern let through, run outside it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic_ai import ApprovalRequired, WrapperToolset
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import ToolsetTool

from devops_agent.config.settings import SafetySettings
from devops_agent.errors import RunHaltedError
from devops_agent.policies.modes import Mode, allowed
from devops_agent.safety import classify, decide, impact
from devops_agent.tools.base import ToolResult, ToolSpec, spec_from_metadata
from devops_agent.tools.sandbox import confinement

VerdictKind = Literal["allow", "approve", "approve_detailed", "reject", "halt"]
NEEDS_APPROVAL: tuple[VerdictKind, ...] = ("approve", "approve_detailed")


@dataclass(frozen=True)
class Verdict:
    decision: VerdictKind
    reason: str
    hint: str | None = None
    command: str | None = None
    classification: str | None = None
    impact: dict[str, str] | None = None
    confine: bool = False
    """Run it in the read-only sandbox: a command allowed because it was rated read-only."""

    def to_metadata(self) -> dict[str, Any]:
        """What an approval request carries (JSON-friendly)."""
        return {k: v for k, v in asdict(self).items() if v is not None and k != "confine"}


def _normalized(command: str) -> str:
    return " ".join(command.split())


def _quote_fix(command: str) -> str | None:
    """A corrected form for the commonest parse error: an unbalanced quote."""
    for quote in ("'", '"'):
        if command.count(quote) % 2 == 1:
            return command + quote
    return None


def evaluate_command(command: str, mode: Mode, safety: SafetySettings) -> Verdict:
    """The verdict on one shell command."""
    norm = _normalized(command)
    if any(fnmatch.fnmatchcase(norm, p) for p in safety.halt_patterns):
        return Verdict("halt", f"refusing to continue: {norm!r} matches a halt pattern", command=command)
    c = classify(command)
    if c.parse_error:
        fix = _quote_fix(command)
        hint = f"retry with balanced quoting, e.g. {fix!r}" if fix else "simplify the command and retry"
        return Verdict(
            "reject", f"the command could not be parsed: {c.parse_error}", hint, command, "unknown"
        )
    d = decide(c, mode, allow_patterns=safety.allow_patterns, deny_patterns=safety.deny_patterns)
    details = None
    if d.decision == "approve_detailed":
        imp = impact(c)
        details = {
            "what_changes": imp.what_changes,
            "what_could_be_lost": imp.what_could_be_lost,
            "how_to_undo": imp.how_to_undo,
        }
    confine = d.decision == "allow" and c.level == "read_only"
    return Verdict(d.decision, d.reason, d.hint, command, c.level, details, confine)


def evaluate(
    tool: str, spec: ToolSpec | None, args: dict[str, Any], mode: Mode, safety: SafetySettings
) -> Verdict:
    """The verdict on one tool call."""
    if spec is not None and spec.command_arg:
        return evaluate_command(str(args.get(spec.command_arg, "")), mode, safety)
    if not allowed(mode, spec):
        return Verdict(
            "reject",
            f"{tool} is not available in {mode} mode: this session may only read, not change anything",
            "use a read-only tool to gather evidence, or ask the user to switch the session to agent mode",
        )
    if spec is not None and spec.read_only:
        return Verdict("allow", "read-only tool")
    if spec is not None and spec.risk == "destructive":
        return Verdict(
            "approve_detailed",
            f"{tool} is destructive",
            impact={
                "what_changes": f"{tool} with {args}",
                "what_could_be_lost": "whatever this tool deletes or overwrites",
                "how_to_undo": "may not be undoable; check the tool's documentation",
            },
        )
    return Verdict("approve", f"{tool} changes the system" if spec else f"{tool} declares no safety spec")


AuditHook = Callable[[str, str | None, Verdict, str, dict[str, Any]], None]
"""``(tool, tool_call_id, verdict, outcome, extra)``; outcome is executed/failed/sandbox_denied/
rejected/pending/halted; ``extra`` may hold ``exit_status``, ``approved`` and ``sandbox``."""


def _field(result: Any, name: str) -> Any:
    return result.get(name) if isinstance(result, dict) else getattr(result, name, None)


def _exit_status(result: Any) -> tuple[str, int | None]:
    data, status = _field(result, "data"), _field(result, "status")
    code = data.get("exit_code") if isinstance(data, dict) else None
    return ("failed" if status == "error" else "executed"), code if isinstance(code, int) else None


def execution_record(result: Any) -> tuple[str, dict[str, Any]]:
    """The audit outcome of a call that ran, and its extra fields (exit status, sandbox)."""
    outcome, code = _exit_status(result)
    meta = _field(result, "metadata")
    meta = meta if isinstance(meta, dict) else {}
    if meta.get("sandbox_denied"):
        outcome = "sandbox_denied"
    return outcome, {"exit_status": code, "sandbox": meta.get("sandbox")}


@dataclass
class GuardToolset(WrapperToolset[Any]):
    """Hides what the mode forbids and gates every call on :func:`evaluate`."""

    mode: Mode = "ask"
    safety: SafetySettings = field(default_factory=SafetySettings)
    audit: AuditHook | None = None

    def _record(self, tool: str, call_id: str | None, v: Verdict, outcome: str, **extra: Any) -> None:
        if self.audit is not None:
            self.audit(tool, call_id, v, outcome, extra)

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = await super().get_tools(ctx)

        def visible(t: ToolsetTool[Any]) -> bool:
            spec = spec_from_metadata(t.tool_def.metadata)
            return allowed(self.mode, spec) or bool(spec and spec.command_arg)

        return {n: t for n, t in tools.items() if visible(t)}

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        v = evaluate(name, spec_from_metadata(tool.tool_def.metadata), tool_args, self.mode, self.safety)
        call_id = ctx.tool_call_id
        if v.decision == "halt":
            self._record(name, call_id, v, "halted")
            raise RunHaltedError(v.reason, hint="the run was stopped; review what the model proposed")
        if v.decision == "reject":
            self._record(name, call_id, v, "rejected")
            return ToolResult.fail(v.reason, v.hint, refused_by="policy", classification=v.classification)
        if v.decision in NEEDS_APPROVAL and not ctx.tool_call_approved:
            self._record(name, call_id, v, "pending")
            raise ApprovalRequired(metadata=v.to_metadata())
        with confinement(v.confine and not ctx.tool_call_approved):
            result = await super().call_tool(name, tool_args, ctx, tool)
        outcome, extra = execution_record(result)
        self._record(name, call_id, v, outcome, approved=ctx.tool_call_approved, **extra)
        return result
