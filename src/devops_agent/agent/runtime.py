"""The model loop's runtime: a pydantic-ai ``Agent`` over our toolsets, wrapped in our policies.

Wrapper order, outermost first: middleware (telemetry, breaker, normalization, size cap) →
privacy (real arguments in, masked results out) → safety guard (mode, command classification,
approvals, halts, audit) → the registered toolsets. Privacy sits *outside* the safety guard on
purpose: the guard must classify, audit and show approvers the real command, not placeholders
(which bash would even parse as here-documents).
This module builds agents; running them, streaming events and persisting is the session
service's job.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pydantic_ai
from pydantic_ai import Agent, CombinedToolset, DeferredToolRequests
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.models import Model
from pydantic_ai.toolsets import AbstractToolset

from devops_agent.config.settings import SafetySettings
from devops_agent.policies.guard import AuditHook, GuardToolset
from devops_agent.policies.middleware import MiddlewareToolset, ToolMiddleware
from devops_agent.policies.modes import Mode
from devops_agent.privacy.guard import MaskedDefinitionsToolset, PrivacyGuard, PrivacyToolset
from devops_agent.tools.registry import ToolCatalog

INSTRUCTIONS = """\
You are DevOps Agent, an operations assistant for platform engineers and SREs.
Investigate by calling tools; never guess what a tool could tell you. Prefer a few targeted
calls over many broad ones, and narrow the scope (time window, path, limit) when results are big.
Every tool returns a JSON object with `status` (success, error, no_data), `data`, `error` and a
`hint`: when a call fails, read the hint and adapt instead of repeating the same call.
Finish with a concise report in Markdown: a summary, findings ranked by severity with the
evidence quoted (tool name and the lines that show it), likely causes, and next steps.
Say plainly what you could not check and why."""


def build_toolset(
    catalog: ToolCatalog,
    mode: Mode,
    middleware: ToolMiddleware,
    *,
    safety: SafetySettings | None = None,
    audit: AuditHook | None = None,
    privacy: PrivacyGuard | None = None,
    extra: Sequence[AbstractToolset[Any]] = (),
) -> AbstractToolset[Any]:
    """All registered tools (and ``extra`` ones, e.g. MCP servers) behind the policy wrappers.

    With a privacy guard the ``extra`` tools' definitions are masked too: an MCP server describes
    its tools in its own words, which may name its hosts and owners."""
    if privacy is not None:
        extra = [MaskedDefinitionsToolset(t, guard=privacy) for t in extra]
    inner = CombinedToolset([*(b.to_pydantic_ai() for b in catalog.toolsets.values()), *extra])
    wrapped: AbstractToolset[Any] = GuardToolset(
        inner, mode=mode, safety=safety or SafetySettings(), audit=audit
    )
    if privacy is not None:
        wrapped = PrivacyToolset(wrapped, guard=privacy)
    return MiddlewareToolset(wrapped, middleware=middleware)


def build_agent(
    model: Model,
    toolset: AbstractToolset[Any],
    *,
    capabilities: list[AbstractCapability[Any]] | None = None,
) -> Agent[None, str | DeferredToolRequests]:
    """The agent; a run ends with text, or with the tool calls that wait for approval."""
    # pydantic-ai prints a first-run banner (a logo and an invitation to set up Logfire) on
    # stderr, into our progress, answers and approval prompts; its package switch turns it off.
    pydantic_ai.BANNER_ENABLED = False
    return Agent(
        model,
        instructions=INSTRUCTIONS,
        toolsets=[toolset],
        capabilities=capabilities or [],
        output_type=[str, DeferredToolRequests],
    )
