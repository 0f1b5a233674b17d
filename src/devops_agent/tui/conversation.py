"""The conversation: every ``RunEvent`` of a session drawn as it comes.

:data:`RENDERERS` maps each event type to the method that draws it; a test fails when
``devops_agent.events`` gains a type this table lacks. Questions and run lines, the answer as it
streams (token by token), each tool call as a collapsible panel (tool, arguments, status, duration,
summary or error, truncation), the plan, approval requests and answers, errors, and how the run
ended. The view keeps what the screens act on: the last run, its plan and progress, the tool calls
(for saving an output), the last report.

Everything shown comes from outside (prompts, tool arguments and output, model text): it is drawn
as literal text with control characters made visible, never as markup or terminal codes.

This module must not talk to a client: the chat screen feeds it events.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.widgets import Collapsible, Markdown, Static

from devops_agent.events import (
    ApprovalRequested,
    ApprovalResolved,
    ErrorEvent,
    PlanProposed,
    RunEvent,
    RunFinished,
    RunStarted,
    Token,
    ToolCall,
    ToolResultEvent,
)
from devops_agent.textsafe import printable, visible

STATUS_MARK = {"success": "✓", "no_data": "∅", "error": "✗"}
FINISH_STYLE = {"completed": "green", "paused": "yellow", "cancelled": "yellow", "interrupted": "yellow"}
ARGS_CHARS = 80


def args_line(args: dict[str, Any], limit: int = ARGS_CHARS) -> str:
    """A call's arguments on one short line: ``path='/var/log/syslog', limit=50``."""
    parts = []
    for key, value in args.items():
        shown = repr(value) if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
        parts.append(f"{key}={shown}")
    text = printable(", ".join(parts))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def literal(text: str, style: str = "") -> Text:
    """Outside text as a Rich ``Text``: no markup, control characters shown, not obeyed."""
    return Text(visible(text), style=style)


@dataclass
class ToolCallInfo:
    """One tool call as the screens need it (saving its output, the plan's progress)."""

    tool_call_id: str
    tool: str
    args: dict[str, Any]
    run_id: str
    status: str | None = None


@dataclass
class RunState:
    """What the view knows of the run it draws last."""

    run_id: str
    session_id: str
    mode: str = ""
    plan: list[str] = field(default_factory=list)
    done: int = 0
    finished: RunFinished | None = None


class ToolPanel(Collapsible):
    """One tool call: its title line says tool, arguments, status and duration; opened, the full
    arguments and what came back."""

    DEFAULT_CSS = """
    ToolPanel { margin: 0 0 0 2; padding: 0; border: none; }
    ToolPanel Static.body { padding: 0 1; color: $text-muted; }
    """

    def __init__(self, event: ToolCall) -> None:
        self.call = event
        self.head = f"{printable(event.tool)}({args_line(event.args)})"
        self.args_view = Static(literal(json.dumps(event.args, indent=2, default=str, ensure_ascii=False)))
        self.args_view.add_class("body")
        self.done = False
        self.result_view = Static(Text("running…", style="italic"))
        self.result_view.add_class("body")
        super().__init__(
            self.args_view,
            self.result_view,
            title=escape(f"… {self.head}"),
            collapsed=True,
        )

    def note(self, mark: str, text: str) -> None:
        """A call that has no result (yet): waiting for approval, or not run when its run ended."""
        self.title = escape(f"{mark} {self.head}")
        self.result_view.update(Text(text, style="italic"))

    def finish(self, result: ToolResultEvent) -> None:
        mark = STATUS_MARK.get(result.status, result.status)
        ms = f" {result.duration_ms:.0f} ms" if result.duration_ms is not None else ""
        cut = " (truncated)" if result.truncated else ""
        self.done = True
        self.title = escape(f"{mark} {self.head}{ms}{cut}")
        self.add_class(f"status-{result.status}")
        lines = Text()
        lines.append(f"status: {result.status}{ms}\n", style="bold")
        if result.error:
            lines.append_text(literal(f"error: {result.error}\n", "red"))
        if result.summary:
            lines.append_text(literal(result.summary + "\n"))
        if result.truncated:
            lines.append("the output was cut for the model; ctrl+o saves the full output\n", style="yellow")
        self.result_view.update(lines)


class ConversationView(VerticalScroll):
    """The scrolling conversation of one session."""

    DEFAULT_CSS = """
    ConversationView { height: 1fr; padding: 0 1; }
    ConversationView .question { margin-top: 1; text-style: bold; }
    ConversationView .meta { color: $text-muted; }
    ConversationView .answer { margin: 1 0 0 0; }
    ConversationView .plan { margin: 0 0 0 2; color: $text-muted; }
    ConversationView .approval { margin: 0 0 0 2; border: round $warning; padding: 0 1; }
    ConversationView .error { color: $error; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.current: RunState | None = None
        self.calls: dict[str, ToolCallInfo] = {}
        self.panels: dict[str, ToolPanel] = {}
        self.last_report: RunFinished | None = None
        self._answer: Static | None = None
        self._streamed: list[str] = []

    def apply(self, event: RunEvent) -> None:
        """Draw one event (in seq order) and scroll to it."""
        RENDERERS[event.type](self, event)
        self.scroll_end(animate=False)

    def _add(self, widget: Any) -> None:
        self.mount(widget)

    def _line(self, text: Text, classes: str) -> None:
        self._add(Static(text, classes=classes))

    def _run(self, event: RunEvent) -> RunState:
        if self.current is None or self.current.run_id != event.run_id:
            self.current = RunState(event.run_id, event.session_id)
            self._answer, self._streamed = None, []
        return self.current

    # -- one method per event type --------------------------------------------------------

    def draw_run_started(self, event: RunStarted) -> None:
        run = self._run(event)
        run.mode = event.mode
        what = f"model {event.model}" if event.path == "model" else "runbooks " + ", ".join(event.runbooks)
        self._line(literal(f"› {event.prompt}"), "question")
        self._line(literal(f"run {event.run_id[:8]} · {event.mode} mode · {what}"), "meta")

    def draw_token(self, event: Token) -> None:
        self._run(event)
        self._streamed.append(event.text)
        if self._answer is None:
            self._answer = Static(classes="answer")
            self._add(self._answer)
        self._answer.update(literal("".join(self._streamed)))

    def draw_plan_proposed(self, event: PlanProposed) -> None:
        run = self._run(event)
        run.plan, run.done = list(event.steps), 0
        steps = Text("plan:\n", style="bold")
        for i, step in enumerate(event.steps, 1):
            steps.append_text(literal(f"  {i}. {step}\n"))
        self._line(steps, "plan")

    def draw_tool_call(self, event: ToolCall) -> None:
        self._run(event)
        self.calls[event.tool_call_id] = ToolCallInfo(
            event.tool_call_id, event.tool, event.args, event.run_id
        )
        panel = ToolPanel(event)
        self.panels[event.tool_call_id] = panel
        self._add(panel)
        self._answer = None  # text after a tool call is a new paragraph of the answer
        self._streamed = []

    def draw_tool_result(self, event: ToolResultEvent) -> None:
        run = self._run(event)
        run.done += 1
        info = self.calls.get(event.tool_call_id)
        if info is not None:
            info.status = event.status
        panel = self.panels.get(event.tool_call_id)
        if panel is None:  # a result whose call came before this view (history cut): draw both
            self.draw_tool_call(
                ToolCall(
                    session_id=event.session_id,
                    run_id=event.run_id,
                    seq=event.seq,
                    tool_call_id=event.tool_call_id,
                    tool=event.tool,
                )
            )
            panel = self.panels[event.tool_call_id]
        panel.finish(event)

    def draw_approval_requested(self, event: ApprovalRequested) -> None:
        self._run(event)
        panel = self.panels.get(event.tool_call_id)
        if panel is not None and not panel.done:
            panel.note("⏸", "waiting for approval")
        level = event.classification or event.decision
        text = Text(f"approval needed ({level})\n", style="bold yellow")
        what = event.command or f"{event.tool}({args_line(event.args)})"
        text.append_text(literal(f"{what}\n"))
        if event.reason:
            text.append_text(literal(f"why: {event.reason}\n"))
        if event.decision == "approve_detailed":
            text.append("destructive: approving it takes CONFIRM\n", style="red")
        self._line(text, "approval")

    def draw_approval_resolved(self, event: ApprovalResolved) -> None:
        self._run(event)
        if event.approved:
            text = literal(f"✓ {event.tool_call_id} approved by {event.approver}", "green")
        else:
            why = f": {event.reason}" if event.reason else ""
            text = literal(f"✗ {event.tool_call_id} denied by {event.approver}{why}", "yellow")
        self._line(text, "meta")

    def draw_error(self, event: ErrorEvent) -> None:
        self._run(event)
        hint = f" ({event.hint})" if event.hint else ""
        self._line(literal(f"error: {event.message}{hint}"), "error")

    def draw_run_finished(self, event: RunFinished) -> None:
        run = self._run(event)
        run.finished = event
        if event.status != "paused":  # a paused run's calls wait; any other end leaves them unrun
            for call_id, panel in self.panels.items():
                if not panel.done and self.calls[call_id].run_id == event.run_id:
                    panel.note("✗", f"not run: the run ended {event.status}")
        if event.output:
            # The answer as the run finished it, rendered: it can differ from the streamed tokens
            # (the privacy guard restores placeholders only here; unreachable MCP servers add a
            # "Not checked" section), and runbooks stream none.
            if self._answer is not None:
                self._answer.remove()
                self._answer = None
            self._add(Markdown(visible(event.output), classes="answer"))
        if event.report is not None or event.output:
            self.last_report = event
        used = ""
        if event.usage and event.usage.get("requests"):
            used = f" · {event.usage['requests']} model requests, {event.usage.get('total_tokens', 0)} tokens"
        after = {
            "paused": " — waiting for approval",
            "cancelled": " — stopped",
            "interrupted": " — the service stopped; resumable",
        }.get(event.status, "")
        report = " · ctrl+r shows the report" if event.report is not None else ""
        style = FINISH_STYLE.get(event.status, "red")
        self._line(literal(f"{event.status}{after}{used}{report}", style), "meta")


RENDERERS: dict[str, Callable[[ConversationView, Any], None]] = {
    "run_started": ConversationView.draw_run_started,
    "token": ConversationView.draw_token,
    "plan_proposed": ConversationView.draw_plan_proposed,
    "tool_call": ConversationView.draw_tool_call,
    "tool_result": ConversationView.draw_tool_result,
    "approval_requested": ConversationView.draw_approval_requested,
    "approval_resolved": ConversationView.draw_approval_resolved,
    "error": ConversationView.draw_error,
    "run_finished": ConversationView.draw_run_finished,
}
"""How each event type is drawn; a test keeps it equal to the types of ``RunEvent``."""
