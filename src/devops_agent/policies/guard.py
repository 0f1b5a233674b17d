"""The safety verdict on a tool call: mode, command classification, approvals, halts.

:func:`evaluate` turns (tool spec, arguments, mode, safety settings) into a :class:`Verdict`:

* ``allow`` — run it;
* ``reject`` — do not run it; the model gets an error result with a reason and a hint it can act on;
* ``approve`` / ``approve_detailed`` — a person must approve first (the detailed form carries an
  impact analysis and asks the approver to type CONFIRM);
* ``halt`` — stop the whole run (:class:`~devops_agent.errors.RunHaltedError`).

Tools whose spec names a ``command_arg`` (the shell tool) are judged by the classifier on the
actual command; other tools by their spec: read-only tools run in both modes, the rest are
refused in ``ask`` mode and need approval in ``agent`` mode. The gate of the tool pipeline
(:mod:`devops_agent.policies.toolsets.gate`) applies the verdict to every call and audits it.

A command allowed *because it was rated read-only* gets ``Verdict.confine``: the gate runs it
inside :func:`~devops_agent.tools.sandbox.confinement`, so the shell tool executes it in the
read-only sandbox; a write the sandbox refused is audited as ``sandbox_denied``. Commands a
person approved, or that an allow pattern let through, run outside it.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import asdict, dataclass
from typing import Any, Literal

from devops_agent.config.settings import SafetySettings
from devops_agent.policies.modes import Mode, allowed
from devops_agent.safety import classify, decide, impact
from devops_agent.tools.base import ToolSpec

EXFILTRATION = "exfiltration"
"""The classifier's key for a command whose destination or payload is built from local data."""

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
    # Programs are resolved through the PATH the shell tool runs commands with (it inherits ours).
    c = classify(command, resolver=os.environ.get("PATH", os.defpath), trusted_dirs=safety.trusted_bin_dirs)
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
    # Sending local data out is a class of its own (whatever level it rates): the approval prompt
    # and the audit log name it, so a reviewer can find every attempt.
    shown = EXFILTRATION if EXFILTRATION in c.keys else c.level
    return Verdict(d.decision, d.reason, d.hint, command, shown, details, confine)


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
