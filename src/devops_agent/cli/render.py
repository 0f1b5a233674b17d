"""Rendering of run events for people: progress on stderr, the answer or report on stdout."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.status import Status
from rich.table import Column, Table

from devops_agent.cli.context import err, out
from devops_agent.textsafe import visible

if TYPE_CHECKING:  # pydantic and the Markdown parser load when a run is rendered, not for --help
    from devops_agent.events import RunEvent, RunFinished

_STATUS_MARK = {"success": "[green]✓[/]", "no_data": "[yellow]∅[/]", "error": "[red]✗[/]"}


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
        from devops_agent.events import ErrorEvent, PlanProposed, RunStarted, Token, ToolCall, ToolResultEvent

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
