"""The TUI's two main screens: the sessions list and the chat of one session.

The chat screen asks questions, follows the run's events into the conversation, opens the
approval dialog when a run pauses (and answers through the client), switches the session's mode,
stops the run on Ctrl-C, shows the plan and the report, and saves a tool call's full output. Each
of those is one call of :class:`~devops_agent.tui.client.AgentClient`; nothing is decided here that
the CLI or the API would decide differently.

This module must not import the session service or the API: it sees the agent only through the
client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static

from devops_agent.errors import DevOpsAgentError
from devops_agent.events import RunFinished
from devops_agent.textsafe import visible
from devops_agent.tui.client import PendingPlan, SessionSummary
from devops_agent.tui.conversation import ConversationView
from devops_agent.tui.dialogs import (
    ApprovalDialog,
    PlanDecisionDialog,
    PlanDialog,
    SaveChoice,
    SaveOutputDialog,
)
from devops_agent.tui.evidence import literal
from devops_agent.tui.report_view import ReportScreen

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from devops_agent.tui.app import AgentTui


def tell(
    screen: Screen[Any], message: str, *, severity: SeverityLevel = "information", title: str = ""
) -> None:
    """A notification whose text (often a server's or a tool's) is shown literally."""
    screen.notify(visible(message), severity=severity, title=title, markup=False)


class SessionsScreen(Screen[None]):
    """The most recent sessions; Enter opens one, ``n`` starts a new one, ``/`` filters them."""

    BINDINGS = [
        Binding("n", "new", "New session"),
        Binding("r", "refresh", "Refresh"),
        Binding("slash", "filter", "Filter"),
        Binding("q", "app.quit", "Quit"),
    ]
    AUTO_FOCUS = "#sessions"
    DEFAULT_CSS = """
    SessionsScreen DataTable { height: 1fr; }
    SessionsScreen #filter { display: none; }
    SessionsScreen #filter.shown { display: block; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.loaded: list[SessionSummary] = []

    @property
    def tui(self) -> AgentTui:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="who")
        yield Input(placeholder="filter: words of the title, id, status or mode (Escape clears)", id="filter")
        table: DataTable[Any] = DataTable(id="sessions", cursor_type="row", zebra_stripes=True)
        table.add_columns("session", "status", "mode", "approvals", "updated", "title")
        yield table
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Sessions"
        ident = self.tui.identity
        if ident is not None:
            model = ident.model or "none (runbooks)"
            self.query_one("#who", Static).update(
                literal(f"{ident.where} · {ident.user} ({ident.role}) · model {model}")
            )
        self.action_refresh()

    def on_screen_resume(self) -> None:
        self.action_refresh()

    @work(exclusive=True, group="sessions")
    async def action_refresh(self) -> None:
        try:
            self.loaded = await self.tui.client.sessions()
        except DevOpsAgentError as exc:
            tell(self, exc.one_line(), severity="error", title="sessions")
            return
        self._fill()

    def _fill(self) -> None:
        words = self.query_one("#filter", Input).value.lower().split()
        table = self.query_one("#sessions", DataTable)
        table.clear()
        for s in self.loaded:
            haystack = f"{s.id} {s.title} {s.status} {s.mode}".lower()
            if not all(w in haystack for w in words):
                continue
            table.add_row(
                s.id[:12],
                s.status,
                s.mode,
                str(s.pending_approvals or ""),
                s.updated_at.strftime("%Y-%m-%d %H:%M"),
                literal(s.title[:80]),
                key=s.id,
            )

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("shown")
        box.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self) -> None:
        self._fill()

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.query_one("#sessions", DataTable).focus()

    def key_escape(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_focus or box.value:
            box.value = ""
            box.remove_class("shown")
            self.query_one("#sessions", DataTable).focus()

    def action_new(self) -> None:
        self.app.push_screen(ChatScreen(None))

    @on(DataTable.RowSelected, "#sessions")
    def open_session(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.app.push_screen(ChatScreen(event.row_key.value))


class ChatScreen(Screen[None]):
    """One session's conversation, with the question box at the bottom."""

    BINDINGS = [
        Binding("escape", "back", "Sessions"),
        Binding("ctrl+t", "switch_mode", "Mode"),
        Binding("ctrl+r", "report", "Report"),
        Binding("ctrl+l", "plan", "Plan"),
        Binding("ctrl+o", "save_output", "Save output"),
    ]
    DEFAULT_CSS = """
    ChatScreen #status { height: 1; padding: 0 1; background: $boost; }
    ChatScreen Input { dock: bottom; margin-bottom: 1; }
    """

    def __init__(self, session_id: str | None) -> None:
        super().__init__()
        self.session_id = session_id
        self.mode = "ask"
        self.running: str | None = None
        self.view = ConversationView(id="conversation")

    @property
    def tui(self) -> AgentTui:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Header()
        yield self.view
        yield Static(id="status")
        yield Input(placeholder="Ask a question and press Enter", id="question")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "DevOps Agent"
        self.mode = self.tui.default_mode
        self.query_one("#question", Input).focus()
        self._status()
        if self.session_id is not None:
            self._open(self.session_id)

    def _status(self, note: str = "") -> None:
        ident = self.tui.identity
        who = f"{ident.user} ({ident.role}) · " if ident is not None else ""
        session = f"session {self.session_id[:12]}" if self.session_id else "new session"
        state = "running — ctrl+c stops it" if self.running else "idle"
        self.sub_title = f"{session} · {self.mode} mode"
        line = f"{who}{session} · {self.mode} mode · {state}{' · ' + note if note else ''}"
        self.query_one("#status", Static).update(literal(line))

    # -- opening a session and following runs ---------------------------------------------

    @work(exclusive=True, group="run")
    async def _open(self, session_id: str) -> None:
        client = self.tui.client
        try:
            summary = await client.session(session_id)
            self.session_id = summary.id
            self.mode = summary.mode
            history = await client.history(summary.id)
            for event in history:
                self.view.apply(event)
            runs = await client.runs(summary.id)
        except DevOpsAgentError as exc:
            tell(self, exc.one_line(), severity="error", title="open session")
            return
        self._status()
        if runs and runs[-1].status == "running":
            seen = [e.seq for e in history if e.run_id == runs[-1].id]
            await self._follow(runs[-1].id, max(seen, default=0))
        elif summary.status == "paused":
            answered = await self._decide()
            if answered is not None:
                await self._follow(answered)

    async def _follow(self, run_id: str, after_seq: int = 0) -> None:
        """Draw the run's events until it finishes; a pause opens the plan or the approval
        dialog, and the run the decision starts is followed the same way."""
        while True:
            self.running = run_id
            self._status()
            final: RunFinished | None = None
            try:
                async for event in self.tui.client.events(run_id, after_seq):
                    self.view.apply(event)
                    if isinstance(event, RunFinished):
                        final = event
            except DevOpsAgentError as exc:
                tell(self, exc.one_line(), severity="error", title="run")
            except Exception as exc:  # a bug: say so in one line and keep the TUI (the run goes on)
                tell(self, f"unexpected {type(exc).__name__}: {exc}", severity="error", title="run")
            finally:
                self.running = None
                self._status()
            if final is None or final.status != "paused":
                return
            answered = await self._decide()
            if answered is None:
                return
            run_id, after_seq = answered, 0

    async def _decide(self) -> str | None:
        """A paused session waits for a decision on its plan, or for approvals: ask for it; the
        run the decision started (``None``: left for later)."""
        assert self.session_id is not None
        try:
            plan = await self.tui.client.pending_plan(self.session_id)
        except DevOpsAgentError as exc:
            tell(self, exc.one_line(), severity="error", title="plan")
            return None
        if plan is not None:
            return await self._plan_decision(plan)
        return await self._approvals()

    async def _plan_decision(self, plan: PendingPlan | None = None) -> str | None:
        """Ask about the plan the session waits for (``plan``, when the caller has just read it)
        until it is decided or left for later; the run the decision started."""
        assert self.session_id is not None
        client = self.tui.client
        while True:
            if plan is None:
                try:
                    plan = await client.pending_plan(self.session_id)
                except DevOpsAgentError as exc:
                    tell(self, exc.one_line(), severity="error", title="plan")
                    return None
                if plan is None:
                    return None
            choice = await self.app.push_screen_wait(PlanDecisionDialog(plan))
            if choice is None:
                self._status("paused: the plan waits — ctrl+l decides it")
                return None
            try:
                ref = await client.decide_plan(self.session_id, choice.action, choice.text)
            except DevOpsAgentError as exc:  # refused (a viewer, nothing waits any more): say so
                tell(self, exc.one_line(), severity="error", title="plan decision refused")
                if exc.fields.get("status") == 403:
                    return None
                plan = None  # read it again: it may have been decided elsewhere
                continue
            return ref.run_id

    async def _approvals(self) -> str | None:
        """Ask about the session's pending calls until they are answered or left for later; the
        run the answers started."""
        assert self.session_id is not None
        client = self.tui.client
        while True:
            try:
                calls = await client.pending(self.session_id)
            except DevOpsAgentError as exc:
                tell(self, exc.one_line(), severity="error", title="approvals")
                return None
            if not calls:
                return None
            choice = await self.app.push_screen_wait(ApprovalDialog(calls))
            if choice is None:
                self._status("paused: reopen the session to answer")
                return None
            try:
                ref = await client.answer(
                    self.session_id, approve=choice.approve, reason=choice.reason, confirm=choice.confirm
                )
            except DevOpsAgentError as exc:  # refused (a role, a missing CONFIRM): ask again
                tell(self, exc.one_line(), severity="error", title="approval refused")
                continue
            return ref.run_id

    @on(Input.Submitted, "#question")
    def ask(self, event: Input.Submitted) -> None:
        question = event.value.strip()
        if not question:
            return
        if self.running:
            tell(self, "a run is going: wait for it, or stop it with ctrl+c", severity="warning")
            return
        event.input.value = ""
        self._ask(question)

    @work(exclusive=True, group="run")
    async def _ask(self, question: str) -> None:
        try:
            ref = await self.tui.client.ask(
                question, session_id=self.session_id, mode=self.mode, inputs=self.tui.inputs or None
            )
        except DevOpsAgentError as exc:
            tell(self, exc.one_line(), severity="error", title="not started")
            return
        self.session_id = ref.session_id
        await self._follow(ref.run_id)

    # -- actions --------------------------------------------------------------------------

    async def cancel_run(self) -> None:
        """Ctrl-C: stop the run in flight (it ends as ``cancelled``, its work kept)."""
        if self.running is None:
            tell(self, "no run is going (ctrl+q quits)")
            return
        try:
            ok = await self.tui.client.cancel(self.running)
        except DevOpsAgentError as exc:
            tell(self, exc.one_line(), severity="error", title="cancel")
            return
        tell(self, "stopping the run…" if ok else "the run had already finished")

    def action_back(self) -> None:
        self.app.pop_screen()

    @work(group="mode")
    async def action_switch_mode(self) -> None:
        new = "agent" if self.mode == "ask" else "ask"
        ident = self.tui.identity
        if new == "agent" and ident is not None and not ident.may_use_agent_mode:
            tell(self, "a viewer may run in ask mode only", severity="error", title="mode")
            return
        if self.session_id is not None:
            try:
                await self.tui.client.set_mode(self.session_id, new)
            except DevOpsAgentError as exc:
                tell(self, exc.one_line(), severity="error", title="mode")
                return
        self.mode = new
        self._status()
        what = "tools that change things ask for approval" if new == "agent" else "read-only tools only"
        tell(self, f"{new} mode: {what}")

    def action_report(self) -> None:
        final = self.view.last_report
        if final is None:
            tell(self, "no report yet: a finished run's report shows here", severity="warning")
            return
        self.app.push_screen(ReportScreen(final))

    def action_plan(self) -> None:
        plan = self.view.plan
        if plan is not None and plan.awaiting and self.running is None and self.session_id is not None:
            self._decide_plan_later()
            return
        run = self.view.current
        if run is None or not run.plan:
            tell(self, "this run proposed no plan", severity="warning")
            return
        running = self.running == run.run_id

        def stop(chosen: bool | None) -> None:
            if chosen:
                self.run_worker(self.cancel_run(), group="cancel")

        self.app.push_screen(PlanDialog(run.plan, run.done, running), stop)

    @work(exclusive=True, group="run")
    async def _decide_plan_later(self) -> None:
        """Ctrl-L on a plan left waiting: decide it now, and follow the run that continues."""
        answered = await self._plan_decision()
        if answered is not None:
            await self._follow(answered)

    @work(group="save")
    async def action_save_output(self) -> None:
        if self.session_id is None:
            tell(self, "no tool call in this session yet", severity="warning")
            return
        try:
            kept = await self.tui.client.kept_outputs(self.session_id)
        except DevOpsAgentError as exc:
            tell(self, exc.one_line(), severity="error", title="save output")
            return
        if not kept:
            tell(
                self,
                "no output of this session was kept apart: a full output is kept when it was cut for "
                "the model (over tools.output_cap_chars), as the API's /outputs lists",
                severity="warning",
                title="save output",
            )
            return
        choice = await self.app.push_screen_wait(SaveOutputDialog(kept, self.view.calls, self.tui.save_dir))
        if choice is not None:
            await self._save(choice)

    async def _save(self, choice: SaveChoice) -> None:
        assert self.session_id is not None
        try:
            text = await self.tui.client.tool_output(self.session_id, choice.tool_call_id)
        except DevOpsAgentError as exc:
            tell(self, exc.one_line(), severity="error", title="save output")
            return
        if text is None:
            tell(
                self,
                f"no full output was kept for {choice.tool_call_id} (tools.keep_full_output_chars is 0, "
                "or the call did not run)",
                severity="error",
                title="save output",
            )
            return
        try:
            with choice.path.open("x", encoding="utf-8") as fh:  # never overwrite a file silently
                fh.write(text)
        except FileExistsError:
            tell(self, f"{choice.path} exists; choose another name", severity="error", title="save output")
            return
        except OSError as exc:
            tell(self, f"cannot write {choice.path}: {exc.strerror}", severity="error", title="save output")
            return
        tell(self, f"saved {len(text)} characters to {choice.path}", title="save output")
