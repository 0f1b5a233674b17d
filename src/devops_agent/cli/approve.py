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
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.markup import escape
from rich.text import Text

from devops_agent.agent.approvals import PENDING_KEY, ApprovalDecision
from devops_agent.analysis.timeparse import parse_since
from devops_agent.cli.context import AppState, err, out, state
from devops_agent.cli.render import folding_table
from devops_agent.errors import UserError
from devops_agent.textsafe import printable

if TYPE_CHECKING:
    from devops_agent.config import Settings

OnApproval = Literal["ask", "deny", "pause"]
CONFIRM = "CONFIRM"
"""What a person types (or passes with ``approve --confirm``) to run a destructive call."""
NO_APPROVER = "no approver: this run is not interactive"


def interactive() -> bool:
    return sys.stdin.isatty()


def describe_pending(call_id: str, p: Mapping[str, Any]) -> None:
    """Print one pending call the way an approver needs to see it: what runs (the command, or the
    tool and its arguments), how it was classified and why it needs approval, and for a
    destructive call the impact analysis (what changes, what could be lost, how to undo it).

    Everything here is printed literally, and the console shows control characters instead of
    obeying them: a command must not be able to move the cursor and show something else."""
    level = p.get("classification") or p.get("decision", "approve")
    err.print(f"\n[bold yellow]Approval needed[/] ({escape(call_id)}) — [bold]{escape(str(level))}[/]")
    lines = []
    if p.get("command"):
        lines.append(f"  command: {p['command']}")
        if p.get("tool"):
            lines.append(f"  tool: {p['tool']}")
    else:
        lines.append(f"  {p.get('tool')}({json.dumps(p.get('args', {}), ensure_ascii=False)})")
    if p.get("reason"):
        lines.append(f"  why: {p['reason']}")
    impact = p.get("impact") or {}
    for label, key in (
        ("changes", "what_changes"),
        ("could lose", "what_could_be_lost"),
        ("undo", "how_to_undo"),
    ):
        if impact.get(key):
            lines.append(f"  {label}: {impact[key]}")
    for line in lines:
        err.print(line, markup=False, highlight=False)


def prompt_one(call_id: str, p: Mapping[str, Any], approver: str) -> ApprovalDecision:
    """Ask at the terminal; destructive calls need CONFIRM typed out."""
    describe_pending(call_id, p)
    if p.get("decision") == "approve_detailed":
        answer = input(f"  Type {CONFIRM} to run it, anything else to deny: ").strip()
        approved = answer == CONFIRM
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
    for p in pending.values():  # what was refused, literally and on one line each
        what = p.get("command") or f"{p.get('tool')}({json.dumps(p.get('args', {}), ensure_ascii=False)})"
        err.print(f"  denied: {printable(str(what))}", markup=False, highlight=False)
    return {cid: ApprovalDecision(False, NO_APPROVER, "policy") for cid in pending}


def approve(
    ctx: typer.Context,
    session: Annotated[str, typer.Argument(help="the paused session (id or prefix)")],
    call: Annotated[list[str] | None, typer.Option("--call", help="answer only these call ids")] = None,
    deny: Annotated[bool, typer.Option("--deny", help="deny instead of approving")] = False,
    reason: Annotated[str, typer.Option("--reason", help="why; the model sees it on a denial")] = "",
    yes: Annotated[bool, typer.Option("--yes", help="answer without prompting")] = False,
    confirm: Annotated[
        str | None,
        typer.Option(
            "--confirm",
            metavar=CONFIRM,
            help=f"with --yes, approve a destructive call: pass the word {CONFIRM} after reading its impact",
        ),
    ] = None,
    approver: Annotated[str | None, typer.Option("--approver", help="name recorded in the audit log")] = None,
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Answer the approvals a paused session waits for, then let the run continue.

    The run resumes with the model that paused it (the session records it); --model picks
    another. Each pending call is shown first, with the impact of a destructive one; approving a
    destructive call without a terminal takes --yes --confirm CONFIRM.
    """
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
    settings = _resume_settings(app, record.model)
    who = approver or getpass.getuser()
    if yes or deny or not interactive():
        if not json_out:
            for c in chosen:
                describe_pending(c, pending[c])
        _check_unattended(chosen, pending, yes=yes, deny=deny, confirm=confirm)
        answers = {c: ApprovalDecision(not deny, reason, who) for c in chosen}
    else:
        answers = {c: prompt_one(c, pending[c], who) for c in chosen}
    final = execute_resume(app, record.id, answers, json_out=json_out, settings=settings)
    if final.status not in ("completed", "paused"):
        raise typer.Exit(1)


def _resume_settings(app: AppState, session_model: str | None) -> Settings:
    """The settings to resume a paused session with: its own model (the one that asked for the
    approval), unless ``--model`` names another. The configured model may be another one, or
    none at all when the answer comes from another shell."""
    settings = app.settings
    if "model" in app.overrides or not session_model or session_model == settings.model.name:
        return settings
    model = settings.model.model_copy(update={"name": session_model})
    err.print(f"[dim]resuming with the session's model {escape(session_model)}[/]", highlight=False)
    return settings.model_copy(update={"model": model})


def _check_unattended(
    chosen: Iterable[str],
    pending: Mapping[str, Mapping[str, Any]],
    *,
    yes: bool,
    deny: bool,
    confirm: str | None = None,
) -> None:
    """Without a terminal nobody was asked: approving needs ``--yes`` (a denial needs nothing),
    and a destructive call ``--confirm CONFIRM`` too, the word a person types at the prompt."""
    if deny:
        return
    destructive = [c for c in chosen if pending[c].get("decision") == "approve_detailed"]
    if destructive and (not yes or confirm != CONFIRM):
        wrong = f" (--confirm {confirm!r} is not {CONFIRM})" if confirm not in (None, CONFIRM) else ""
        raise UserError(
            f"call {destructive[0]} is destructive: approving it takes --yes --confirm {CONFIRM}{wrong}",
            hint=f"read its impact above, then pass --yes --confirm {CONFIRM} to approve, or --deny; "
            f"or answer at a terminal, where you type {CONFIRM}",
        )
    if yes:
        return
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
        str | None,
        typer.Option(
            "--outcome",
            help="executed, failed, sandbox_denied (a read-only-rated command tried to write), denied, "
            "rejected, pending or halted",
        ),
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
    from devops_agent.store import AUDIT_OUTCOMES

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


_SANDBOX_NOTE = {"bwrap": " (sandboxed)", "inactive": " (no sandbox)"}


def _print_audit(rows: Iterable[Any]) -> None:
    """A table on a wide terminal; one line per entry in a pipe or under 100 columns, where nine
    columns would fold every cell. Nothing is cut either way: a command is what an auditor needs
    whole. What was run and by whom is printed literally (a command may say "test -f [/x]")."""
    if not out.is_terminal or out.width < 100:
        for r in rows:
            exit_status = "" if r.exit_status is None else f", exit {r.exit_status}"
            kind = f"{r.classification}, " if r.classification else ""
            line = (
                f"{r.created_at:%Y-%m-%d %H:%M:%S}  {(r.session_id or '-')[:8]}  {r.tool}  {r.outcome} "
                f"({kind}{r.decision}, by {r.actor}{exit_status})"
            )
            out.print(f"{line}  {r.command}" if r.command else line, markup=False, highlight=False)
        return
    table = folding_table("when", "session", "tool", "command", "class", "decision", "outcome", "by", "exit")
    for r in rows:
        table.add_row(
            r.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            (r.session_id or "")[:8],
            Text(r.tool),
            Text(r.command or ""),
            Text(r.classification or ""),
            Text(r.decision),
            r.outcome + _SANDBOX_NOTE.get(r.sandbox or "", ""),
            Text(r.actor),
            "" if r.exit_status is None else str(r.exit_status),
        )
    out.print(table)
