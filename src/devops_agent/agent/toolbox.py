"""The tools a session service offers, and each run's pipeline over them.

A :class:`Toolbox` holds what lives as long as the service: the catalog of registered toolsets,
the foreign toolsets (MCP servers, …), and the circuit breakers (persisted for
``devops-agent tools status``). :meth:`Toolbox.pipeline` builds one run's tool pipeline —
:func:`devops_agent.policies.pipeline.build_pipeline`, the only place the wrappers are ordered —
with the run's recorder (tool calls into the journal, full outputs kept, secrets scrubbed) and its
audit writer. Runners ask for a pipeline; they never wrap tools themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic_ai.toolsets import AbstractToolset

from devops_agent.agent.durability import Durability
from devops_agent.agent.journal import Journal
from devops_agent.config import Settings
from devops_agent.policies.breaker import BreakerBoard, BreakerSnapshot
from devops_agent.policies.guard import Verdict
from devops_agent.policies.modes import Mode
from devops_agent.policies.pipeline import ModeFilterToolset, RunPolicy, build_pipeline
from devops_agent.policies.toolsets.gate import ApprovalPolicy
from devops_agent.policies.toolsets.record import ToolCallInfo
from devops_agent.privacy.guard import PrivacyGuard
from devops_agent.secrets.scrubber import scrub
from devops_agent.store import AuditRecord, BreakerRecord, Store, ToolCallRecord
from devops_agent.tools.registry import ToolCatalog


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


@dataclass
class Toolbox:
    """The service's tools; a pipeline over them per run."""

    settings: Settings
    store: Store
    catalog: ToolCatalog
    foreign: Sequence[AbstractToolset[Any]] = ()
    scrub_errors: bool = True
    breakers: BreakerBoard = field(init=False)

    def __post_init__(self) -> None:
        self.breakers = BreakerBoard(self.settings.tools.breaker, listener=self._save_breaker)

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
        durability: Durability | None = None,
    ) -> ModeFilterToolset:
        """One run's pipeline. An approved call is audited in its approver's name: ``approvers`` by
        call id (answers to a paused run), or ``approver`` for every call (an approved call outside a
        run); the policy's own decisions in the name ``policy``."""
        keep = self.settings.tools.keep_full_output_chars
        write = self.audit_writer(run)

        def audit(tool: str, call_id: str | None, v: Verdict, outcome: str, extra: dict[str, Any]) -> None:
            actor = "policy"
            if extra.get("approved"):
                actor = approver or (approvers or {}).get(call_id or "", "user")
            write(tool, call_id, v, outcome, actor, extra.get("exit_status"), extra.get("sandbox"))

        def record(info: ToolCallInfo) -> None:
            r = info.result
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
                    raw_output=kept_output(info.raw, keep),
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
            checkpoint=durability.checkpoint if durability is not None else None,
            limiter=durability.limiter if durability is not None else None,
        )
        ours = [b.to_pydantic_ai() for b in self.catalog.toolsets.values()]
        return build_pipeline(ours, self.settings, policy, foreign=self.foreign)

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
