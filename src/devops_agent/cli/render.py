"""Rendering of run events for people: progress on stderr, the answer or report on stdout."""

from __future__ import annotations

from typing import Any

from rich.markdown import Markdown
from rich.markup import escape
from rich.status import Status

from devops_agent.cli.context import err, out
from devops_agent.events import (
    ErrorEvent,
    PlanProposed,
    RunEvent,
    RunFinished,
    RunStarted,
    Token,
    ToolCall,
    ToolResultEvent,
)

_STATUS_MARK = {"success": "[green]✓[/]", "no_data": "[yellow]∅[/]", "error": "[red]✗[/]"}


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
        self._status: Status | None = None

    def __enter__(self) -> ProgressRenderer:
        if not self.quiet:
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
        if isinstance(event, RunStarted):
            self.session_id = event.session_id
            what = (
                f"model {event.model}" if event.path == "model" else "runbooks " + ", ".join(event.runbooks)
            )
            self._say(f"[dim]session {event.session_id[:12]} · {event.mode} mode · {escape(what)}[/]")
        elif isinstance(event, PlanProposed):
            self.steps_total = len(event.steps)
        elif isinstance(event, ToolCall):
            if self._status is not None:
                progress = f" [{self.steps_done}/{self.steps_total}]" if self.steps_total else ""
                self._status.update(f"running {event.tool}{progress}…")
        elif isinstance(event, ToolResultEvent):
            self.steps_done += 1
            mark = _STATUS_MARK.get(event.status, event.status)
            ms = f" {event.duration_ms:.0f} ms" if event.duration_ms is not None else ""
            note = f" — {event.error}" if event.error else (" (truncated)" if event.truncated else "")
            self._say(f"  {mark} {escape(event.tool)}{ms}{escape(note)}")  # an error may quote "[/path]"
        elif isinstance(event, Token):
            self.streamed.append(event.text)
            if self.stream_tokens:
                if self._status is not None:
                    self._status.__exit__(None, None, None)
                    self._status = None
                out.print(event.text, end="", highlight=False, markup=False)
            elif self._status is not None:
                self._status.update("writing the answer…")
        elif isinstance(event, ErrorEvent):
            hint = f" ({event.hint})" if event.hint else ""
            err.print(f"[red]error:[/] {escape(event.message + hint)}", highlight=False)


def print_final(final: RunFinished, renderer: ProgressRenderer) -> None:
    """Print the answer unless it was already streamed token by token."""
    if renderer.stream_tokens and renderer.streamed:
        out.print()
        return
    if final.output:
        print_markdown(final.output)


def print_markdown(text: str) -> None:
    """Rendered on a terminal; raw Markdown when stdout is a file or a pipe (reports get saved)."""
    if out.is_terminal:
        out.print(Markdown(text))
    else:
        out.file.write(text if text.endswith("\n") else text + "\n")
