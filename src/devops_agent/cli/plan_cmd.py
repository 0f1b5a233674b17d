"""Deciding on a model's plan in the terminal, and ``devops-agent plan``.

A run that proposes a plan waits for a person's decision (``--plan always``, or ``auto`` when the
plan is more than a lookup). The decision is given at the prompt of the run that paused (a
terminal), or later with ``devops-agent plan SESSION --approve | --edit TEXT | --reject`` from any
process sharing the store. Without a terminal a run never decides for the person: it stays paused
and says how to answer. Approving a plan approves no call: a step that changes things still asks
for its own approval when it runs.
"""

from __future__ import annotations

import getpass
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.markup import escape

from devops_agent.cli.context import AppState, err, out, state
from devops_agent.errors import UserError
from devops_agent.textsafe import printable

if TYPE_CHECKING:
    from devops_agent.agent.reasoning.plan import PlanDecision

PLAN_MODES = ("auto", "always", "never")
_ACTIONS: dict[str, Literal["approve", "edit", "reject"]] = {
    "approve": "approve",
    "edit": "edit",
    "reject": "reject",
}
PlanOpt = Annotated[
    str | None,
    typer.Option(
        "--plan",
        help="with a model: propose a plan and wait for your decision before acting: auto (when more "
        "than a lookup, or a step changes things), always, never; default from agent.plan",
    ),
]
CouncilOpt = Annotated[
    str | None,
    typer.Option(
        "--council",
        help="with a model: put the question to these specialists at once (comma-separated, e.g. "
        "logs,metrics); a synthesizer reconciles their answers and shows where they disagree",
    ),
]


def plan_inputs(plan: str | None, council: str | None) -> dict[str, Any]:
    """A run's inputs for ``--plan`` and ``--council``, checked before anything runs."""
    inputs: dict[str, Any] = {}
    if plan is not None:
        if plan not in PLAN_MODES:
            raise typer.BadParameter(f"{plan!r}: use auto, always or never", param_hint="--plan")
        inputs["plan"] = plan
    if council is not None:
        members = [m.strip() for m in council.split(",") if m.strip()]
        if len(members) < 2:
            raise typer.BadParameter(
                "a council needs at least two specialists, e.g. logs,metrics", param_hint="--council"
            )
        inputs["council"] = members
    return inputs


def plan_hint(session_id: str) -> str:
    short = session_id[:12]
    return (
        f"paused: the plan waits for your decision; answer with `devops-agent plan {short} --approve` "
        "(or --edit TEXT, --reject)"
    )


def describe_plan(pending: Mapping[str, Any]) -> None:
    """Print a pending plan the way the person deciding needs to see it: its goal, and each step
    with what it uses, what it should show, and whether it changes things. Printed literally: the
    text comes from a model."""
    plan = pending.get("plan") or {}
    err.print(f"\n[bold yellow]Plan[/] (revision {pending.get('revision', 1)}) — waiting for your decision")
    lines = [f"  goal: {plan.get('goal', '')}"]
    for i, step in enumerate(plan.get("steps", []), 1):
        using = [
            *step.get("tools", []),
            *([f"specialist {step['specialist']}"] if step.get("specialist") else []),
        ]
        mark = "  (changes things: asks for approval when it runs)" if step.get("mutating") else ""
        lines.append(f"  {i}. {step.get('title', '')}" + (f" [{', '.join(using)}]" if using else "") + mark)
        if step.get("expected_evidence"):
            lines.append(f"     should show: {step['expected_evidence']}")
    for line in lines:
        err.print(printable(line), markup=False, highlight=False)


def prompt_plan(pending: Mapping[str, Any], approver: str) -> PlanDecision:
    """Ask at the terminal: approve, ask for changes (the model revises the plan), or reject."""
    from devops_agent.agent.reasoning.plan import PlanDecision

    describe_plan(pending)
    while True:
        answer = input("  Run this plan? [y]es / [e]dit / [n]o: ").strip().lower()
        if answer in ("y", "yes"):
            return PlanDecision("approve", approver=approver)
        if answer in ("n", "no"):
            reason = input("  Reason (optional): ").strip()
            return PlanDecision("reject", reason, approver)
        if answer in ("e", "edit"):
            feedback = input("  What should change? ").strip()
            if feedback:
                return PlanDecision("edit", feedback, approver)
        err.print("  answer y, e or n")


def chat_plan(app: AppState, session_id: str | None, arg: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """Chat's ``/plan``: ``auto|always|never`` sets the plan mode of the questions after it (the
    chat's inputs, returned); ``approve``, ``edit TEXT`` or ``reject [REASON]`` decides on the plan
    the chat's session waits for (a chat without a terminal, or one resumed on such a session);
    alone it shows the mode and the waiting plan."""
    from devops_agent.agent.reasoning.plan import PENDING_PLAN_KEY, PlanDecision
    from devops_agent.cli.run import execute_plan_decision

    word, _, rest = arg.strip().partition(" ")
    if word in PLAN_MODES:
        err.print(f"plans: {word}")
        return plan_inputs(word, None)
    record = app.store().get_session(session_id) if session_id else None
    pending = record.context_state.get(PENDING_PLAN_KEY) if record is not None else None
    if word in ("approve", "edit", "reject"):
        if record is None or not pending:
            err.print("no plan waits for a decision in this session")
        elif word == "edit" and not rest.strip():
            err.print("say what to change: /plan edit TEXT")
        else:
            decision = PlanDecision(_ACTIONS[word], rest.strip(), getpass.getuser())
            execute_plan_decision(app, record.id, decision, json_out=False)
        return inputs
    shown = inputs.get("plan", f"{app.settings.agent.plan} (config)")
    err.print(f"plans: {shown}; use /plan auto, /plan always or /plan never")
    if pending:
        describe_plan(pending)
        err.print("decide with /plan approve, /plan edit TEXT or /plan reject")
    return inputs


def plan(
    ctx: typer.Context,
    session: Annotated[str, typer.Argument(help="the session whose plan waits (id or prefix)")],
    approve: Annotated[bool, typer.Option("--approve", help="run the plan as proposed")] = False,
    edit: Annotated[
        str | None,
        typer.Option("--edit", metavar="TEXT", help="what to change; the model proposes a revised plan"),
    ] = None,
    reject: Annotated[bool, typer.Option("--reject", help="run nothing; the run ends")] = False,
    reason: Annotated[str, typer.Option("--reason", help="why, with --reject")] = "",
    approver: Annotated[
        str | None, typer.Option("--approver", help="name recorded with the decision")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Show the plan a paused session waits for, or decide on it.

    With none of --approve, --edit or --reject the plan is shown (--json: as data). A decision
    continues the run with the model that proposed the plan (the session records it; --model
    picks another): --edit gets a revised plan, which waits for a decision again.
    """
    from devops_agent.agent.reasoning.plan import PENDING_PLAN_KEY, PlanDecision
    from devops_agent.cli.approve import _resume_settings
    from devops_agent.cli.run import execute_plan_decision

    app = state(ctx)
    record = app.store().get_session(session)
    pending: dict[str, Any] | None = record.context_state.get(PENDING_PLAN_KEY)
    if not pending:
        raise UserError(
            f"session {record.id[:12]} has no plan waiting for a decision",
            hint=f"`devops-agent sessions show {record.id[:12]} --events` shows what it did",
        )
    chosen = [
        name
        for name, given in (("--approve", approve), ("--edit", edit is not None), ("--reject", reject))
        if given
    ]
    if len(chosen) > 1:
        raise UserError(f"{' and '.join(chosen)} contradict each other", hint="give one decision")
    if not chosen:
        if json_out:
            out.print_json(json.dumps({"session_id": record.id, **pending}))
        else:
            describe_plan(pending)
            err.print(escape(plan_hint(record.id)).removeprefix("paused: "), highlight=False)
        return
    who = approver or getpass.getuser()
    if approve:
        decision = PlanDecision("approve", approver=who)
    elif edit is not None:
        decision = PlanDecision("edit", edit, who)
    else:
        decision = PlanDecision("reject", reason, who)
    final = execute_plan_decision(
        app, record.id, decision, json_out=json_out, settings=_resume_settings(app, record.model)
    )
    if final.status not in ("completed", "paused"):
        raise typer.Exit(1)
