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
    ContextCompacted,
    CouncilResult,
    CriticReview,
    Delegation,
    ErrorEvent,
    LimitReached,
    NotificationSent,
    PlanDeviation,
    PlanProposed,
    PlanResolved,
    PlanStepEvent,
    Replan,
    RunEvent,
    RunFinished,
    RunResumed,
    RunStarted,
    Token,
    ToolCall,
    ToolResultEvent,
)
from devops_agent.textsafe import printable, visible
from devops_agent.tui.evidence import EvidenceView, literal

STATUS_MARK = {"success": "✓", "no_data": "∅", "error": "✗"}
STEP_MARK = {"pending": "·", "running": "…", "done": "✓", "skipped": "↷", "failed": "✗"}
DECISION_WORDS = {
    "approved": "plan approved",
    "edited": "changes asked to the plan",
    "rejected": "plan rejected",
}
CRITIC_WORDS = {"accepted": "accepted the answer", "applied": "changed the answer", "replan": "sent it back"}
DEVIATION_WORDS = {
    "unplanned_call": "a call no step names",
    "skipped_step": "a step skipped",
    "out_of_order": "a step out of order",
    "replan": "re-planned",
}
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


@dataclass
class PlanState:
    """The latest plan the session proposed: its steps' statuses (an approved plan runs in the
    run that continues the one that proposed it) and whether it waits for a decision."""

    proposal: PlanProposed
    titles: list[str]
    statuses: list[str]
    notes: list[str]
    widget: Static
    awaiting: bool = False
    tracked: bool = False
    """Whether its steps report progress (a model's plan does, with ``plan_step``; a runbook's
    list of steps does not, so it shows no status that would never change)."""

    def text(self) -> Text:
        """The plan as a numbered list, each step with its status."""
        p = self.proposal
        head = f"plan (revision {p.revision})" if p.revision > 1 else "plan"
        wait = " — waiting for your decision (ctrl+l)" if self.awaiting else ""
        out = Text(f"{head}{wait}\n", style="bold")
        goal = (p.plan or {}).get("goal")
        if goal:
            out.append_text(literal(f"  goal: {goal}\n"))
        if p.feedback:
            out.append_text(literal(f"  revised after: {p.feedback}\n"))
        steps = (p.plan or {}).get("steps") or []
        for i, title in enumerate(self.titles):
            step = steps[i] if i < len(steps) and isinstance(steps[i], dict) else {}
            status = self.statuses[i]
            extra = []
            if step.get("specialist"):
                extra.append(f"[{step['specialist']}]")
            if step.get("mutating"):
                extra.append("(changes things)")
            more = (" " + " ".join(extra)) if extra else ""
            note = f" — {self.notes[i]}" if self.notes[i] else ""
            if self.tracked:
                mark = STEP_MARK.get(status, "·")
                out.append_text(literal(f"  {mark} {i + 1}. {title}{more} [{status}]{note}\n"))
            else:
                out.append_text(literal(f"  {i + 1}. {title}{more}\n"))
        return out

    def refresh(self) -> None:
        self.widget.update(self.text())


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
        self.evidence_view = EvidenceView()  # empty until a result brings evidence
        super().__init__(
            self.args_view,
            self.result_view,
            self.evidence_view,
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
        if result.evidence is not None:
            self.evidence_view.show(result.evidence)


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
        self.plan: PlanState | None = None
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
        structured = (event.plan or {}).get("steps")
        titles = list(event.steps)
        if isinstance(structured, list) and structured:
            titles = [str(s.get("title", "")) if isinstance(s, dict) else str(s) for s in structured]
        widget = Static(classes="plan")
        self.plan = PlanState(
            event,
            titles,
            ["pending"] * len(titles),
            [""] * len(titles),
            widget,
            awaiting=event.awaiting_decision,
            tracked=event.plan is not None,
        )
        self.plan.refresh()
        self._add(widget)

    def draw_plan_resolved(self, event: PlanResolved) -> None:
        self._run(event)
        if self.plan is not None:
            self.plan.awaiting = False
            self.plan.refresh()
        rev = f" (revision {event.revision})" if event.revision else ""
        why = f": {event.feedback}" if event.feedback else ""
        style = "yellow" if event.decision == "rejected" else "green"
        self._line(literal(f"{DECISION_WORDS[event.decision]} by {event.approver}{rev}{why}", style), "meta")

    def draw_plan_step(self, event: PlanStepEvent) -> None:
        self._run(event)
        plan = self.plan
        if plan is not None and 0 <= event.index < len(plan.statuses):
            plan.statuses[event.index] = event.status
            plan.notes[event.index] = event.note
            plan.tracked = True
            plan.refresh()
            if self.current is not None:  # the plan dialog's progress
                self.current.plan = plan.titles
                self.current.done = sum(s in ("done", "skipped", "failed") for s in plan.statuses)
            return
        note = f" — {event.note}" if event.note else ""
        self._line(literal(f"step {event.index + 1} ({event.title}): {event.status}{note}"), "meta")

    def draw_plan_deviation(self, event: PlanDeviation) -> None:
        self._run(event)
        step = f" (step {event.step + 1})" if event.step is not None else ""
        words = DEVIATION_WORDS.get(event.kind, event.kind)
        self._line(literal(f"deviation from the plan: {words}{step}: {event.detail}", "yellow"), "meta")

    def draw_delegation(self, event: Delegation) -> None:
        self._run(event)
        if event.phase == "started":
            text = f"→ [{event.specialist}] asked: {event.task}"
        else:
            took = f" in {event.duration_ms:.0f} ms" if event.duration_ms is not None else ""
            tokens = (event.usage or {}).get("total_tokens")
            used = f", {tokens} tokens" if tokens else ""
            text = f"← [{event.specialist}] {event.status or 'finished'}{took}{used}: {event.task}"
        self._line(literal(text), "meta")

    def draw_critic_review(self, event: CriticReview) -> None:
        self._run(event)
        bad = event.action != "accepted"
        text = Text(
            f"critic ({event.stage}, round {event.round}): {CRITIC_WORDS[event.action]}\n",
            style="bold yellow" if bad else "bold green",
        )
        for issue in event.issues:
            check = f"[{issue.get('check')}] " if issue.get("check") else ""
            title = issue.get("title") or ""
            detail = issue.get("detail") or ""
            text.append_text(literal(f"  ✗ {check}{title}{': ' if title and detail else ''}{detail}\n"))
        for missing in event.missing_evidence:
            text.append_text(literal(f"  ? missing evidence: {missing}\n"))
        self._line(text, "plan")

    def draw_replan(self, event: Replan) -> None:
        self._run(event)
        self._line(literal(f"re-plan {event.number} of {event.budget}: {event.reason}", "yellow"), "meta")

    def draw_council(self, event: CouncilResult) -> None:
        self._run(event)
        text = Text("council: ", style="bold")
        text.append_text(literal(", ".join(event.members) + "\n"))
        if not event.disagreements:
            text.append("  the members agree\n")
        for d in event.disagreements:
            text.append_text(literal(f"  disagree on {d.get('topic', '?')}\n", "yellow"))
            positions = d.get("positions") or {}
            if isinstance(positions, dict):
                for who, said in positions.items():
                    text.append_text(literal(f"    [{who}] {said}\n"))
            if d.get("resolution"):
                text.append_text(literal(f"    resolution: {d['resolution']}\n"))
        self._line(text, "plan")

    def draw_context_compacted(self, event: ContextCompacted) -> None:
        self._run(event)
        parts = []
        if event.replaced:
            parts.append(f"{len(event.replaced)} results sent as summaries")
        if event.folded:
            parts.append(f"{len(event.folded)} older calls folded")
        if event.cut:
            parts.append(f"{len(event.cut)} results cut")
        what = f"; {', '.join(parts)}" if parts else ""
        self._line(
            literal(
                f"context fitted (request {event.request}): {event.tokens_before} → {event.tokens_after} "
                f"tokens of {event.limit}{what} (full results stay in the session)"
            ),
            "meta",
        )

    def draw_limit_reached(self, event: LimitReached) -> None:
        self._run(event)
        self._line(
            literal(
                f"usage limit reached: {event.limit} per {event.scope}, {event.used:g} of {event.ceiling:g}; "
                "the run ends with what it has",
                "red",
            ),
            "error",
        )

    def draw_run_resumed(self, event: RunResumed) -> None:
        self._run(event)
        self._line(
            literal(
                f"resumed by worker {event.worker} after event {event.after_seq}: {event.completed_steps} "
                "completed steps not done again (the step in flight runs again)",
                "yellow",
            ),
            "meta",
        )

    def draw_notification(self, event: NotificationSent) -> None:
        self._run(event)
        tries = f" after {event.attempts} attempts" if event.attempts > 1 else ""
        if event.ok:
            text = literal(f"sent {event.kind} to {event.sink}{tries}", "green")
        else:
            why = event.error or "failed"
            text = literal(f"could not send {event.kind} to {event.sink}{tries}: {why}", "red")
        self._line(text, "meta")

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
    "plan_resolved": ConversationView.draw_plan_resolved,
    "plan_step": ConversationView.draw_plan_step,
    "plan_deviation": ConversationView.draw_plan_deviation,
    "delegation": ConversationView.draw_delegation,
    "critic_review": ConversationView.draw_critic_review,
    "replan": ConversationView.draw_replan,
    "council": ConversationView.draw_council,
    "context_compacted": ConversationView.draw_context_compacted,
    "limit_reached": ConversationView.draw_limit_reached,
    "run_resumed": ConversationView.draw_run_resumed,
    "notification": ConversationView.draw_notification,
    "run_finished": ConversationView.draw_run_finished,
}
"""How each event type is drawn; a test keeps it equal to the types of ``RunEvent``."""
