"""The report of a finished run: verdict and summary, the findings to step through (severity,
detail, evidence quoted from tool output, where it came from, next steps), the incident timeline,
what each check read, and what could not be gathered (gaps). A model run's answer has no
structured report: its text is shown instead.

The report is the run's own (``run_finished.report``, a :class:`~devops_agent.report.Report`);
nothing here judges it. Evidence and details are drawn as literal text.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from devops_agent.events import RunFinished
from devops_agent.report import VERDICT_WORDS, Finding, Report
from devops_agent.textsafe import visible
from devops_agent.tui.evidence import literal, timeline_text

SEVERITY_STYLE = {
    "critical": "bold white on red",
    "high": "bold red",
    "medium": "yellow",
    "low": "cyan",
    "info": "dim",
}


def finding_text(f: Finding) -> Text:
    """One finding in full, as the detail pane shows it."""
    text = Text()
    text.append(f" {f.severity.upper()} ", style=SEVERITY_STYLE.get(f.severity, ""))
    text.append_text(literal(f" {f.title}\n\n", "bold"))
    if f.detail:
        text.append_text(literal(f.detail + "\n\n"))
    if f.evidence:
        text.append("evidence\n", style="bold")
        for line in f.evidence:
            text.append_text(literal(f"  │ {line}\n", "italic"))
        text.append("\n")
    if f.source:
        text.append_text(literal(f"source: {f.source}\n", "dim"))
    if f.next_steps:
        text.append("\nnext steps\n", style="bold")
        for step in f.next_steps:
            text.append_text(literal(f"  • {step}\n"))
    return text


def checks_text(report: Report) -> Text:
    """What the report rests on: each check's reads, then the gaps."""
    text = Text()
    if report.checks:
        text.append("checked\n", style="bold")
        for c in report.checks:
            detail = f" — {c.detail}" if c.detail else ""
            text.append_text(literal(f"  {c.step} ({c.tool}): read {c.read} {c.unit}{detail}\n"))
    if report.gaps:
        text.append("not checked (gaps)\n", style="bold yellow")
        for g in report.gaps:
            hint = f" — {g.hint}" if g.hint else ""
            text.append_text(literal(f"  {g.step} ({g.tool}): {g.reason}{hint}\n", "yellow"))
    if report.next_steps:
        text.append("next steps\n", style="bold")
        for step in report.next_steps:
            text.append_text(literal(f"  • {step}\n"))
    return text


class ReportScreen(Screen[None]):
    """A finished run's report with its findings to navigate (↑/↓, n/p); Escape goes back."""

    DEFAULT_CSS = """
    ReportScreen #head { padding: 0 1; height: auto; }
    ReportScreen Horizontal { height: 1fr; }
    ReportScreen #findings { width: 40%; min-width: 30; }
    ReportScreen #detail { width: 1fr; padding: 0 1; }
    ReportScreen #checks { height: auto; max-height: 12; padding: 0 1; border-top: solid $primary; }
    ReportScreen #timeline { height: auto; max-height: 12; padding: 0 1; border-top: solid $primary; }
    """
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("n", "move(1)", "Next finding"),
        Binding("p", "move(-1)", "Previous finding"),
    ]

    def __init__(self, final: RunFinished) -> None:
        super().__init__()
        self.final = final
        self.report = Report.model_validate(final.report) if final.report is not None else None

    def compose(self) -> ComposeResult:
        yield Header()
        if self.report is None:  # a model run's answer: its text is the report
            with VerticalScroll(id="detail"):
                yield Markdown(visible(self.final.output or "(no answer)"))
            yield Footer()
            return
        r = self.report
        head = Text()
        head.append_text(literal(r.title + "\n", "bold"))
        head.append(f"verdict: {VERDICT_WORDS.get(r.verdict, r.verdict)}\n", style=_verdict_style(r.verdict))
        if r.window:
            head.append_text(literal(f"window: {r.window}\n", "dim"))
        if r.summary:
            head.append_text(literal(r.summary))
        yield Static(head, id="head")
        with Horizontal():
            options = [
                Option(
                    Text.assemble((f"{f.severity:<8}", SEVERITY_STYLE.get(f.severity, "")), literal(f.title))
                )
                for f in r.findings
            ]
            yield OptionList(*options, id="findings")
            with VerticalScroll(id="detail"):
                yield Static(Text("no findings" if not r.findings else ""), id="finding")
        if r.timeline:
            with VerticalScroll(id="timeline"):
                yield Static(Text("timeline\n", style="bold") + timeline_text(r.timeline))
        yield Static(checks_text(r), id="checks")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Report"
        self.sub_title = f"run {self.final.run_id[:8]} · {self.final.status}"
        if self.report is not None and self.report.findings:
            found = self.query_one("#findings", OptionList)
            found.highlighted = 0
            found.focus()
            self._show(0)

    @on(OptionList.OptionHighlighted, "#findings")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show(event.option_index)

    def _show(self, index: int) -> None:
        assert self.report is not None
        self.query_one("#finding", Static).update(finding_text(self.report.findings[index]))

    def action_move(self, step: int) -> None:
        if self.report is None or not self.report.findings:
            return
        found = self.query_one("#findings", OptionList)
        current = found.highlighted or 0
        found.highlighted = max(0, min(len(self.report.findings) - 1, current + step))

    @property
    def shown(self) -> Any:
        """The finding the detail pane shows (tests read it)."""
        if self.report is None or not self.report.findings:
            return None
        return self.report.findings[self.query_one("#findings", OptionList).highlighted or 0]


def _verdict_style(verdict: str) -> str:
    return {"problems_found": "bold red", "all_clear": "bold green"}.get(verdict, "bold yellow")
