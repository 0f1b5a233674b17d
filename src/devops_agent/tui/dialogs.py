"""The TUI's dialogs: approving or denying a paused run's calls, deciding on a plan that waits
(approve, ask for changes, reject), the plan of a run, and saving a tool call's full output to a
file.

The approval dialog shows what the CLI's prompt shows (the command or the tool and its arguments,
the classification and why it needs approval, and for a destructive call the impact analysis) and
asks for ``CONFIRM`` exactly where the rules ask for it (:func:`~devops_agent.tui.client.check_confirm`,
the rule the local client applies and the server enforces on its own). Text from tools is drawn
literally.

This module must not talk to a client: the chat screen acts on what a dialog returns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from devops_agent.errors import UserError
from devops_agent.tui.client import CONFIRM, KeptOutput, PendingCall, PendingPlan, PlanAction, check_confirm
from devops_agent.tui.conversation import ToolCallInfo, args_line
from devops_agent.tui.evidence import literal

DIALOG_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{ width: 90%; max-width: 110; height: auto; max-height: 90%;
    border: thick $warning; background: $surface; padding: 1 2; }}
{name} .title {{ text-style: bold; margin-bottom: 1; }}
{name} .problem {{ color: $error; height: auto; }}
{name} Horizontal {{ height: auto; margin-top: 1; }}
{name} Button {{ margin-right: 2; }}
{name} VerticalScroll {{ height: auto; max-height: 20; }}
"""


@dataclass(frozen=True)
class ApprovalChoice:
    """What the approver decided, for every pending call at once."""

    approve: bool
    reason: str = ""
    confirm: str | None = None


def describe(call: PendingCall) -> Text:
    """One pending call as an approver must read it (the CLI prompt's lines)."""
    level = call.classification or call.decision
    text = Text(f"{call.tool_call_id} — {level}\n", style="bold")
    if call.command:
        text.append_text(literal(f"  command: {call.command}\n"))
        text.append_text(literal(f"  tool: {call.tool}\n"))
    else:
        args = json.dumps(call.args, ensure_ascii=False, default=str)
        text.append_text(literal(f"  {call.tool}({args})\n"))
    if call.reason:
        text.append_text(literal(f"  why: {call.reason}\n"))
    impact = call.impact or {}
    for label, key in (
        ("changes", "what_changes"),
        ("could lose", "what_could_be_lost"),
        ("undo", "how_to_undo"),
    ):
        if impact.get(key):
            text.append_text(
                literal(f"  {label}: {impact[key]}\n", "red" if key == "what_could_be_lost" else "")
            )
    return text


class ApprovalDialog(ModalScreen[ApprovalChoice | None]):
    """Approve or deny every call a paused run waits on (Escape leaves the run paused)."""

    DEFAULT_CSS = DIALOG_CSS.format(name="ApprovalDialog")
    BINDINGS = [Binding("escape", "later", "Answer later")]

    def __init__(self, calls: list[PendingCall]) -> None:
        super().__init__()
        self.calls = calls
        self.destructive = any(c.destructive for c in calls)

    def compose(self) -> ComposeResult:
        with Vertical():
            n = len(self.calls)
            yield Label(f"The run waits for approval of {n} call{'s' if n != 1 else ''}", classes="title")
            with VerticalScroll():
                for call in self.calls:
                    yield Static(describe(call))
            yield Input(placeholder="reason (optional; the model reads it on a denial)", id="reason")
            if self.destructive:
                yield Input(placeholder=f"destructive: type {CONFIRM} to approve", id="confirm")
            yield Static("", classes="problem", id="problem")
            with Horizontal():
                yield Button("Approve", variant="warning", id="approve")
                yield Button("Deny", variant="primary", id="deny")
                yield Button("Later", id="later")

    def _value(self, widget_id: str) -> str:
        found = self.query(f"#{widget_id}")
        return found.first(Input).value.strip() if found else ""

    @on(Button.Pressed, "#approve")
    def approve(self) -> None:
        confirm = self._value("confirm") or None
        try:
            check_confirm(self.calls, True, confirm)
        except UserError as exc:
            self.query_one("#problem", Static).update(Text(exc.one_line()))
            return
        self.dismiss(ApprovalChoice(True, self._value("reason"), confirm))

    @on(Button.Pressed, "#deny")
    def deny(self) -> None:
        self.dismiss(ApprovalChoice(False, self._value("reason")))

    @on(Button.Pressed, "#later")
    def action_later(self) -> None:
        self.dismiss(None)


@dataclass(frozen=True)
class PlanChoice:
    """A decision on a waiting plan: ``text`` is what to change (edit) or why (reject)."""

    action: PlanAction
    text: str = ""


def describe_plan(plan: PendingPlan) -> Text:
    """A waiting plan as the person deciding must read it (the CLI's ``devops-agent plan``)."""
    text = Text()
    text.append_text(literal(f"goal: {plan.goal}\n"))
    for i, step in enumerate(plan.steps, 1):
        using = [str(t) for t in step.get("tools") or []]
        if step.get("specialist"):
            using.append(f"specialist {step['specialist']}")
        line = f"{i}. {step.get('title', '')}" + (f" [{', '.join(using)}]" if using else "")
        text.append_text(literal(line + "\n", "bold"))
        if step.get("intent"):
            text.append_text(literal(f"   why: {step['intent']}\n"))
        if step.get("expected_evidence"):
            text.append_text(literal(f"   should show: {step['expected_evidence']}\n"))
        if step.get("mutating"):
            text.append("   changes things: asks for its own approval when it runs\n", style="yellow")
    return text


class PlanDecisionDialog(ModalScreen[PlanChoice | None]):
    """Approve a plan that waits, ask for changes (the model proposes a revision), or reject it
    (nothing runs); Escape leaves it waiting."""

    DEFAULT_CSS = DIALOG_CSS.format(name="PlanDecisionDialog")
    BINDINGS = [Binding("escape", "later", "Decide later")]

    def __init__(self, plan: PendingPlan) -> None:
        super().__init__()
        self.plan = plan

    def compose(self) -> ComposeResult:
        with Vertical():
            n = len(self.plan.steps)
            yield Label(
                f"Plan (revision {self.plan.revision}): {n} step{'s' if n != 1 else ''} — run it?",
                classes="title",
            )
            with VerticalScroll():
                yield Static(describe_plan(self.plan))
            yield Input(placeholder="what should change (edit), or why (reject)", id="plan-text")
            yield Static("", classes="problem", id="problem")
            with Horizontal():
                yield Button("Approve", variant="success", id="plan-approve")
                yield Button("Ask for changes", variant="primary", id="plan-edit")
                yield Button("Reject", variant="error", id="plan-reject")
                yield Button("Later", id="later")

    def _text(self) -> str:
        return self.query_one("#plan-text", Input).value.strip()

    @on(Button.Pressed, "#plan-approve")
    def approve(self) -> None:
        self.dismiss(PlanChoice("approve", self._text()))

    @on(Button.Pressed, "#plan-edit")
    def edit(self) -> None:
        if not self._text():
            self.query_one("#problem", Static).update(Text("say what should change, then ask for changes"))
            self.query_one("#plan-text", Input).focus()
            return
        self.dismiss(PlanChoice("edit", self._text()))

    @on(Button.Pressed, "#plan-reject")
    def reject(self) -> None:
        self.dismiss(PlanChoice("reject", self._text()))

    @on(Button.Pressed, "#later")
    def action_later(self) -> None:
        self.dismiss(None)


class PlanDialog(ModalScreen[bool]):
    """The steps a run proposed and how far it got; returns True when the person stops the run."""

    DEFAULT_CSS = DIALOG_CSS.format(name="PlanDialog")
    BINDINGS = [Binding("escape", "close", "Close")]

    def __init__(self, steps: list[str], done: int, running: bool) -> None:
        super().__init__()
        self.steps, self.done, self.running = steps, done, running

    def compose(self) -> ComposeResult:
        with Vertical():
            state = "running" if self.running else "finished"
            yield Label(f"Plan: {len(self.steps)} steps, {self.done} done ({state})", classes="title")
            text = Text()
            for i, step in enumerate(self.steps):
                mark = "✓" if i < self.done else "·"
                text.append_text(literal(f"{mark} {i + 1}. {step}\n"))
            with VerticalScroll():
                yield Static(text or Text("(no plan)"))
            with Horizontal():
                yield Button("Stop the run", variant="error", id="stop", disabled=not self.running)
                yield Button("Close", variant="primary", id="close")

    @on(Button.Pressed, "#stop")
    def stop(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#close")
    def action_close(self) -> None:
        self.dismiss(False)


@dataclass(frozen=True)
class SaveChoice:
    tool_call_id: str
    path: Path


class SaveOutputDialog(ModalScreen[SaveChoice | None]):
    """Pick a tool call whose full output the session kept, and a file to write it to."""

    DEFAULT_CSS = DIALOG_CSS.format(name="SaveOutputDialog")
    BINDINGS = [Binding("escape", "close", "Close")]

    def __init__(self, kept: list[KeptOutput], seen: dict[str, ToolCallInfo], directory: Path) -> None:
        super().__init__()
        self.calls = kept
        self.seen = seen
        self.directory = directory

    def _label(self, k: KeptOutput) -> Text:
        info = self.seen.get(k.tool_call_id)
        call = f"{k.tool}({args_line(info.args, 50)})" if info is not None else k.tool
        return literal(f"{call} · {k.chars:,} characters · {k.tool_call_id}")

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Save a tool call's full output to a file", classes="title")
            yield OptionList(*[Option(self._label(k), id=k.tool_call_id) for k in self.calls], id="calls")
            yield Input(placeholder="file to write", id="path")
            yield Static("", classes="problem", id="problem")
            with Horizontal():
                yield Button("Save", variant="primary", id="save")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        if self.calls:
            self.query_one("#calls", OptionList).highlighted = len(self.calls) - 1

    @on(OptionList.OptionHighlighted)
    def _suggest(self, event: OptionList.OptionHighlighted) -> None:
        call = self._call(event.option_id)
        if call is not None:
            name = "".join(
                ch if ch.isalnum() or ch in "-_." else "_" for ch in f"{call.tool}-{call.tool_call_id}"
            )
            self.query_one("#path", Input).value = str(self.directory / f"{name}.txt")

    @on(OptionList.OptionSelected)
    def _focus_path(self) -> None:
        self.query_one("#path", Input).focus()

    def _call(self, call_id: str | None) -> KeptOutput | None:
        return next((c for c in self.calls if c.tool_call_id == call_id), None)

    @on(Button.Pressed, "#save")
    @on(Input.Submitted, "#path")
    def save(self) -> None:
        calls = self.query_one("#calls", OptionList)
        option = calls.highlighted_option
        path = self.query_one("#path", Input).value.strip()
        if option is None or option.id is None:
            self.query_one("#problem", Static).update("pick a tool call first")
            return
        if not path:
            self.query_one("#problem", Static).update("name the file to write")
            return
        self.dismiss(SaveChoice(option.id, Path(path).expanduser()))

    @on(Button.Pressed, "#cancel")
    def action_close(self) -> None:
        self.dismiss(None)
