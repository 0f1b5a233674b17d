"""Rendering of run events for people: progress on stderr, the answer or report on stdout."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.status import Status
from rich.table import Column, Table

from devops_agent.cli.context import err, out
from devops_agent.textsafe import printable, visible

if TYPE_CHECKING:  # pydantic and the Markdown parser load when a run is rendered, not for --help
    from devops_agent.events import ErrorEvent, RunEvent, RunFinished

_STATUS_MARK = {"success": "[green]✓[/]", "no_data": "[yellow]∅[/]", "error": "[red]✗[/]"}
_ARGS_CHARS = 100  # of a tool call's argument summary on its progress line


def args_summary(args: Mapping[str, Any], limit: int = _ARGS_CHARS) -> str:
    """A tool call's arguments as one short line: ``path='/var/log/syslog', limit=50``."""
    parts = []
    for key, value in args.items():
        shown = repr(value) if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
        parts.append(f"{key}={shown}")
    text = printable(", ".join(parts))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_usage(usage: Mapping[str, Any] | None) -> str:
    """A run's model usage for people: ``2 model requests · 1,234 tokens in, 56 out · 3 tool calls ·
    $0.0031`` with the cost per model when several worked (no cost when the price data does not
    know the model: a remote one's is not guessed), and how often the context was compacted."""
    if not usage or not usage.get("requests"):
        return ""
    n = usage["requests"]
    text = (
        f"{n} model request{'s' if n != 1 else ''} · {usage.get('input_tokens', 0):,} tokens in, "
        f"{usage.get('output_tokens', 0):,} out"
    )
    calls = usage.get("tool_calls")
    if calls:
        text += f" · {calls} tool call{'s' if calls != 1 else ''}"
    cost = usage.get("cost_usd")
    if cost is not None:
        text += f" · ${cost:.4f}"
        split = [
            f"{printable(name)} ${sub['cost_usd']:.4f}"
            for name, sub in (usage.get("by_model") or {}).items()
            if sub and sub.get("cost_usd") is not None
        ]
        if len(split) > 1:
            text += f" ({', '.join(split)})"
    compacted = (usage.get("context") or {}).get("compacted_requests")
    if compacted:
        text += f" · context compacted for {compacted} request{'s' if compacted != 1 else ''}"
    return text


def _watched(stream: Any) -> bool:
    """Whether a spinner on ``stream`` has someone watching: a real terminal. Rich's own test
    (``is_terminal``) is also true under FORCE_COLOR, set by CI systems that keep colours in their
    logs, where every spinner frame would be written out as a line of noise."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


class ProgressRenderer:
    """Shows what a run is doing while it runs; collects streamed text.

    With ``stream_tokens`` the model's text goes to stdout as it comes; without it (the privacy
    guard is on, so the tokens hold placeholders) the status line says the answer is being written
    and :func:`print_final` prints the answer the run finished with.
    """

    def __init__(self, *, stream_tokens: bool, quiet: bool = False) -> None:
        self.stream_tokens = stream_tokens
        self.quiet = quiet
        self.streamed: list[str] = []
        self.steps_total = 0
        self.steps_done = 0
        self.session_id: str | None = None
        """The run's session, once its ``RunStarted`` event has come."""
        self.errors: list[ErrorEvent] = []
        """The run's error events (what ``--json`` reports when it failed)."""
        self._calls: dict[str, str] = {}  # argument summaries by tool call id
        self._status: Status | None = None

    def __enter__(self) -> ProgressRenderer:
        if not self.quiet and _watched(err.file):
            self._status = err.status("starting…")
            self._status.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._status is not None:
            self._status.__exit__(*exc)
            self._status = None

    def _say(self, text: str) -> None:
        if not self.quiet:
            err.print(text, highlight=False)

    def handle(self, event: RunEvent) -> None:
        from devops_agent.events import (
            ContextCompacted,
            ErrorEvent,
            LimitReached,
            PlanProposed,
            RunStarted,
            Token,
            ToolCall,
            ToolResultEvent,
        )

        if isinstance(event, PlanProposed):  # the progress count, whichever line shows the plan
            self.steps_total = len(event.steps)
        if self._reasoning(event):
            return

        if isinstance(event, RunStarted):
            self.session_id = event.session_id
            what = (
                f"model {event.model}" if event.path == "model" else "runbooks " + ", ".join(event.runbooks)
            )
            self._say(f"[dim]session {event.session_id[:12]} · {event.mode} mode · {escape(what)}[/]")
        elif isinstance(event, ToolCall):
            summary = args_summary(event.args)
            self._calls[event.tool_call_id] = summary
            if self._status is not None:
                progress = f" [{self.steps_done}/{self.steps_total}]" if self.steps_total else ""
                self._status.update(escape(f"running {printable(event.tool)}({summary}){progress}…"))
        elif isinstance(event, ToolResultEvent):
            self.steps_done += 1
            mark = _STATUS_MARK.get(event.status, event.status)
            ms = f" {event.duration_ms:.0f} ms" if event.duration_ms is not None else ""
            note = f" — {event.error}" if event.error else (" (truncated)" if event.truncated else "")
            call = printable(event.tool)
            if event.agent:  # a specialist's call
                call = f"[{printable(event.agent)}] {call}"
            if event.tool_call_id in self._calls:
                call += f"({self._calls.pop(event.tool_call_id)})"
            # tool names, arguments and errors come from outside: literal ("[/path]"), on one line
            self._say(f"  {mark} {escape(call)}{ms}{escape(printable(note))}")
        elif isinstance(event, Token):
            self.streamed.append(event.text)
            if self.stream_tokens:
                if self._status is not None:
                    self._status.__exit__(None, None, None)
                    self._status = None
                out.print(event.text, end="", highlight=False, markup=False)
            elif self._status is not None:
                self._status.update("writing the answer…")
        elif isinstance(event, ContextCompacted):
            folded = f", {len(event.folded)} older calls folded into a summary" if event.folded else ""
            self._say(
                f"[dim]  context: {len(event.replaced)} older results summarized{folded} "
                f"({event.tokens_before:,} → {event.tokens_after:,} tokens of a {event.window:,} window)[/]"
            )
        elif isinstance(event, LimitReached):
            self._say(f"[yellow]limit reached: the {event.scope} {event.limit.replace('_', ' ')} limit[/]")
        elif isinstance(event, ErrorEvent):
            self.errors.append(event)
            hint = f" ({event.hint})" if event.hint else ""
            err.print(f"[red]error:[/] {escape(printable(event.message + hint))}", highlight=False)

    def _reasoning(self, event: RunEvent) -> bool:
        """The planner's events (plans, steps, delegations, the critic), one line each; whether
        ``event`` was one. Their text comes from a model: printed literally, on one line."""
        from devops_agent.events import (
            CouncilResult,
            CriticReview,
            Delegation,
            PlanDeviation,
            PlanProposed,
            PlanResolved,
            PlanStepEvent,
            Replan,
        )

        line: str | None = None
        if isinstance(event, PlanProposed) and event.plan is not None:
            state = "waiting for a decision" if event.awaiting_decision else "running it"
            line = f"plan (revision {event.revision}, {state}): " + "; ".join(
                f"{i}. {s}" for i, s in enumerate(event.steps, 1)
            )
        elif isinstance(event, PlanResolved):
            why = f": {event.feedback}" if event.feedback else ""
            line = f"plan {event.decision} by {event.approver}{why}"
        elif isinstance(event, PlanStepEvent):
            if event.status == "pending":
                return True
            line = f"step {event.index + 1} {event.status}: {event.title}" + (
                f" ({event.note})" if event.note and event.status != "running" else ""
            )
        elif isinstance(event, PlanDeviation):
            line = f"deviation from the plan: {event.detail}"
        elif isinstance(event, Delegation):
            took = f" in {event.duration_ms / 1000:.1f} s" if event.duration_ms is not None else ""
            line = (
                f"→ {event.specialist}: {event.task}"
                if event.phase == "started"
                else f"← {event.specialist} {event.status or 'done'}{took}"
            )
        elif isinstance(event, CriticReview):
            found = f"{len(event.issues)} unsupported claim(s)" if event.issues else "no unsupported claim"
            missing = f", {len(event.missing_evidence)} missing evidence" if event.missing_evidence else ""
            line = f"critic ({event.stage}): {found}{missing} → {event.action}"
        elif isinstance(event, Replan):
            line = f"re-plan {event.number} of {event.budget}: {event.reason}"
        elif isinstance(event, CouncilResult):
            line = f"council of {', '.join(event.members)}: {len(event.disagreements)} disagreement(s)"
        if line is None:
            return False
        self._say(f"[dim]{escape(printable(line))}[/]")
        return True


def print_final(final: RunFinished, renderer: ProgressRenderer) -> None:
    """Print the answer unless it was already streamed token by token, then what the run used."""
    if renderer.stream_tokens and renderer.streamed:
        out.print()
    elif final.output:
        print_markdown(final.output)
    used = describe_usage(final.usage)
    if used and not renderer.quiet:
        err.print(f"[dim]{escape(used)}[/]", highlight=False)


def folding_table(*headers: str | Column, **kwargs: Any) -> Table:
    """A table none of whose cells is cut: a value wider than its column folds onto more lines
    (Rich's default ends it in "…", losing what a user copies: a command, an id, a variable)."""
    columns = [h if isinstance(h, Column) else Column(h) for h in headers]
    for column in columns:
        if column.overflow == "ellipsis":
            column.overflow = "fold"
    return Table(*columns, **kwargs)


def print_markdown(text: str) -> None:
    """Rendered on a terminal; raw Markdown when stdout is a file or a pipe (reports get saved).

    Either way control characters from the evidence are shown, not sent: a saved report is read
    on a terminal too (the console does it for the rendered form)."""
    if out.is_terminal:
        from devops_agent.cli.literal_markdown import LiteralMarkdown

        out.print(LiteralMarkdown(text), soft_wrap=False)  # soft wrap would cut code blocks
    else:
        shown = visible(text)
        out.printed = True
        out.file.write(shown if shown.endswith("\n") else shown + "\n")
