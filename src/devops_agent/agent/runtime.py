"""The model loop's runtime: a pydantic-ai ``Agent`` over one run's tool pipeline.

The pipeline (:mod:`devops_agent.policies.pipeline`) decides everything about a tool call; here it
only gets a codec, :class:`ModelResultToolset`, that hands the model each ``ToolResult`` as a JSON
object. This module builds agents; running them, streaming events and persisting is the model
runner's job (:mod:`devops_agent.agent.runners.model`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pydantic_ai
from pydantic_ai import Agent, DeferredToolRequests, WrapperToolset
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.models import Model
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from devops_agent.deps import ToolDeps
from devops_agent.tools.base import ToolResult

INSTRUCTIONS = """\
You are DevOps Agent, an operations assistant for platform engineers and SREs.
Investigate by calling tools; never guess what a tool could tell you. Prefer a few targeted
calls over many broad ones, and narrow the scope (time window, path, limit) when results are big.
Every tool returns a JSON object with `status` (success, error, no_data), `data`, `error` and a
`hint`: when a call fails, read the hint and adapt instead of repeating the same call.
Finish with a concise report in Markdown: a summary, findings ranked by severity with the
evidence quoted (tool name and the lines that show it), likely causes, and next steps.
Say plainly what you could not check and why."""


@dataclass
class ModelResultToolset(WrapperToolset[Any]):
    """What the model reads of a tool call: the pipeline's ``ToolResult`` as a JSON object."""

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        result = await super().call_tool(name, tool_args, ctx, tool)
        if isinstance(result, ToolResult):
            return result.model_dump(mode="json", exclude_none=True)
        return result


_ROLE_RX = re.compile(r"^You are the `([\w.:-]+)` agent of DevOps Agent")


def agent_header(role: str) -> str:
    """The first line of a reasoning agent's instructions: who it is (a specialist ``logs``, the
    ``orchestrator``, the ``critic``, the ``synthesizer``). :func:`role_of` reads it back, so the
    scripted model knows which part of its script an agent plays."""
    return f"You are the `{role}` agent of DevOps Agent."


def role_of(instructions: str | None) -> str | None:
    """The role an agent's instructions name in their first line, ``None`` when they name none."""
    match = _ROLE_RX.match(instructions or "")
    return match.group(1) if match else None


@dataclass
class CitedResultToolset(ModelResultToolset):
    """:class:`ModelResultToolset` with the call's id in each result (``call_id``), so a reasoning
    agent can cite the calls its findings rest on."""

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        result = await super().call_tool(name, tool_args, ctx, tool)
        if isinstance(result, dict) and ctx.tool_call_id:
            return {"call_id": ctx.tool_call_id, **result}
        return result


def build_agent(
    model: Model,
    toolset: AbstractToolset[Any],
    *,
    capabilities: list[AbstractCapability[Any]] | None = None,
) -> Agent[ToolDeps, str | DeferredToolRequests]:
    """The agent over a run's pipeline; a run ends with text, or with the tool calls that wait for
    a person. (Agents with a structured output: ``reasoning.structured.structured_agent``.)"""
    # pydantic-ai prints a first-run banner (a logo and an invitation to set up Logfire) on
    # stderr, into our progress, answers and approval prompts; its package switch turns it off.
    pydantic_ai.BANNER_ENABLED = False
    return Agent(
        model,
        deps_type=ToolDeps,
        instructions=INSTRUCTIONS,
        toolsets=[ModelResultToolset(toolset)],
        capabilities=capabilities or [],
        output_type=[str, DeferredToolRequests],
    )
