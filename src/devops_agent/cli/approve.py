"""Answering approvals in the terminal, ``devops-agent approve`` and ``devops-agent audit``.

A paused run can be answered three ways: at the prompt of the run that paused (a terminal),
later with ``devops-agent approve SESSION`` from any process, or by policy when there is no
person: a non-interactive run denies what needs approval and says so.
"""

from __future__ import annotations

import dataclasses
import getpass
import json
import sys
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from devops_agent.agent.approvals import PENDING_KEY, ApprovalDecision
from devops_agent.analysis.timeparse import parse_since
from devops_agent.cli.context import err, out, state
from devops_agent.errors import UserError
from devops_agent.store import AUDIT_OUTCOMES

OnApproval = Literal["ask", "deny", "pause"]
NO_APPROVER = "no approver: this run is not interactive"


def interactive() -> bool:
    return sys.stdin.isatty()


def visible(text: str) -> str:
    """``text`` with control characters written out (``\\x1b``, ``\\r``): a command must not be able to
    move the cursor or erase the line and so show the approver something other than what runs."""
    return "".join(
        ch if ch == "\n" or ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text
    )


def describe_pending(call_id: str, p: Mapping[str, Any]) -> None:
    """Print one pending call the way an approver needs to see it."""
    what = visible(p.get("command") or f"{p.get('tool')}({json.dumps(p.get('args', {}))})")
    level = p.get("classification") or p.get("decision", "approve")
    # The call id comes from the model and the level from the stored call: printed literally.
    err.print(f"\n[bold yellow]Approval needed[/] ({escape(call_id)}) — [bold]{escape(str(level))}[/]")
    err.print(f"  {what}", markup=False, highlight=False)
    if p.get("reason"):
        err.print(f"  why: {visible(str(p['reason']))}", markup=False)
    impact = p.get("impact") or {}
    for label, key in (
        ("changes", "what_changes"),
        ("could lose", "what_could_be_lost"),
        ("undo", "how_to_undo"),
    ):
        if impact.get(key):
            err.print(f"  {label}: {impact[key]}", markup=False)


def prompt_one(call_id: str, p: Mapping[str, Any], approver: str) -> ApprovalDecision:
    """Ask at the terminal; destructive calls need CONFIRM typed out."""
    describe_pending(call_id, p)
    if p.get("decision") == "approve_detailed":
        answer = input("  Type CONFIRM to run it, anything else to deny: ").strip()
        approved = answer == "CONFIRM"
    else:
        approved = input("  Run it? [y/N] ").strip().lower() in ("y", "yes")
    reason = "" if approved else input("  Reason for the model (optional): ").strip()
    return ApprovalDecision(approved, reason or ("" if approved else "denied at the prompt"), approver)


def answers_for(
    pending: Mapping[str, Mapping[str, Any]], how: OnApproval, approver: str | None = None
) -> dict[str, ApprovalDecision] | None:
    """Answers for every pending call, or ``None`` to leave the session paused."""
    who = approver or getpass.getuser()
    if how == "pause":
        return None
    if how == "ask" and interactive():
        return {cid: prompt_one(cid, p, who) for cid, p in pending.items()}
    err.print(
        f"[yellow]denied {len(pending)} call(s) that need approval: {NO_APPROVER}.[/] "
        "Run in a terminal to be asked, or use --approvals pause and answer with `devops-agent approve`."
    )
    return {cid: ApprovalDecision(False, NO_APPROVER, "policy") for cid in pending}


def approve(
    ctx: typer.Context,
    session: Annotated[str, typer.Argument(help="the paused session (id or prefix)")],
    call: Annotated[list[str] | None, typer.Option("--call", help="answer only these call ids")] = None,
    deny: Annotated[bool, typer.Option("--deny", help="deny instead of approving")] = False,
    reason: Annotated[str, typer.Option("--reason", help="why; the model sees it on a denial")] = "",
    yes: Annotated[bool, typer.Option("--yes", help="answer without prompting")] = False,
    approver: Annotated[str | None, typer.Option("--approver", help="name recorded in the audit log")] = None,
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Answer the approvals a paused session waits for, then let the run continue."""
    from devops_agent.cli.run import execute_resume

    app = state(ctx)
    record = app.store().get_session(session)
    pending: dict[str, Any] = record.context_state.get(PENDING_KEY, {})
    if not pending:
        raise UserError(
            f"session {record.id[:12]} has no pending approvals", hint="`devops-agent sessions list`"
        )
    chosen = call or list(pending)
    unknown = [c for c in chosen if c not in pending]
    if unknown:
        raise UserError(f"no pending approval {unknown[0]!r}", hint="pending: " + ", ".join(pending))
    if len(chosen) != len(pending):
        raise UserError("answer every pending call of the run at once", hint="pending: " + ", ".join(pending))
    who = approver or getpass.getuser()
    if yes or deny or not interactive():
        _check_unattended(chosen, pending, yes=yes, deny=deny)
        answers = {c: ApprovalDecision(not deny, reason, who) for c in chosen}
    else:
        answers = {c: prompt_one(c, pending[c], who) for c in chosen}
    final = execute_resume(app, record.id, answers, json_out=json_out)
    if final.status not in ("completed", "paused"):
        raise typer.Exit(1)


def _check_unattended(
    chosen: Iterable[str], pending: Mapping[str, Mapping[str, Any]], *, yes: bool, deny: bool
) -> None:
    """Without a terminal nobody was asked: approving needs ``--yes`` (a denial needs nothing)."""
    if deny or yes:
        return
    if any(pending[c].get("decision") == "approve_detailed" for c in chosen):
        raise UserError(
            "a destructive call needs --yes (or a terminal to type CONFIRM)",
            hint="review it with `devops-agent sessions show`, then pass --yes to approve or --deny",
        )
    raise UserError(
        "no terminal to ask for approval: pass --yes to approve or --deny to refuse",
        hint="review the pending calls with `devops-agent sessions show` first",
    )


def audit(
    ctx: typer.Context,
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="only this session (id or prefix)")
    ] = None,
    outcome: Annotated[
        str | None, typer.Option("--outcome", help=f"only this outcome: {', '.join(AUDIT_OUTCOMES)}")
    ] = None,
    tool: Annotated[str | None, typer.Option("--tool", help="only this tool")] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="entries from this far back: 2h, 1d, an ISO time")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="most entries shown")] = 100,
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """What was run or refused, in which mode, on whose decision (newest first).

    An unknown --outcome, and a --since that is negative (-2h) or in the future, are errors
    (exit 2): either would list nothing, which reads as "nothing ran".
    """
    if outcome is not None and outcome not in AUDIT_OUTCOMES:
        raise UserError(
            f"--outcome {outcome!r} is not an outcome", hint=f"use one of: {', '.join(AUDIT_OUTCOMES)}"
        )
    rows = (
        state(ctx)
        .store()
        .list_audit(
            session_id=session,
            outcome=outcome,
            tool=tool,
            since=_audit_since(since) if since else None,
            limit=limit,
        )
    )
    if json_out:
        out.print_json(json.dumps([dataclasses.asdict(r) for r in rows], default=str))
        return
    _print_audit(rows)


def _audit_since(value: str) -> datetime:
    """``--since`` of ``audit``: a bound in the past, counted back from now."""
    if value.strip().startswith("-"):
        back = value.strip().lstrip("-")
        raise UserError(
            f"--since {value}: give how far back without a sign",
            hint=f"--since counts back from now: --since {back} lists the entries of the last {back}",
        )
    bound = parse_since(value)
    if bound > datetime.now(UTC):
        raise UserError(
            f"--since {value} is in the future ({bound:%Y-%m-%d %H:%M} UTC): nothing is logged after it yet",
            hint="give a time in the past, e.g. --since 2h or --since yesterday",
        )
    return bound


def _print_audit(rows: Iterable[Any]) -> None:
    table = Table("when", "session", "tool", "command", "class", "decision", "outcome", "by", "exit")
    for r in rows:
        # What was run and by whom is printed literally: a command may say "test -f [/x]".
        table.add_row(
            r.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            (r.session_id or "")[:8],
            Text(r.tool),
            Text((r.command or "")[:50]),
            Text(r.classification or ""),
            Text(r.decision),
            r.outcome,
            Text(r.actor),
            "" if r.exit_status is None else str(r.exit_status),
        )
    out.print(table)
