"""The tools a session service offers, and each run's pipeline over them.

A :class:`Toolbox` holds what lives as long as the service: the catalog of registered toolsets,
the foreign toolsets (MCP servers, …), the pool of configured MCP servers, and the circuit breakers
(persisted for ``devops-agent tools status``, each MCP server's too, as ``mcp:NAME``).
:meth:`Toolbox.pipeline` builds one run's tool pipeline —
:func:`devops_agent.policies.pipeline.build_pipeline`, the only place the wrappers are ordered —
with the run's recorder (tool calls into the journal, full outputs kept, secrets scrubbed) and its
audit writer. Runners ask for a pipeline; they never wrap tools themselves.

A run gets the MCP servers its profiles scope (:meth:`McpPool.in_scope`); what it could not use of
them is collected per run and taken by the session service at the end (:meth:`Toolbox.take_gaps`)
for the report.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic_ai.toolsets import AbstractToolset

from devops_agent.agent.durability import Durability
from devops_agent.agent.journal import Journal
from devops_agent.config import Settings
from devops_agent.events import RunEvent, ToolResultEvent
from devops_agent.evidence import Evidence
from devops_agent.policies.breaker import BreakerBoard, BreakerSnapshot
from devops_agent.policies.guard import Verdict
from devops_agent.policies.modes import Mode
from devops_agent.policies.pipeline import ModeFilterToolset, RunPolicy, build_pipeline
from devops_agent.policies.toolsets.gate import ApprovalPolicy
from devops_agent.policies.toolsets.record import ToolCallInfo
from devops_agent.privacy.guard import PrivacyGuard
from devops_agent.secrets.scrubber import scrub
from devops_agent.store import AuditRecord, BreakerRecord, Store, ToolCallRecord
from devops_agent.tools.kept import KEPT
from devops_agent.tools.registry import ToolCatalog

if TYPE_CHECKING:  # the MCP client (about 2 s to import) loads only where servers are configured
    from devops_agent.tools.mcp.connection import ServerStatus
    from devops_agent.tools.mcp.pool import McpPool
    from devops_agent.tools.mcp.toolset import GapLog


def kept_output(raw: str | None, max_chars: int) -> str | None:
    """What the session stores of a full tool output: secrets scrubbed (never stored), capped."""
    if raw is None or max_chars <= 0:
        return None
    text = scrub(raw).text
    if len(text) > max_chars:
        dropped = len(text) - max_chars
        text = text[:max_chars] + f"\n… [{dropped} more characters not kept] …\n"
    return text


@dataclass
class RunIds:
    """Whose run a pipeline serves, and where its records go."""

    session_id: str
    run_id: str
    mode: Mode
    journal: Journal
    profiles: tuple[str, ...] = ()
    """The profiles the run names: which MCP servers it gets besides the global ones."""


EVIDENCE_HELD = 256
"""Calls whose evidence waits for its event, at most (a call whose event never comes is dropped)."""


@dataclass
class Toolbox:
    """The service's tools; a pipeline over them per run."""

    settings: Settings
    store: Store
    catalog: ToolCatalog
    foreign: Sequence[AbstractToolset[Any]] = ()
    scrub_errors: bool = True
    mcp: McpPool | None = None
    breakers: BreakerBoard = field(init=False)
    _gaps: dict[str, GapLog] = field(init=False, default_factory=dict)
    _fallbacks: dict[str, AbstractToolset[Any]] | None = field(init=False, default=None)
    _evidence: OrderedDict[tuple[str, str], Evidence] = field(init=False, default_factory=OrderedDict)

    def __post_init__(self) -> None:
        self.breakers = BreakerBoard(self.settings.tools.breaker, listener=self._save_breaker)
        if self.mcp is not None:
            self.mcp.listener = self._save_server_breaker

    def keep_evidence(self, session_id: str, call_id: str, evidence: Evidence) -> None:
        """Hold a call's evidence until its ``tool_result`` event is emitted (a model's run
        builds that event from what pydantic-ai streams, which carries no evidence)."""
        self._evidence[(session_id, call_id)] = evidence
        while len(self._evidence) > EVIDENCE_HELD:
            self._evidence.popitem(last=False)

    def with_evidence(self, event: RunEvent) -> RunEvent:
        """``event`` with the evidence its call left (:meth:`keep_evidence`), when it is a
        ``tool_result`` that has none; the evidence is handed out once."""
        if not isinstance(event, ToolResultEvent) or event.evidence is not None:
            return event
        evidence = self._evidence.pop((event.session_id, event.tool_call_id), None)
        return event if evidence is None else event.model_copy(update={"evidence": evidence})

    def take_gaps(self, run_id: str) -> list[dict[str, Any]]:
        """What run ``run_id`` could not use of its MCP servers (``Gap`` fields); forgotten after."""
        log = self._gaps.pop(run_id, None)
        return log.gaps() if log is not None else []

    def mcp_fallbacks(self) -> dict[str, AbstractToolset[Any]]:
        """Built-in toolsets offered in place of unreachable MCP servers, by server name: only those
        that are not offered anyway (a toolset in ``tools.disabled``, kept for this purpose)."""
        if self._fallbacks is None:
            self._fallbacks = {}
            registry = self.catalog.registry
            for conn in self.mcp.servers.values() if self.mcp is not None else ():
                name = conn.settings.fallback
                if name is None or name in self.catalog.toolsets or name not in registry.toolsets:
                    continue
                try:
                    built = registry.toolsets[name].factory(self.settings)
                except ImportError:
                    continue  # its extra is missing: `devops-agent mcp list` says so
                self._fallbacks[conn.name] = built.to_pydantic_ai()
        return self._fallbacks

    def audit_writer(self, run: RunIds) -> Any:
        """``(tool, call_id, verdict, outcome, actor, exit_status)`` into the run's audit entries."""

        def write(
            tool: str,
            call_id: str | None,
            v: Verdict,
            outcome: str,
            actor: str,
            exit_status: int | None,
            sandbox: str | None = None,
        ) -> None:
            run.journal.audit(
                AuditRecord(
                    tool=tool,
                    mode=run.mode,
                    decision=v.decision,
                    outcome=outcome,
                    actor=actor,
                    session_id=run.session_id,
                    run_id=run.run_id,
                    tool_call_id=call_id,
                    command=v.command,
                    classification=v.classification,
                    exit_status=exit_status,
                    detail=v.reason,
                    sandbox=sandbox,
                )
            )

        return write

    def pipeline(
        self,
        run: RunIds,
        *,
        approvals: ApprovalPolicy,
        privacy: PrivacyGuard | None,
        approvers: Mapping[str, str] | None = None,
        approver: str | None = None,
        cap_chars: int | None = None,
        audit_reads: bool = True,
        only: Collection[str] | None = None,
        extra: Sequence[AbstractToolset[Any]] = (),
        durability: Durability | None = None,
        mcp: bool | Sequence[str] = True,
        specialist_profiles: Sequence[str] | None = None,
        digest: bool = False,
    ) -> ModeFilterToolset:
        """One run's pipeline. An approved call is audited in its approver's name: ``approvers`` by
        call id (answers to a paused run), or ``approver`` for every call (an approved call outside a
        run); the policy's own decisions in the name ``policy``. ``mcp``: offer the MCP servers in
        the run's scope, or only those named (runbooks, which call our tools by name, pass
        ``False`` and start none).

        A specialist's pipeline is narrower, never wider: ``only`` keeps just these of our tools
        (the mode filter and the gate still judge each one), ``specialist_profiles`` its MCP
        profiles (:meth:`specialist_servers`: global servers and those of these profiles, never a
        general run's other servers). ``extra`` toolsets of the agent layer (runbooks and analyzers
        as tools) join ours behind the same wrappers. ``digest``: a model reads the results, so large
        ones are summarized by type (``context.payloads``)."""
        keep = self.settings.tools.keep_full_output_chars
        write = self.audit_writer(run)

        def audit(tool: str, call_id: str | None, v: Verdict, outcome: str, extra: dict[str, Any]) -> None:
            actor = "policy"
            if extra.get("approved"):
                actor = approver or (approvers or {}).get(call_id or "", "user")
            write(tool, call_id, v, outcome, actor, extra.get("exit_status"), extra.get("sandbox"))

        def record(info: ToolCallInfo) -> None:
            r = info.result
            kept = kept_output(info.raw, keep)
            if kept is not None and info.tool_call_id:
                KEPT.remember(run.session_id, info.tool_call_id, kept)
            if r.evidence is not None and info.tool_call_id:
                self.keep_evidence(run.session_id, info.tool_call_id, r.evidence)
            run.journal.tool_call(
                ToolCallRecord(
                    session_id=run.session_id,
                    run_id=run.run_id,
                    tool_call_id=info.tool_call_id,
                    tool=info.tool,
                    args=info.args,
                    status=r.status,
                    duration_ms=r.metadata.get("duration_ms"),
                    error=scrub(r.error).text if r.error and self.scrub_errors else r.error,
                    truncated=bool(r.metadata.get("truncated")),
                    created_at=info.started_at,
                    raw_output=kept,
                )
            )

        policy = RunPolicy(
            mode=run.mode,
            approvals=approvals,
            breakers=self.breakers,
            privacy=privacy,
            audit=audit,
            recorder=record,
            session_id=run.session_id,
            run_id=run.run_id,
            cap_chars=cap_chars,
            audit_reads=audit_reads,
            digest=self.settings.context.payloads if digest else None,
            checkpoint=durability.checkpoint if durability is not None else None,
            limiter=durability.limiter if durability is not None else None,
        )
        ours: list[AbstractToolset[Any]] = [b.to_pydantic_ai() for b in self.catalog.toolsets.values()]
        ours += extra
        if only is not None:
            # Not ``keep``: the journal's closure above reads that name when a call is recorded.
            wanted = frozenset(only)
            ours = [t.filtered(lambda _ctx, td: td.name in wanted) for t in ours]
        profiles = run.profiles
        foreign = list(self.foreign)
        if specialist_profiles is not None:
            profiles = tuple(specialist_profiles)
            mcp = self.specialist_servers(profiles) if mcp is True else mcp
            # Foreign toolsets given to the service (not from the pool) go by their id as profile.
            foreign = [t for t in foreign if t.id is not None and t.id in profiles]
        if mcp and self.mcp is not None:
            from devops_agent.tools.mcp.toolset import GapLog

            gaps = self._gaps.setdefault(run.run_id, GapLog())
            names = None if mcp is True else list(mcp)
            foreign += self.mcp.toolsets(
                profiles,
                gaps=gaps,
                fallbacks=self.mcp_fallbacks(),
                names=names,
                reserved=self.catalog.entries,
            )
        return build_pipeline(ours, self.settings, policy, foreign=foreign)

    def specialist_servers(self, profiles: Sequence[str]) -> list[str]:
        """The MCP servers a specialist with these profiles gets: the global ones and those of its
        profiles. Unlike a general run (which also gets every non-exclusive server), a specialist
        naming no profile gets only the global servers."""
        if self.mcp is None:
            return []
        wanted = set(profiles)
        return [
            c.name
            for c in self.mcp.in_scope(profiles)
            if not c.settings.profiles or set(c.settings.profiles) & wanted
        ]

    def specialist_has_foreign(self, profiles: Sequence[str]) -> bool:
        """Whether a specialist with these profiles gets any foreign tools at all."""
        return bool(self.specialist_servers(profiles)) or any(
            t.id is not None and t.id in profiles for t in self.foreign
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

    def _save_server_breaker(self, status: ServerStatus) -> None:
        """An MCP server's breaker beside the tools' (``devops-agent tools status``)."""
        if status.state in ("idle", "closed"):
            return
        now = datetime.now(UTC)
        self.store.save_breaker(
            BreakerRecord(
                tool=f"mcp:{status.name}",
                state=status.breaker,
                failures=status.failures,
                opened_at=now if status.breaker == "open" else None,
                retry_after_s=status.retry_in_s,
                updated_at=now,
            )
        )
