"""The tool pipeline: the one place the wrapper order and the privacy mode are decided.

Every tool call of every run — the model loop's, a runbook's, the triage workflow's, a call a
person approved outside a run — goes through the stack :func:`build_pipeline` makes, outermost
first:

1. **mode filter** — only the tools the session's mode allows are offered (``FilteredToolset``);
   then, in a durable run only, **checkpoint** — a call that completed before a worker took the
   run over is answered from its checkpoint, so nothing below happens twice;
2. **record** — the finished call goes to the run's recorder (the session's journal);
3. **telemetry** — one span and one log line; ``duration_ms`` and ``source`` stamped;
4. **cap** — big results cut for the reader, the full output kept for the user;
5. **privacy** — real values into tools, masked values out (identifiers and secrets when a model
   reads the output, secrets only when only the user does);
   **digest** — for a model (``RunPolicy.digest``), a large result summarized by type, the raw
   one kept;
6. **gate** — the safety verdict: allow, reject, halt, or a person's approval (deferred, denied
   or given in advance, as the run's :data:`ApprovalPolicy` says); audited;
7. **breaker** — a tool that keeps failing is given a rest;
8. **limit** — in a durable run, a call waits for a slot of its integration (limits that hold
   across workers);
9. **normalize** — timeout; whatever the tool did becomes a ``ToolResult``.

The paths differ only in data (:class:`RunPolicy`): the model path defers approvals, runbooks deny
them, an approved call carries them. :class:`ToolCaller` calls the pipeline by tool name for the
paths that have no model. Nothing else may stack these wrappers.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from pydantic_ai import Agent, CombinedToolset, FilteredToolset, WrapperToolset
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import RunContext, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_ai.usage import RunUsage

from devops_agent.config import Settings
from devops_agent.config.context import PayloadSettings
from devops_agent.policies.breaker import BreakerBoard
from devops_agent.policies.modes import Mode, allowed
from devops_agent.policies.toolsets.breaker import BreakerToolset
from devops_agent.policies.toolsets.cap import CapToolset
from devops_agent.policies.toolsets.checkpoint import CheckpointToolset, ToolCheckpoint
from devops_agent.policies.toolsets.digest import DigestToolset
from devops_agent.policies.toolsets.gate import ApprovalPolicy, AuditHook, GateToolset
from devops_agent.policies.toolsets.limit import CallLimiter, LimitToolset
from devops_agent.policies.toolsets.normalize import NormalizeToolset
from devops_agent.policies.toolsets.privacy import PrivacyToolset
from devops_agent.policies.toolsets.record import Recorder, RecordToolset
from devops_agent.policies.toolsets.telemetry import TelemetryToolset
from devops_agent.privacy.guard import MaskedDefinitionsToolset, PrivacyGuard
from devops_agent.privacy.vault import hmac_key
from devops_agent.store import Store
from devops_agent.tools.base import ToolResult, spec_from_metadata

TOOL_THREADS = ThreadPoolExecutor(max_workers=16, thread_name_prefix="devops-agent-tool")
"""Where sync tools run, on both paths. The default pool on a 2-core machine holds 6 threads, fewer
than the 8 calls triage keeps in flight; and unlike anyio's, a call that times out is abandoned to
its thread instead of holding the run until it returns."""


class ModeFilterToolset(FilteredToolset[Any]):
    """Offers only what the mode allows; :meth:`all_tools` still knows every tool, so a call that
    names a hidden one is refused by the gate with a reason instead of being "unknown"."""

    async def all_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        return await self.wrapped.get_tools(ctx)


def offered(mode: Mode) -> Any:
    """The mode filter's predicate: a tool is offered when the mode allows it, and the shell (whose
    commands are judged one by one) always."""

    def visible(_ctx: RunContext[Any], tool_def: ToolDefinition) -> bool:
        spec = spec_from_metadata(tool_def.metadata)
        return allowed(mode, spec) or bool(spec and spec.command_arg)

    return visible


@dataclass
class RunPolicy:
    """What one run's pipeline needs to know; every difference between the paths is here."""

    mode: Mode
    approvals: ApprovalPolicy
    breakers: BreakerBoard
    privacy: PrivacyGuard | None = None
    audit: AuditHook | None = None
    recorder: Recorder | None = None
    session_id: str | None = None
    run_id: str | None = None
    cap_chars: int | None = None
    """Output cap; ``None``: ``tools.output_cap_chars`` (sized for a model's context)."""
    audit_reads: bool = True
    checkpoint: ToolCheckpoint | None = None
    """A durable run's checkpoints of completed calls (``None``: an ordinary run)."""
    limiter: CallLimiter | None = None
    """Slots per integration shared by every worker (``None``: no limit)."""
    digest: PayloadSettings | None = None
    """Summarize large results by type for a model (``context.payloads``); ``None``: never."""


def privacy_guard(
    settings: Settings, store: Store, session_id: str, *, model_reads: bool, privacy: bool
) -> PrivacyGuard | None:
    """The guard for a run's tool outputs: every identifier masked when a model reads them and the
    privacy guard is on; secrets only when only the user reads them, or when the guard is off but
    ``privacy.scrub_secrets`` is not; none when both are off (a local model may then read secrets)."""
    if model_reads and privacy:
        return PrivacyGuard.for_session(settings, store, session_id, hmac_key(settings))
    if privacy or settings.privacy.scrub_secrets:
        return PrivacyGuard.secrets_only(settings, store, session_id)
    return None


def build_pipeline(
    toolsets: Sequence[AbstractToolset[Any]],
    settings: Settings,
    policy: RunPolicy,
    *,
    foreign: Sequence[AbstractToolset[Any]] = (),
) -> ModeFilterToolset:
    """``toolsets`` (ours) and ``foreign`` ones (MCP servers, whose descriptions we did not write
    and which are masked when identifiers are) behind the policy wrappers, in the one order."""
    guard = policy.privacy
    if guard is not None:
        foreign = [MaskedDefinitionsToolset(t, guard=guard) for t in foreign]
    tools = settings.tools
    inner: AbstractToolset[Any] = CombinedToolset([*toolsets, *foreign])
    stack: AbstractToolset[Any] = NormalizeToolset(inner, timeout_s=tools.timeout_s)
    if policy.limiter is not None:
        stack = LimitToolset(stack, limiter=policy.limiter)
    stack = BreakerToolset(stack, board=policy.breakers)
    stack = GateToolset(
        stack,
        mode=policy.mode,
        safety=settings.safety,
        approvals=policy.approvals,
        audit=policy.audit,
        audit_reads=policy.audit_reads,
    )
    stack = DigestToolset(stack, payloads=policy.digest)
    stack = PrivacyToolset(stack, guard=guard)
    stack = CapToolset(
        stack,
        cap_chars=policy.cap_chars or tools.output_cap_chars,
        keep_raw=tools.keep_full_output_chars > 0,
        session_id=policy.session_id,
    )
    stack = TelemetryToolset(stack, session_id=policy.session_id, run_id=policy.run_id)
    stack = RecordToolset(stack, recorder=policy.recorder)
    if policy.checkpoint is not None:
        stack = CheckpointToolset(stack, checkpoint=policy.checkpoint)
    return ModeFilterToolset(stack, filter_func=offered(policy.mode))


def layers(toolset: AbstractToolset[Any]) -> list[str]:
    """The wrapper classes of a pipeline, outermost first, down to the first non-wrapper."""
    names: list[str] = []
    current: AbstractToolset[Any] = toolset
    while isinstance(current, WrapperToolset):
        names.append(type(current).__name__)
        current = current.wrapped
    return names


_PLACEHOLDER_MODEL = TestModel()
"""The ``model`` a RunContext must name; no path without a model ever calls it."""


@dataclass
class ToolCaller:
    """Calls a pipeline's tools by name where no model drives the run (runbooks, triage, approved
    calls): arguments validated against each tool's schema as pydantic-ai does for a model, call
    ids ``call-1``, ``call-2`` … per run, sync tools on :data:`TOOL_THREADS`. Never raises for a
    tool's failure: an unknown tool or bad arguments are error results, like any other."""

    pipeline: ModeFilterToolset
    run_id: str | None = None
    deps: Any = None
    _counter: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _tools: dict[str, ToolsetTool[Any]] | None = None

    def _context(self, call_id: str | None = None, name: str | None = None) -> RunContext[Any]:
        return RunContext(
            deps=self.deps,
            model=_PLACEHOLDER_MODEL,
            usage=RunUsage(),
            tool_call_id=call_id,
            tool_name=name,
            run_id=self.run_id,
        )

    async def __call__(self, name: str, args: dict[str, Any]) -> ToolResult:
        if self._tools is None:
            self._tools = await self.pipeline.all_tools(self._context())
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult.fail(
                f"unknown tool {name!r}", "`devops-agent tools list` shows the available tools"
            )
        try:
            valid = tool.args_validator.validate_python(args)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
            )
            return ToolResult.fail(
                f"invalid arguments for {name}: {problems}", "check the runbook step's args"
            )
        call_id = f"call-{next(self._counter)}"
        with Agent.using_thread_executor(TOOL_THREADS):
            result: ToolResult = await self.pipeline.call_tool(
                name, valid, self._context(call_id, name), tool
            )
        return result
