"""The session service: start a run, stream its ``RunEvent``s, persist as it goes, cancel, resume.

Every interface (CLI, TUI, API) goes through :class:`SessionService`. A run takes one of two
paths: the model loop when a model is configured, the offline runbook engine otherwise. Both
emit the same event stream, record tool calls, and persist the conversation as pydantic-ai
messages, so a session can be resumed by another process (the history is reloaded from the
store) and a model session can follow an offline one.

A run executes in its own task feeding a queue; :meth:`SessionService.stream` yields from the
queue, and :meth:`SessionService.cancel` cancels the task, which ends the stream with a
``run_finished`` event of status ``cancelled``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any

import structlog
from pydantic import Discriminator, TypeAdapter
from pydantic_ai import DeferredToolRequests
from pydantic_ai.capabilities import AbstractCapability, Hooks, ProcessHistory
from pydantic_ai.messages import (
    AgentStreamEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ToolReturnPart,
    UserPromptPart,
    repair_messages,
)
from pydantic_ai.models import Model
from pydantic_ai.run import AgentRunResultEvent
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.usage import UsageLimits

from devops_agent.agent.approvals import (
    PENDING_KEY,
    ApprovalDecision,
    check_answers,
    deferred_results,
    pending_from,
)
from devops_agent.agent.journal import Journal
from devops_agent.agent.model_errors import (
    is_unknown_tool,
    model_failure,
    shorten_retry_prompts,
    shorten_unknown_tool,
)
from devops_agent.agent.models import base_url_of, request_settings, resolve_model
from devops_agent.agent.offline import make_call_tool, run_offline
from devops_agent.agent.report import Report
from devops_agent.agent.runtime import build_agent, build_toolset
from devops_agent.agent.usage import run_usage
from devops_agent.config import Settings
from devops_agent.errors import DevOpsAgentError, UserError
from devops_agent.events import (
    ApprovalRequested,
    ApprovalResolved,
    ErrorEvent,
    RunEvent,
    RunFinished,
    RunStarted,
    RunStatus,
    Token,
    ToolCall,
    ToolResultEvent,
)
from devops_agent.knowledge.memory import CURRENT_SESSION
from devops_agent.policies.breaker import BreakerBoard, BreakerSnapshot
from devops_agent.policies.guard import Verdict
from devops_agent.policies.middleware import ToolCallInfo, ToolMiddleware
from devops_agent.policies.modes import Mode
from devops_agent.privacy.guard import PrivacyGuard, enabled_for, strip_unknown_args
from devops_agent.privacy.secrets import scrub
from devops_agent.privacy.vault import hmac_key, purge_expired
from devops_agent.runbooks.engine import call_guarded
from devops_agent.runbooks.triage import TriageCache, find_ticket_ref, triage_guidance
from devops_agent.store import (
    AuditRecord,
    BreakerRecord,
    EventWrite,
    MessageWrite,
    SessionRecord,
    Store,
    ToolCallRecord,
)
from devops_agent.tools.base import ToolResult
from devops_agent.tools.registry import ToolCatalog, ToolRegistry, build_catalog

log = structlog.get_logger(__name__)

_MESSAGE: TypeAdapter[ModelMessage] = TypeAdapter(Annotated[ModelMessage, Discriminator("kind")])


def kept_output(raw: str | None, max_chars: int) -> str | None:
    """What the session stores of a full tool output: secrets scrubbed (never stored), capped."""
    if raw is None or max_chars <= 0:
        return None
    text = scrub(raw).text
    if len(text) > max_chars:
        dropped = len(text) - max_chars
        text = text[:max_chars] + f"\n… [{dropped} more characters not kept] …\n"
    return text


def dump_message(message: ModelMessage) -> str:
    """One pydantic-ai message as the JSON text the store keeps."""
    return _MESSAGE.dump_json(message).decode()


def load_message(payload: str) -> ModelMessage:
    return _MESSAGE.validate_json(payload)


_DONE = object()


@dataclass
class RunHandle:
    """A run in progress: its ids, its task and its event queue."""

    session_id: str
    run_id: str
    queue: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)
    journal: Journal | None = None
    task: asyncio.Task[None] | None = None
    seq: int = 0
    final: RunFinished | None = None
    usage: dict[str, Any] | None = None
    """Token counts and cost of a model run, once it has ended."""


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
    ) -> None:
        """``extra_toolsets`` (MCP servers, …) get the same policy wrappers as registered tools;
        ``privacy`` forces the privacy guard on or off (default: ``privacy.enabled`` in settings)."""
        self.settings = settings
        self.store = store
        self.extra_toolsets = list(extra_toolsets)
        self.privacy = enabled_for(settings) if privacy is None else privacy
        # Secrets are cut out of what runs read and what the session stores: always with the guard,
        # and without it unless privacy.scrub_secrets is off (a local model may then read them).
        self.scrub_secrets = self.privacy or settings.privacy.scrub_secrets
        if self.privacy:
            try:
                purge_expired(store, settings.privacy.ttl_hours)
            except DevOpsAgentError as exc:
                # Housekeeping, not the run: the guard still masks, and restoring fails closed
                # (masked answer and a note) if the vault is unusable.
                log.warning("vault_purge_failed", error=exc.message)
        self.catalog: ToolCatalog = build_catalog(settings, registry)
        self.model = (
            model if model is not None else (resolve_model(settings.model) if use_configured_model else None)
        )
        self.breakers = BreakerBoard(settings.tools.breaker, listener=self._save_breaker)
        self._runs: dict[str, RunHandle] = {}
        self._triage_caches: dict[str, TriageCache] = {}

    # -- sessions -------------------------------------------------------------------------

    def open_session(self, session_id: str | None, *, title: str, mode: Mode | None = None) -> SessionRecord:
        if session_id is not None:
            record = self.store.get_session(session_id)
            if mode is not None and mode != record.mode:
                record = self.store.update_session(record.id, mode=mode)
            return record
        return self.store.create_session(
            title=title[:120], mode=mode or self.settings.mode, model=self.model_name
        )

    @property
    def model_name(self) -> str | None:
        if self.model is None:
            return None
        return self.settings.model.name or self.model.model_name

    def history(self, session_id: str) -> list[ModelMessage]:
        """The session's conversation as pydantic-ai messages."""
        return [load_message(p) for p in self.store.load_messages(session_id)]

    # -- runs -----------------------------------------------------------------------------

    async def stream(
        self,
        prompt: str | None,
        *,
        session_id: str | None = None,
        mode: Mode | None = None,
        inputs: dict[str, Any] | None = None,
        approvals: Mapping[str, ApprovalDecision] | None = None,
        on_start: Callable[[RunHandle], None] | None = None,
    ) -> AsyncIterator[RunEvent]:
        """Start a run and yield its events until ``run_finished``.

        With ``approvals`` (and no prompt) the run resumes a paused session: every pending call
        is answered, approved ones run, denied ones return the denial to the model.
        """
        if approvals is not None:
            if session_id is None:
                raise UserError("answering approvals needs the session id")
            session = self.store.get_session(session_id)
            check_answers(session.context_state.get(PENDING_KEY, {}), approvals)
            if self.model is None:
                # Only a model run pauses; without a model the answers could not resume it, and
                # the session must stay paused (not fail) so that they can be given again.
                used = f" (it used {session.model})" if session.model else ""
                raise UserError(
                    f"session {session.id[:12]} was paused by a model run{used}: answering it needs a model",
                    hint="pass --model with the session's model, or set model.name",
                )
        elif prompt is None:
            raise UserError("a run needs a prompt")
        else:
            if self.scrub_secrets:  # a token pasted into the question is stored nowhere (title, events)
                prompt = scrub(prompt).text
            session = self.open_session(session_id, title=prompt, mode=mode)
            waiting = session.context_state.get(PENDING_KEY)
            if waiting:  # the paused run's calls are answered first; a new question would orphan them
                short = session.id[:12]
                raise UserError(
                    f"session {short} waits for approval of {len(waiting)} call(s)",
                    hint=f"answer them first: `devops-agent approve {short}` (or --deny)",
                )
        handle = RunHandle(session.id, uuid.uuid4().hex, journal=Journal(self.store))
        self._runs[handle.run_id] = handle
        run = self._run(handle, session, prompt, dict(inputs or {}), approvals)
        handle.task = asyncio.create_task(run)
        if on_start is not None:
            on_start(handle)
        try:
            while True:
                item = await handle.queue.get()
                if item is _DONE:
                    break
                yield item
        finally:
            if handle.task is not None and not handle.task.done():
                handle.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await handle.task
            self._journal(handle).close()  # a no-op when the run already closed it
            self._runs.pop(handle.run_id, None)

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
        handle = RunHandle(session.id, uuid.uuid4().hex, journal=Journal(self.store))

        def audit(name: str, call_id: str | None, v: Verdict, outcome: str, extra: dict[str, Any]) -> None:
            actor = approver if extra.get("approved") else "policy"
            self._write_audit(
                handle,
                "agent",
                name,
                call_id,
                v,
                outcome,
                actor,
                extra.get("exit_status"),
                extra.get("sandbox"),
            )

        call_tool = make_call_tool(
            self.catalog, self.settings, "agent", self._middleware(handle), audit, approver=approver
        )
        try:
            return await call_guarded(call_tool, tool, args)
        finally:
            self._journal(handle).close()

    async def run(self, prompt: str | None, **kwargs: Any) -> tuple[list[RunEvent], RunFinished]:
        """Run to completion; return every event and the final one."""
        events = [e async for e in self.stream(prompt, **kwargs)]
        final = events[-1]
        assert isinstance(final, RunFinished)
        return events, final

    def cancel(self, run_id: str) -> bool:
        """Cancel a run of this process; ``False`` if it is not running here."""
        handle = self._runs.get(run_id)
        if handle is None or handle.task is None or handle.task.done():
            return False
        handle.task.cancel()
        return True

    @staticmethod
    def _journal(handle: RunHandle) -> Journal:
        assert handle.journal is not None
        return handle.journal

    def _stamp(self, handle: RunHandle, event: RunEvent) -> RunEvent:
        """Number the event and journal it for the store."""
        handle.seq += 1
        stamped = event.model_copy(
            update={"seq": handle.seq, "session_id": handle.session_id, "run_id": handle.run_id}
        )
        self._journal(handle).event(
            EventWrite(handle.session_id, handle.run_id, handle.seq, stamped.type, stamped.model_dump_json())
        )
        return stamped

    def _emit(self, handle: RunHandle, event: RunEvent) -> None:
        handle.queue.put_nowait(self._stamp(handle, event))

    async def _run(
        self,
        handle: RunHandle,
        session: SessionRecord,
        prompt: str | None,
        inputs: dict[str, Any],
        approvals: Mapping[str, ApprovalDecision] | None,
    ) -> None:
        mode: Mode = "agent" if session.mode == "agent" else "ask"
        ids = {"session_id": handle.session_id, "run_id": handle.run_id}
        CURRENT_SESSION.set(handle.session_id)  # a finding saved during the run names its session
        self.store.update_session(session.id, status="running")
        status: RunStatus = "failed"
        output: str | None = None
        report: dict[str, Any] | None = None
        try:
            if self.model is not None:
                started = RunStarted(
                    **ids,
                    prompt=prompt or "(approvals answered)",
                    mode=mode,
                    path="model",
                    model=self.model_name,
                )
                self._emit(handle, started)
                result = await self._run_model(handle, session, mode, prompt, approvals)
                if isinstance(result, DeferredToolRequests):
                    self._pause(handle, session, result)
                    status = "paused"
                else:
                    output, status = result, "completed"
            else:
                assert prompt is not None, "stream() refuses approvals without a model"
                rb, output = await self._run_runbooks(handle, mode, prompt, inputs)
                report = rb.model_dump(mode="json")
                status = "completed"
        except asyncio.CancelledError:
            status = "cancelled"
            self._finish(handle, session, status, None, None)
            raise
        except DevOpsAgentError as exc:
            self._emit(
                handle, ErrorEvent(**ids, message=exc.message, hint=exc.hint, error_type=type(exc).__name__)
            )
        except Exception as exc:
            log.exception("run_failed", **ids)
            self._emit(
                handle,
                ErrorEvent(**ids, message=f"{type(exc).__name__}: {exc}", error_type=type(exc).__name__),
            )
        self._finish(handle, session, status, output, report)

    def _finish(
        self,
        handle: RunHandle,
        session: SessionRecord,
        status: RunStatus,
        output: str | None,
        report: dict[str, Any] | None,
    ) -> None:
        final = RunFinished(
            session_id=handle.session_id,
            run_id=handle.run_id,
            status=status,
            output=output,
            report=report,
            usage=handle.usage,
        )
        stamped = self._stamp(handle, final)
        try:
            # Everything the run wrote is committed before anyone is told it finished.
            self._journal(handle).close()
        except Exception as exc:
            log.error("run_not_saved", session_id=handle.session_id, run_id=handle.run_id, error=repr(exc))
            hint = "the run's events may be incomplete in the store; `devops-agent doctor` checks it"
            handle.queue.put_nowait(
                ErrorEvent(
                    session_id=handle.session_id,
                    run_id=handle.run_id,
                    seq=handle.seq,
                    message=f"could not save the run: {exc}",
                    hint=hint,
                    error_type=type(exc).__name__,
                )
            )
        assert isinstance(stamped, RunFinished)
        handle.final = stamped
        self.store.update_session(session.id, status=status)
        handle.queue.put_nowait(stamped)
        handle.queue.put_nowait(_DONE)

    # -- approvals --------------------------------------------------------------------------

    def _pause(self, handle: RunHandle, session: SessionRecord, requests: DeferredToolRequests) -> None:
        """Store what waits for approval (so any process can answer) and announce it."""
        pending = pending_from(requests)
        state = dict(session.context_state, **{PENDING_KEY: pending})
        self.store.update_session(session.id, context_state=state)
        for call_id, p in pending.items():
            self._emit(
                handle,
                ApprovalRequested(
                    session_id=handle.session_id,
                    run_id=handle.run_id,
                    tool_call_id=call_id,
                    tool=p["tool"],
                    args=p["args"],
                    reason=p.get("reason", ""),
                    decision=p.get("decision", "approve"),
                    command=p.get("command"),
                    classification=p.get("classification"),
                    impact=p.get("impact"),
                ),
            )

    def _answer(
        self, handle: RunHandle, session: SessionRecord, mode: Mode, answers: Mapping[str, ApprovalDecision]
    ) -> None:
        """Record the answers (events; audit for denials) and clear what was pending."""
        pending = session.context_state.get(PENDING_KEY, {})
        for call_id, a in answers.items():
            resolved = ApprovalResolved(
                session_id=handle.session_id,
                run_id=handle.run_id,
                tool_call_id=call_id,
                approved=a.approved,
                reason=a.reason,
                approver=a.approver,
            )
            self._emit(handle, resolved)
            if not a.approved:
                p = pending[call_id]
                denied = Verdict(
                    p.get("decision", "approve"),
                    a.reason or "denied",
                    None,
                    p.get("command"),
                    p.get("classification"),
                )
                self._write_audit(handle, mode, p["tool"], call_id, denied, "denied", a.approver, None)
        state = {k: v for k, v in session.context_state.items() if k != PENDING_KEY}
        self.store.update_session(session.id, context_state=state)

    def _write_audit(
        self,
        handle: RunHandle,
        mode: Mode,
        tool: str,
        call_id: str | None,
        v: Verdict,
        outcome: str,
        actor: str,
        exit_status: int | None,
        sandbox: str | None = None,
    ) -> None:
        self._journal(handle).audit(
            AuditRecord(
                tool=tool,
                mode=mode,
                decision=v.decision,
                outcome=outcome,
                actor=actor,
                session_id=handle.session_id,
                run_id=handle.run_id,
                tool_call_id=call_id,
                command=v.command,
                classification=v.classification,
                exit_status=exit_status,
                detail=v.reason,
                sandbox=sandbox,
            )
        )

    def _audit_hook(
        self, handle: RunHandle, mode: Mode, approvers: Mapping[str, str]
    ) -> Callable[[str, str | None, Verdict, str, dict[str, Any]], None]:
        """The guard's audit callback for one run; approved calls name their approver."""

        def audit(tool: str, call_id: str | None, v: Verdict, outcome: str, extra: dict[str, Any]) -> None:
            actor = approvers.get(call_id or "", "user") if extra.get("approved") else "policy"
            exit_status, sandbox = extra.get("exit_status"), extra.get("sandbox")
            self._write_audit(handle, mode, tool, call_id, v, outcome, actor, exit_status, sandbox)

        return audit

    # -- tools ----------------------------------------------------------------------------

    def _middleware(self, handle: RunHandle, *, cap_chars: int | None = None) -> ToolMiddleware:
        keep = self.settings.tools.keep_full_output_chars

        def record(info: ToolCallInfo) -> None:
            r = info.result
            self._journal(handle).tool_call(
                ToolCallRecord(
                    session_id=handle.session_id,
                    run_id=handle.run_id,
                    tool_call_id=info.tool_call_id,
                    tool=info.tool,
                    args=info.args,
                    status=r.status,
                    duration_ms=r.metadata.get("duration_ms"),
                    error=scrub(r.error).text if r.error and self.scrub_secrets else r.error,
                    truncated=bool(r.metadata.get("truncated")),
                    created_at=info.started_at,
                    raw_output=kept_output(info.raw, keep),
                )
            )

        return ToolMiddleware(
            self.settings.tools,
            self.breakers,
            recorder=record,
            session_id=handle.session_id,
            run_id=handle.run_id,
            cap_chars=cap_chars,
            keep_raw=keep > 0,
        )

    def _save_breaker(self, snap: BreakerSnapshot) -> None:
        self.store.save_breaker(
            BreakerRecord(
                tool=snap.tool,
                state=snap.state,
                failures=snap.failures,
                opened_at=snap.opened_at,
                retry_after_s=snap.retry_after_s,
                updated_at=datetime.now(UTC),
            )
        )

    # -- offline path ---------------------------------------------------------------------

    async def _run_runbooks(
        self, handle: RunHandle, mode: Mode, prompt: str, inputs: dict[str, Any]
    ) -> tuple[Report, str]:
        ids = {"session_id": handle.session_id, "run_id": handle.run_id}

        def announce(runbooks: list[str]) -> None:
            self._emit(handle, RunStarted(**ids, prompt=prompt, mode=mode, path="runbook", runbooks=runbooks))

        def emit(event: RunEvent) -> None:
            self._emit(handle, event)

        # Analyzers summarize what they read, so they get far more than a model's context would.
        middleware = self._middleware(handle, cap_chars=self.settings.tools.analyzer_cap_chars)
        call_tool = make_call_tool(
            self.catalog, self.settings, mode, middleware, self._audit_hook(handle, mode, {})
        )
        if self.scrub_secrets:  # no model reads these, but the report and the events are stored
            guard = PrivacyGuard.secrets_only(self.settings, self.store, handle.session_id)
            unscrubbed = call_tool

            async def call_tool(name: str, args: dict[str, Any]) -> ToolResult:
                return guard.mask_result(await unscrubbed(name, args))

        report, markdown = await run_offline(
            prompt,
            inputs,
            settings=self.settings,
            catalog=self.catalog,
            call_tool=call_tool,
            emit=emit,
            announce=announce,
            triage_cache=self._triage_caches.setdefault(handle.session_id, TriageCache()),
            session_id=handle.session_id,
            run_id=handle.run_id,
        )
        exchange = (ModelRequest(parts=[UserPromptPart(prompt)]), ModelResponse(parts=[TextPart(markdown)]))
        self._journal(handle).messages(
            MessageWrite(handle.session_id, handle.run_id, tuple(dump_message(m) for m in exchange))
        )
        return report, markdown

    # -- model path -----------------------------------------------------------------------

    async def _run_model(
        self,
        handle: RunHandle,
        session: SessionRecord,
        mode: Mode,
        prompt: str | None,
        approvals: Mapping[str, ApprovalDecision] | None,
    ) -> str | DeferredToolRequests:
        assert self.model is not None
        history = self.history(handle.session_id)
        deferred = None
        if approvals is not None:
            self._answer(handle, session, mode, approvals)
            deferred = deferred_results(approvals)
        else:
            # A run that failed between a tool call and its result left the call open; a new question
            # closes it (pydantic-ai refuses a new prompt after an unanswered call).
            history = repair_messages(history)
        persisted = len(history)
        seen: list[ModelMessage] = []  # the run's conversation as far as it got, for a failure

        def persist(messages: list[ModelMessage], *, final: bool) -> None:
            nonlocal persisted
            # The last message may still grow while the run goes on; it is saved when final.
            upto = len(messages) if final else len(messages) - 1
            if upto > persisted:
                payloads = tuple(dump_message(m) for m in messages[persisted:upto])
                self._journal(handle).messages(MessageWrite(handle.session_id, handle.run_id, payloads))
                persisted = upto

        async def after_node(ctx: Any, *, node: Any, result: Any) -> Any:
            nonlocal seen
            seen = list(ctx.messages)
            persist(seen, final=False)
            return result

        approvers = {cid: a.approver for cid, a in (approvals or {}).items() if a.approved}
        guard = None
        capabilities: list[AbstractCapability[Any]] = [
            Hooks(after_node_run=after_node),
            ProcessHistory(shorten_retry_prompts),
        ]
        if self.privacy:
            guard = PrivacyGuard.for_session(
                self.settings, self.store, handle.session_id, hmac_key(self.settings)
            )
            capabilities.append(Hooks(before_tool_validate=strip_unknown_args))
        elif self.scrub_secrets:  # identifiers readable, secrets still cut out
            guard = PrivacyGuard.secrets_only(self.settings, self.store, handle.session_id)
        if guard is not None:
            capabilities.append(ProcessHistory(guard.process_history_async))
        toolset = build_toolset(
            self.catalog,
            mode,
            self._middleware(handle),
            safety=self.settings.safety,
            audit=self._audit_hook(handle, mode, approvers),
            privacy=guard,
            extra=self.extra_toolsets,
        )
        agent = build_agent(self.model, toolset, capabilities=capabilities)
        ids = {"session_id": handle.session_id, "run_id": handle.run_id}
        ref = find_ticket_ref(prompt or session.title, projects=self.settings.jira.projects)
        about_ticket = ref is not None and "jira_issue" in self.catalog.entries
        guidance = triage_guidance() if about_ticket else None
        limits = UsageLimits(request_limit=self.settings.model.max_tool_steps + 1)
        output: str | DeferredToolRequests = ""
        unknown: dict[str, list[str]] = {}  # tools the model called that it was not offered
        try:
            # Entering the agent enters the model's provider, which closes the HTTP client it made
            # when the run ends: no connection outlives the run (or its event loop).
            async with (
                agent,
                agent.run_stream_events(
                    prompt,
                    message_history=history,
                    usage_limits=limits,
                    deferred_tool_results=deferred,
                    instructions=guidance,
                    model_settings=request_settings(self.settings.model),
                ) as stream,
            ):
                async for ev in stream:
                    if isinstance(ev, AgentRunResultEvent):
                        result = ev.result.output
                        output = result if isinstance(result, DeferredToolRequests) else str(result)
                        if guard is not None and isinstance(output, str):
                            output = guard.final_output(output, restore=self.settings.privacy.restore_output)
                        seen = ev.result.all_messages()
                        persist(seen, final=True)
                    else:
                        _note_unknown_tool(ev, unknown)
                        for out in _translate(ev, ids, scrub_errors=self.scrub_secrets):
                            self._emit(handle, out)
        except Exception as exc:
            handle.usage = run_usage(seen[len(history) :])
            self._keep_failed_run(handle, prompt, seen, persisted > len(history), persist)
            failure = model_failure(
                exc, model=self.model_name, base_url=base_url_of(self.settings.model), unknown_tools=unknown
            )
            if failure is None:
                raise
            raise failure from exc
        handle.usage = run_usage(seen[len(history) :])
        return output

    def _keep_failed_run(
        self,
        handle: RunHandle,
        prompt: str | None,
        seen: list[ModelMessage],
        saved_some: bool,
        persist: Callable[..., None],
    ) -> None:
        """Store what a failed run got through, the question first: "try again" in the same session
        must reach the model with the question it failed on."""
        try:
            if seen:
                persist(seen, final=True)
            elif prompt is not None and not saved_some:
                persist([ModelRequest(parts=[UserPromptPart(prompt)])], final=True)
        except Exception as exc:  # the run's own error is the one to tell
            log.error("failed_run_not_saved", session_id=handle.session_id, error=repr(exc))


def _note_unknown_tool(ev: AgentStreamEvent, unknown: dict[str, list[str]]) -> None:
    """Remember a call to a tool the model was not offered, with the names it was offered (from
    pydantic-ai's retry), so that a run that fails on it can say so."""
    if isinstance(ev, FunctionToolResultEvent) and is_unknown_tool(ev.part):
        offered = str(ev.part.content).partition("Available tools:")[2]
        unknown[ev.part.tool_name or ""] = re.findall(r"'([^']+)'", offered)


def _translate(ev: AgentStreamEvent, ids: dict[str, str], *, scrub_errors: bool = False) -> list[RunEvent]:
    """Our events for one pydantic-ai stream event.

    With ``scrub_errors`` secrets are cut out of a tool's error text before the event is stored.
    Errors of our tools are already clean (the privacy wrapper masks failed results, the middleware
    scrubs an exception's text), but a retry prompt, e.g. an MCP server's error raised as
    ``ModelRetry``, reaches the stream through neither.
    """
    if isinstance(ev, PartStartEvent) and isinstance(ev.part, TextPart) and ev.part.content:
        return [Token(**ids, text=ev.part.content)]
    if isinstance(ev, PartDeltaEvent) and isinstance(ev.delta, TextPartDelta) and ev.delta.content_delta:
        return [Token(**ids, text=ev.delta.content_delta)]
    if isinstance(ev, FunctionToolCallEvent):
        return [
            ToolCall(
                **ids, tool_call_id=ev.part.tool_call_id, tool=ev.part.tool_name, args=ev.part.args_as_dict()
            )
        ]
    if isinstance(ev, FunctionToolResultEvent):
        part = ev.part
        content = part.content if isinstance(part, ToolReturnPart) else None
        if isinstance(content, dict) and "status" in content:
            meta = content.get("metadata") or {}
            status, error = str(content["status"]), content.get("error")
            duration, truncated, keep = meta.get("duration_ms"), bool(meta.get("truncated")), None
        else:  # a retry prompt
            status, error = "error", shorten_unknown_tool(str(getattr(part, "content", "")))
            duration, truncated, keep = None, False, 500
        if scrub_errors and error:
            error = scrub(str(error)).text
        if keep is not None and error:
            error = error[:keep]  # cut after scrubbing, so no token is cut in two and left readable
        return [
            ToolResultEvent(
                **ids,
                tool_call_id=part.tool_call_id,
                tool=part.tool_name or "",
                status=status,
                duration_ms=duration,
                truncated=truncated,
                error=error,
            )
        ]
    return []
