"""The session service: the facade every interface (CLI, TUI, API) uses to run investigations.

Four calls carry a run, each a seam for what plugs in later:

* :meth:`SessionService.start` — open or continue a session, pick the runner (router), and launch
  the run on the supervisor's executor; returns at once with the run's handle;
* :meth:`SessionService.events` — follow any run by id from any ``seq``, in this process or
  another: what it already emitted, then each new event, exactly once, until ``run_finished``;
* :meth:`SessionService.answer` — answer a paused run's approvals (from any process); the run
  continues as a new run of the same session;
* :meth:`SessionService.cancel` — stop a run, from any process sharing the store.

The parts behind it: :mod:`~devops_agent.agent.supervisor` (executor, cancel flags, following
runs), :mod:`~devops_agent.agent.recorder` (seq, journal, live readers),
:mod:`~devops_agent.agent.broker` (approvals), :mod:`~devops_agent.agent.toolbox` (the tool
pipeline per run) and :mod:`~devops_agent.agent.runners` (model loop, runbooks, triage; chosen by
the router). This module only composes them and keeps the session's and the run's status.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import structlog
from pydantic_ai import ApprovalRequired
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.toolsets import AbstractToolset

from devops_agent.agent.approvals import PENDING_KEY, ApprovalDecision, check_answers
from devops_agent.agent.broker import ApprovalBroker
from devops_agent.agent.durability import Durability, Outcome, RunRequest
from devops_agent.agent.journal import Journal
from devops_agent.agent.messages import load_message
from devops_agent.agent.models import resolve_model
from devops_agent.agent.reasoning.plan import PENDING_PLAN_KEY, PlanDecision
from devops_agent.agent.recorder import EventRecorder
from devops_agent.agent.runners.base import Runner, RunScope
from devops_agent.agent.runners.model import ModelRunner
from devops_agent.agent.runners.planner import PlannerRunner
from devops_agent.agent.runners.router import Router
from devops_agent.agent.runners.triage import TriageCaches
from devops_agent.agent.supervisor import Executor, InProcessExecutor, RunHandle, RunSupervisor
from devops_agent.agent.timeline import with_timeline
from devops_agent.agent.toolbox import RunIds, Toolbox
from devops_agent.config import Settings
from devops_agent.deps import ToolDeps
from devops_agent.errors import DevOpsAgentError, RunFencedError, UserError
from devops_agent.events import ErrorEvent, RunEvent, RunFinished, RunStatus, event_from_json
from devops_agent.knowledge.memory import CURRENT_SESSION
from devops_agent.policies.guard import Verdict
from devops_agent.policies.modes import Mode
from devops_agent.policies.pipeline import ToolCaller, privacy_guard
from devops_agent.privacy.guard import enabled_for
from devops_agent.privacy.vault import purge_expired
from devops_agent.report import Gap, Report
from devops_agent.secrets.scrubber import scrub
from devops_agent.store import SessionRecord, Store
from devops_agent.store.run_usage import save_run_usage
from devops_agent.tools.base import ToolResult
from devops_agent.tools.mcp import pool_for
from devops_agent.tools.registry import ToolCatalog, ToolRegistry, build_catalog

if TYPE_CHECKING:
    from devops_agent.tools.mcp.pool import McpPool

log = structlog.get_logger(__name__)

AskApproval = Callable[[dict[str, Any]], Awaitable[ApprovalDecision]]
"""Asks a person about one call (``tool``, ``args`` and the gate's verdict: ``decision``,
``reason``, ``impact``…); a destructive one (``approve_detailed``) must be confirmed with CONFIRM."""


class SessionService:
    """Runs investigations for sessions kept in a :class:`Store`."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        registry: ToolRegistry | None = None,
        model: Model | None = None,
        use_configured_model: bool = True,
        extra_toolsets: Sequence[AbstractToolset[Any]] = (),
        privacy: bool | None = None,
        executor: Executor | None = None,
        mcp: McpPool | None = None,
    ) -> None:
        """``extra_toolsets`` (MCP servers, …) get the same pipeline as registered tools;
        ``privacy`` forces the privacy guard on or off (default: ``privacy.enabled`` in settings);
        ``mcp`` is the pool of configured MCP servers to share (default: a pool of this service's
        own when servers are configured; none starts before a run needs it or :meth:`preload_mcp`).
        Nothing is written anywhere until the first run starts."""
        self.settings = settings
        self.store = store
        self.privacy = enabled_for(settings) if privacy is None else privacy
        # Secrets are cut out of what runs read and what the session stores: always with the guard,
        # and without it unless privacy.scrub_secrets is off (a local model may then read them).
        self.scrub_secrets = self.privacy or settings.privacy.scrub_secrets
        self.catalog: ToolCatalog = build_catalog(settings, registry)
        pool = mcp if mcp is not None else pool_for(settings)
        self.toolbox = Toolbox(settings, store, self.catalog, list(extra_toolsets), self.scrub_secrets, pool)
        self.model = (
            model if model is not None else (resolve_model(settings.model) if use_configured_model else None)
        )
        self.supervisor = RunSupervisor(store, executor or InProcessExecutor())
        self.triage_caches = TriageCaches()
        self._housekeeping_done = False

    # -- sessions -------------------------------------------------------------------------

    @property
    def model_name(self) -> str | None:
        if self.model is None:
            return None
        return self.settings.model.name or self.model.model_name

    def open_session(
        self, session_id: str | None, *, title: str, mode: Mode | None = None, user_id: str | None = None
    ) -> SessionRecord:
        """The session ``session_id`` (its mode changed to ``mode`` if given), or a new one of
        ``user_id`` (a service user; None from the CLI)."""
        if session_id is not None:
            record = self.store.get_session(session_id)
            if mode is not None and mode != record.mode:
                record = self.store.update_session(record.id, mode=mode)
            return record
        return self.store.create_session(
            title=title[:120], mode=mode or self.settings.mode, model=self.model_name, user_id=user_id
        )

    def history(self, session_id: str) -> list[ModelMessage]:
        """The session's conversation as pydantic-ai messages."""
        return [load_message(p) for p in self.store.load_messages(session_id)]

    # -- runs -----------------------------------------------------------------------------

    async def start(
        self,
        prompt: str | None,
        *,
        session_id: str | None = None,
        mode: Mode | None = None,
        inputs: dict[str, Any] | None = None,
        approvals: Mapping[str, ApprovalDecision] | None = None,
        plan: PlanDecision | None = None,
        user_id: str | None = None,
        profiles: Sequence[str] = (),
    ) -> RunHandle:
        """Start a run and return its handle at once; follow it with :meth:`events`.

        With ``approvals`` (and no prompt) the run continues a paused session: every pending call
        is answered, approved ones run, denied ones return the denial to the model. With ``plan``
        it continues a session whose plan waits for a decision (:meth:`answer_plan`). ``user_id``
        (a service user) is recorded on the run, and on the session when one is created.
        ``profiles`` (a specialist's) add the MCP servers of those profiles to the global ones.
        """
        self._housekeeping()
        begun: tuple[Runner, RunRequest] | None = None
        if plan is not None:
            if session_id is None:
                raise UserError("deciding on a plan needs the session id")
            session = await asyncio.to_thread(self.store.get_session, session_id)  # as for approvals
            if not session.context_state.get(PENDING_PLAN_KEY):
                raise UserError(
                    f"session {session.id[:12]} has no plan waiting for a decision",
                    hint="`devops-agent sessions show ID --events` shows what it did",
                )
        elif approvals is not None:
            if session_id is None:
                raise UserError("answering approvals needs the session id")
            # Store calls go to a thread: a service runs many runs on one event loop, and a write
            # waiting for SQLite's lock must not hold every other client up.
            session = await asyncio.to_thread(self.store.get_session, session_id)
            _no_plan_waiting(session)
            check_answers(session.context_state.get(PENDING_KEY, {}), approvals)
        elif prompt is None:
            raise UserError("a run needs a prompt")
        else:
            if self.scrub_secrets:  # a token pasted into the question is stored nowhere (title, events)
                prompt = scrub(prompt).text
            question = prompt

            def open_and_begin() -> tuple[SessionRecord, tuple[Runner, RunRequest]]:
                # One trip to a thread for the session and the run: each trip waits for a thread
                # and for the interpreter lock, a few milliseconds before the first event when busy.
                opened = self.open_session(session_id, title=question, mode=mode, user_id=user_id)
                _no_plan_waiting(opened)
                waiting = opened.context_state.get(PENDING_KEY)
                if waiting:  # the paused run's calls are answered first; a new question would orphan them
                    short = opened.id[:12]
                    raise UserError(
                        f"session {short} waits for approval of {len(waiting)} call(s)",
                        hint=f"answer them first: `devops-agent approve {short}` (or --deny)",
                    )
                return opened, self._begin(opened, question, inputs, None, None, user_id, profiles)

            session, begun = await asyncio.to_thread(open_and_begin)
        if begun is None:
            begun = await asyncio.to_thread(
                self._begin, session, prompt, inputs, approvals, plan, user_id, profiles
            )
        runner, request = begun
        if self.supervisor.executor.remote:
            # A worker carries the run out; readers follow it through the store (events()).
            self.supervisor.executor.submit(request)
            return RunHandle(session.id, request.run_id, None)
        handle, body = self._prepare(request, session, runner, None, running=True)
        return self.supervisor.launch(handle, body)

    def _begin(
        self,
        session: SessionRecord,
        prompt: str | None,
        inputs: dict[str, Any] | None,
        approvals: Mapping[str, ApprovalDecision] | None,
        plan: PlanDecision | None,
        user_id: str | None,
        profiles: Sequence[str],
    ) -> tuple[Runner, RunRequest]:
        """Choose the runner and record the run (in a thread: it writes to the store). A run this
        process executes is marked running here, its session too, in the same trip."""
        answering = approvals is not None or plan is not None
        runner = self._router(session, answering).choose(prompt, inputs or {}, approvals, plan)
        run_id = uuid.uuid4().hex
        earlier = self.store.list_runs(session.id) if answering else []
        request = RunRequest(
            session_id=session.id,
            run_id=run_id,
            prompt=prompt,
            mode="agent" if session.mode == "agent" else "ask",
            inputs=dict(inputs or {}),
            approvals=dict(approvals) if approvals is not None else None,
            plan=plan,
            path=runner.name,
            parent_run_id=earlier[-1].id if earlier else None,
            profiles=list(profiles),
        )
        remote = self.supervisor.executor.remote
        asked = {"prompt": prompt, "mode": request.mode, "inputs": dict(inputs or {})}
        self.store.create_run(
            session.id,
            run_id,
            path=runner.name,
            parent_run_id=request.parent_run_id,
            user_id=user_id,
            request=None if prompt is None else asked,  # what resuming an interrupted run repeats
            status="queued" if remote else "running",
        )
        if not remote:
            self.store.update_session(session.id, status="running")
        return runner, request

    async def execute(self, request: RunRequest, durability: Durability | None = None) -> RunFinished | None:
        """Carry out a run another process queued (``execution = "queue"``), here and now.

        With ``durability`` the run may be one a dead worker had started: its stored events are
        resumed (``seq`` continues, events replayed from completed steps are not stored twice),
        and the messages it stored are replaced as it replays. Returns the run's ``run_finished``.
        """
        self._housekeeping()
        session = self.store.get_session(request.session_id)
        if durability is not None:
            # Claimed before its events are read: from now on a previous owner that still runs (it
            # stalled and was declared dead) can write nothing more to the run (the journal's fence).
            await asyncio.to_thread(self.store.claim_run, request.run_id, durability.worker)
        stored = await asyncio.to_thread(self.store.run_events, request.run_id)
        events = [event_from_json(r.payload) for r in stored] if durability is not None else []
        done = next((e for e in reversed(events) if isinstance(e, RunFinished)), None)
        if done is not None:
            # Its worker died after the run had finished and before the queue heard of it: nothing
            # is left to do but what that worker's last write would have done.
            await asyncio.to_thread(self.store.update_session, session.id, status=done.status)
            await asyncio.to_thread(self.store.update_run, request.run_id, status=done.status)
            return done
        if stored and durability is not None:
            await asyncio.to_thread(self.store.forget_run_messages, request.run_id)
        answering = request.approvals is not None or request.plan is not None
        runner = self._router(session, answering).choose(
            request.prompt, request.inputs, request.approvals, request.plan
        )
        handle, body = self._prepare(request, session, runner, durability)
        recorder = handle.recorder
        assert recorder is not None
        if events and durability is not None:
            recorder.resume(events, worker=durability.worker, completed_steps=durability.completed_steps)
        if self.store.cancel_requested([request.run_id]):  # cancelled while it waited in the queue
            body.close()
            recorder.journal.close()
            self.store.update_run(request.run_id, status="cancelled")
            return None
        self.supervisor.launch(handle, body)
        if handle.task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await handle.task
        return recorder.final

    def _prepare(
        self,
        request: RunRequest,
        session: SessionRecord,
        runner: Runner,
        durability: Durability | None,
        *,
        running: bool = False,
    ) -> tuple[RunHandle, Coroutine[Any, Any, None]]:
        """The handle and body of one run, ready to launch (``running``: its session is already
        marked running)."""
        profiles = tuple(request.profiles)
        owner = (request.run_id, durability.worker) if durability is not None else None
        run = RunIds(session.id, request.run_id, request.mode, Journal(self.store, owner=owner), profiles)
        recorder = EventRecorder(session.id, run.run_id, run.journal)
        scope = RunScope(
            settings=self.settings,
            store=self.store,
            session=session,
            run_id=run.run_id,
            mode=run.mode,
            prompt=request.prompt,
            inputs=dict(request.inputs),
            answers=request.approvals,
            journal=run.journal,
            toolbox=self.toolbox,
            broker=ApprovalBroker(self.store, recorder.emit, self.toolbox.audit_writer(run)),
            emit=recorder.emit,
            privacy=self.privacy,
            durability=durability,
            plan_decision=request.plan,
            profiles=profiles,
            history=lambda: recorder.history,
        )
        handle = RunHandle(session.id, run.run_id, recorder)
        # A shutdown or a cancel that lands before the body's first step: the run still ends.
        handle.never_started = lambda: self._finish(handle, scope, handle.stop_status, None, None)
        return handle, self._execute(handle, scope, runner, running=running)

    def events(self, run_id: str, after_seq: int = 0) -> AsyncIterator[RunEvent]:
        """Every event of ``run_id`` after ``after_seq``, then each new one, until ``run_finished``."""
        return self.supervisor.events(run_id, after_seq)

    async def answer(
        self, session_id: str, approvals: Mapping[str, ApprovalDecision], *, user_id: str | None = None
    ) -> RunHandle:
        """Answer a paused session's pending calls; the run continues as a new run."""
        return await self.start(None, session_id=session_id, approvals=approvals, user_id=user_id)

    async def answer_plan(self, session_id: str, decision: PlanDecision) -> RunHandle:
        """Decide on the plan a paused session waits for (from any process): approve it, ask for
        changes (the model proposes a revision, and the run pauses again), or reject it (nothing
        runs). The run continues as a new run of the session; returns its handle."""
        return await self.start(None, session_id=session_id, plan=decision)

    def cancel(self, run_id: str) -> bool:
        """Stop a run of any process sharing the store; ``False`` if it is not running."""
        return self.supervisor.cancel(run_id)

    async def stream(self, prompt: str | None, **kwargs: Any) -> AsyncIterator[RunEvent]:
        """Start a run and yield its events until ``run_finished``; stopping early cancels the run."""
        handle = await self.start(prompt, **kwargs)
        try:
            async for event in self.events(handle.run_id):
                yield event
        finally:
            task = handle.task
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def run(self, prompt: str | None, **kwargs: Any) -> tuple[list[RunEvent], RunFinished]:
        """Run to completion; return every event and the final one."""
        events = [e async for e in self.stream(prompt, **kwargs)]
        final = events[-1]
        assert isinstance(final, RunFinished)
        return events, final

    async def call_approved(
        self, session_id: str, tool: str, args: dict[str, Any], *, approver: str
    ) -> ToolResult:
        """Run one tool call a person approved outside a model run, in that session's record.

        This is how a finished triage posts its report back to the ticket: the user asked for it
        (``--post``) and approved the call at the prompt, so it is judged as in agent mode; a call
        policy rejects or halts still never runs. The call and its audit entry (naming
        ``approver``) are stored with the session.
        """
        session = self.store.get_session(session_id)
        journal = Journal(self.store)
        run = RunIds(session.id, uuid.uuid4().hex, "agent", journal)
        guard = privacy_guard(self.settings, self.store, session.id, model_reads=False, privacy=self.privacy)
        tools = self.toolbox.pipeline(
            run, approvals="preapproved", privacy=guard, approver=approver, audit_reads=False, mcp=False
        )
        try:
            deps = ToolDeps(self.settings, self.store, session.id, run.run_id)
            return await ToolCaller(tools, run_id=run.run_id, deps=deps)(tool, args)
        finally:
            journal.close()

    async def call_tool(
        self,
        session_id: str,
        tool: str,
        args: dict[str, Any],
        *,
        mode: Mode,
        ask: AskApproval | None = None,
        model_reads: bool = False,
        profiles: Sequence[str] = (),
        mcp: bool | Sequence[str] = True,
    ) -> ToolResult:
        """One tool call outside a model run, through the same pipeline as a run's: mode, gate,
        privacy guard, breaker, output cap, the session's record and audit.

        A call that needs a person's approval is put to ``ask`` (``devops-agent mcp call`` asks at
        the terminal, the MCP server asks the client's user); it runs in the approver's name when
        approved, is audited ``denied`` otherwise, and is refused without ``ask``. ``model_reads``:
        a model reads the result (an MCP client's), so identifiers are masked when the privacy guard
        is on; placeholders in ``args`` are restored for the tool either way.
        """
        session = self.store.get_session(session_id)
        journal = Journal(self.store)
        run = RunIds(session.id, uuid.uuid4().hex, mode, journal, tuple(profiles))
        guard = privacy_guard(
            self.settings, self.store, session.id, model_reads=model_reads, privacy=self.privacy
        )
        deps = ToolDeps(self.settings, self.store, session.id, run.run_id)
        try:
            tools = self.toolbox.pipeline(
                run, approvals="defer" if ask else "deny", privacy=guard, audit_reads=True, mcp=mcp
            )
            try:
                return await ToolCaller(tools, run_id=run.run_id, deps=deps)(tool, args)
            except ApprovalRequired as exc:
                assert ask is not None
                pending = {"tool": tool, "args": args, **(exc.metadata or {})}
                decision = await ask(pending)
            if not decision.approved:
                verdict = Verdict(pending.get("decision", "approve"), decision.reason or "denied")
                self.toolbox.audit_writer(run)(tool, "call-1", verdict, "denied", decision.approver, None)
                why = f": {decision.reason}" if decision.reason else ""
                return ToolResult.fail(
                    f"{decision.approver} denied this call{why}", "do not retry it; find another way"
                )
            tools = self.toolbox.pipeline(
                run, approvals="preapproved", privacy=guard, approver=decision.approver, mcp=mcp
            )
            return await ToolCaller(tools, run_id=run.run_id, deps=deps)(tool, args)
        finally:
            journal.close()

    async def preload_mcp(self) -> dict[str, Any]:
        """Start the configured MCP servers now, in parallel (``serve`` and ``chat`` do at start,
        when ``mcp.preload``); each server's status by name. A server that does not start is
        reported, not raised: runs go on without it."""
        pool = self.toolbox.mcp
        if pool is None:
            return {}
        return {name: status.to_dict() for name, status in (await pool.preload()).items()}

    # -- the run itself -------------------------------------------------------------------

    def _router(self, session: SessionRecord, answering: bool) -> Router:
        model, name = self.model, self.model_name
        if model is None and answering and session.model:
            # Answering a paused model run from a process with no model configured: the session
            # knows which model it paused in.
            model = resolve_model(self.settings.model.model_copy(update={"name": session.model}))
            name = session.model
        runner = ModelRunner(model, name) if model is not None else None
        planner = PlannerRunner(model, name) if model is not None else None
        return Router(self.settings, self.catalog, runner, self.triage_caches, planner)

    def _housekeeping(self) -> None:
        """Once per service, before its first run: purge expired vault entries."""
        if self._housekeeping_done:
            return
        self._housekeeping_done = True
        if self.privacy:
            try:
                purge_expired(self.store, self.settings.privacy.ttl_hours)
            except DevOpsAgentError as exc:
                # Housekeeping, not the run: the guard still masks, and restoring fails closed
                # (masked answer and a note) if the vault is unusable.
                log.warning("vault_purge_failed", error=exc.message)

    async def _execute(self, handle: RunHandle, scope: RunScope, runner: Runner, *, running: bool) -> None:
        handle.started = True
        CURRENT_SESSION.set(scope.session.id)  # a finding saved during the run names its session
        if not running:
            await asyncio.to_thread(self.store.update_session, scope.session.id, status="running")
        status: RunStatus = "failed"
        output: str | None = None
        report: dict[str, Any] | None = None
        try:
            outcome = await runner.run(scope)
            status, output, report = outcome.status, outcome.output, outcome.report
            gaps = self.toolbox.take_gaps(scope.run_id)
            if gaps and status == "completed":
                output, report = with_gaps(output, report, gaps)
        except asyncio.CancelledError:
            self.toolbox.take_gaps(scope.run_id)
            # A service shutting down stops its runs at a step boundary as "interrupted" (resumable).
            self._finish(handle, scope, handle.stop_status, None, None)
            raise
        except DevOpsAgentError as exc:
            scope.emit(
                ErrorEvent(**scope.ids, message=exc.message, hint=exc.hint, error_type=type(exc).__name__)
            )
        except Exception as exc:
            log.exception("run_failed", **scope.ids)
            scope.emit(
                ErrorEvent(**scope.ids, message=f"{type(exc).__name__}: {exc}", error_type=type(exc).__name__)
            )
        if scope.durability is not None:
            try:
                await scope.durability.finishing(Outcome(status, output, report), scope.emit)
            except Exception as exc:  # a notification must never change how the run ended
                log.exception("finishing_failed", **scope.ids)
                scope.emit(
                    ErrorEvent(**scope.ids, message=f"after the run: {exc}", error_type=type(exc).__name__)
                )
        # Shielded: a cancel arriving while the run is being saved must not leave it unfinished.
        finishing = asyncio.ensure_future(self._finish_async(handle, scope, status, output, report))
        _FINISHING.add(finishing)
        finishing.add_done_callback(_FINISHING.discard)
        await asyncio.shield(finishing)

    async def _finish_async(
        self,
        handle: RunHandle,
        scope: RunScope,
        status: RunStatus,
        output: str | None,
        report: dict[str, Any] | None,
    ) -> None:
        """:meth:`_finish` with the store's work in a thread (the event loop serves other runs)."""
        try:
            failure = await asyncio.to_thread(_flush, scope)
        except RunFencedError:
            _fenced(scope)
            return
        if failure is not None:
            scope.emit(failure)
        await asyncio.to_thread(self.store.update_session, scope.session.id, status=status)
        # From here without an await: a reader that got run_finished may end the loop at once
        # (the CLI does), and the event must be stored and the run's row final by then.
        self._announce(handle, scope, status, output, report)

    def _finish(
        self,
        handle: RunHandle,
        scope: RunScope,
        status: RunStatus,
        output: str | None,
        report: dict[str, Any] | None,
    ) -> None:
        """Commit what the run wrote, then tell everyone it finished; the run's row goes last, so a
        reader in another process that sees it finished finds its ``run_finished`` event stored.
        (The path of a cancelled run, which must not wait on anything; others use
        :meth:`_finish_async`.)"""
        try:
            failure = _flush(scope)
        except RunFencedError:
            _fenced(scope)
            return
        if failure is not None:
            scope.emit(failure)
        self.store.update_session(scope.session.id, status=status)
        self._announce(handle, scope, status, output, report)

    def _announce(
        self,
        handle: RunHandle,
        scope: RunScope,
        status: RunStatus,
        output: str | None,
        report: dict[str, Any] | None,
    ) -> None:
        """The end both finishing paths share: ``run_finished``, the journal closed, the usage
        and the run's final row."""
        if handle.recorder is not None:
            report = with_timeline(report, handle.recorder.history, scope.inputs)
        scope.emit(RunFinished(**scope.ids, status=status, output=output, report=report, usage=scope.usage))
        if not _close(scope):
            return  # taken over while it finished: its status is the new owner's to set
        _save_usage(self.store, handle.run_id, scope)
        self.store.update_run(handle.run_id, status=status)


_FINISHING: set[asyncio.Future[None]] = set()
"""Runs being saved (asyncio keeps only weak references to tasks)."""


def _flush(scope: RunScope) -> ErrorEvent | None:
    """Commit what the run wrote; the error event to emit when that failed."""
    try:
        scope.journal.flush()
    except RunFencedError:
        raise  # the caller leaves the run to the worker that took it over
    except Exception as exc:
        log.error("run_not_saved", **scope.ids, error=repr(exc))
        hint = "the run's events may be incomplete in the store; `devops-agent doctor` checks it"
        return ErrorEvent(
            **scope.ids, message=f"could not save the run: {exc}", hint=hint, error_type=type(exc).__name__
        )
    return None


def _close(scope: RunScope) -> bool:
    """Close the run's journal; False when another worker took the run over (it owns it now)."""
    try:
        scope.journal.close()
    except RunFencedError:
        log.warning("run_fenced", **scope.ids)
        return False
    except Exception as exc:
        log.error("run_not_saved", **scope.ids, error=repr(exc))
    return True


def _fenced(scope: RunScope) -> None:
    # Another worker took this run over while this one stalled: the run, its events and its
    # status are that worker's now; this one leaves them alone.
    log.warning("run_fenced", **scope.ids)
    with contextlib.suppress(Exception):
        scope.journal.close()


def _save_usage(store: Store, run_id: str, scope: RunScope) -> None:
    if scope.usage:
        try:
            save_run_usage(store, run_id, scope.usage)
        except DevOpsAgentError as exc:  # the run's outcome stands; its usage is in its events
            log.error("run_usage_not_saved", **scope.ids, error=exc.message)


def _no_plan_waiting(session: SessionRecord) -> None:
    """A session whose plan waits for a decision takes that decision first."""
    if session.context_state.get(PENDING_PLAN_KEY):
        short = session.id[:12]
        raise UserError(
            f"session {short} waits for a decision on its plan",
            hint=f"`devops-agent plan {short}` shows it; --approve, --edit TEXT or --reject answers it",
        )


def with_gaps(
    output: str | None, report: dict[str, Any] | None, gaps: list[dict[str, Any]]
) -> tuple[str | None, dict[str, Any] | None]:
    """A finished run's answer and report with what it could not use of its MCP servers: the report
    lists them as gaps (its verdict follows), the answer ends with them. Secrets are cut out of the
    reasons (a server's last stderr line can hold one)."""
    clean = [{k: scrub(v).text if isinstance(v, str) else v for k, v in g.items()} for g in gaps]
    if report is not None:
        merged = Report.model_validate(report)
        merged.gaps.extend(Gap.model_validate(g) for g in clean)
        report = merged.model_dump(mode="json")
    if output is not None:
        lines = [f"- **{g['step']}** (`{g['tool']}`): {g['reason']} — {g['hint']}" for g in clean]
        output = output.rstrip() + "\n\n## Not checked\n\n" + "\n".join(lines) + "\n"
    return output, report
