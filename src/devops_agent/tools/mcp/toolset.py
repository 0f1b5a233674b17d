"""One MCP server's tools as a run sees them: filtered, prefixed, rated, and honest about gaps.

:class:`McpServerToolset` stands in the run's pipeline (as a *foreign* toolset, so the mode filter,
the gate, the privacy guard, the breaker, the output cap and the recorder apply to every call) for a
server of the pool. Each tool definition carries the :class:`ToolSpec` its annotations and the
config give it (:mod:`.rating`), so modes and approvals treat it as they treat ours.

A server that cannot be used is recorded in the run's :class:`GapLog` — the run goes on, and its
report names what could not be checked — and, when it names a fallback, the built-in toolset for
the same intent is offered in its place. This module must not import policies, agents or
interfaces.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog
from fastmcp.exceptions import ToolError as ServerToolError
from mcp.shared.exceptions import MCPError
from pydantic_ai.tools import RunContext, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from devops_agent.errors import McpServerUnavailable
from devops_agent.tools.base import SPEC_KEY, ToolResult
from devops_agent.tools.mcp.rating import Rating, matches, rate

if TYPE_CHECKING:
    from mcp_types import Tool as McpTool

    from devops_agent.tools.mcp.connection import ServerConnection
    from devops_agent.tools.mcp.pool import McpPool

log = structlog.get_logger(__name__)

MCP_KEY = "mcp"
"""Tool metadata key: ``{"server", "tool" (the server's own name), "annotations", "rating"}``."""
_ANY_ARGS = SchemaValidator(core_schema.dict_schema())
"""The server validates its own arguments (its JSON schema is what the model was shown)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(prefix: str, tool: str) -> str:
    """The name a run calls a server's tool by: ``prefix_tool``, with characters model APIs refuse
    in tool names (``.``, ``/``, spaces) turned into ``_``."""
    name = _UNSAFE.sub("_", tool)
    return f"{prefix}_{name}" if prefix else name


@dataclass
class GapLog:
    """What a run could not use of its MCP servers, one entry per server (the first reason)."""

    entries: dict[str, dict[str, Any]] = field(default_factory=dict)

    def note(
        self, server: str, reason: str, *, fallback: str | None = None, fallback_used: bool = False
    ) -> None:
        if server in self.entries:
            return
        if fallback and fallback_used:
            hint = f"the built-in {fallback} tools were offered in its place"
        elif fallback:
            hint = f"the built-in {fallback} tools cover the same ground"
        else:
            hint = "its tools could not be used; `devops-agent mcp list` shows the server's state"
        self.entries[server] = {
            "step": f"mcp/{server}",
            "tool": f"mcp:{server}",
            "reason": f"MCP server {server} was unavailable: {reason}",
            "hint": hint,
        }

    def gaps(self) -> list[dict[str, Any]]:
        return list(self.entries.values())


@dataclass(frozen=True)
class OfferedTool:
    """A server tool as offered: the name a run uses, the server's own name, its rating."""

    name: str
    tool: str
    rating: Rating
    definition: ToolDefinition


def offered_tools(conn: ServerConnection, tools: list[McpTool]) -> list[OfferedTool]:
    """The server's tools after the config's include/exclude globs, named with the prefix (the
    server name unless configured) and rated."""
    s = conn.settings
    prefix = conn.name if s.prefix is None else s.prefix
    prefix = _UNSAFE.sub("_", prefix)
    out: list[OfferedTool] = []
    for t in tools:
        if s.include and not matches(t.name, s.include):
            continue
        if matches(t.name, s.exclude):
            continue
        annotations = t.annotations.model_dump(by_alias=True, exclude_none=True) if t.annotations else None
        rating = rate(conn.name, s, t.name, annotations)
        name = tool_name(prefix, t.name)
        definition = ToolDefinition(
            name=name,
            description=t.description,
            parameters_json_schema=dict(t.input_schema or {"type": "object", "properties": {}}),
            metadata={
                SPEC_KEY: rating.spec.model_dump(),
                MCP_KEY: {
                    "server": conn.name,
                    "tool": t.name,
                    "annotations": annotations,
                    "rating": rating.why,
                },
            },
        )
        out.append(OfferedTool(name, t.name, rating, definition))
    return out


class McpServerToolset(AbstractToolset[Any]):
    """One pooled server's tools for one run (see the module docstring)."""

    def __init__(
        self,
        pool: McpPool,
        conn: ServerConnection,
        *,
        gaps: GapLog | None = None,
        fallback: AbstractToolset[Any] | None = None,
    ) -> None:
        self.pool = pool
        self.conn = conn
        self.gaps = gaps
        self.fallback = fallback

    @property
    def id(self) -> str | None:
        return f"mcp:{self.conn.name}"

    @property
    def label(self) -> str:
        return f"MCP server {self.conn.name!r}"

    def _note(self, fallback_used: bool) -> None:
        if self.gaps is not None:
            self.gaps.note(
                self.conn.name,
                self.conn.error or "not started",
                fallback=self.conn.settings.fallback,
                fallback_used=fallback_used,
            )

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        ready = await self.pool.run(self.conn.ensure())
        if not ready:
            # Its tools stay offered when they are known (a call says the server is down, and its
            # breaker opens); the fallback is offered in their place when there is one.
            self._note(fallback_used=self.fallback is not None)
            if self.fallback is not None:
                return await self.fallback.get_tools(ctx)
        known = self.conn.tools or []
        return {
            t.name: ToolsetTool(
                toolset=self, tool_def=t.definition, max_retries=ctx.max_retries, args_validator=_ANY_ARGS
            )
            for t in offered_tools(self.conn, known)
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        meta = (tool.tool_def.metadata or {}).get(MCP_KEY)
        if meta is None:  # a fallback tool, offered while the server was unavailable
            assert self.fallback is not None, f"{name} is neither the server's nor its fallback's"
            return await self.fallback.call_tool(name, tool_args, ctx, tool)
        try:
            result = await self.pool.run(self.conn.call(meta["tool"], tool_args))
        except McpServerUnavailable:
            self._note(fallback_used=False)
            raise
        except ServerToolError as exc:  # the tool ran and answered with an error: its answer
            return ToolResult.fail(
                f"{name}: {exc}",
                "the MCP server reported this error; check the arguments, or try another tool",
            )
        except MCPError as exc:  # the server refused the request (bad arguments, unknown tool)
            return ToolResult.fail(
                f"{name}: the MCP server refused the call: {exc.message}", "check the arguments"
            )
        return result  # binary parts are described by the pipeline's normalize wrapper


class McpGroupToolset(AbstractToolset[Any]):
    """A run's MCP servers as one toolset, so that a tool name two of them share (or one of ours)
    hides the later tool instead of failing the run: pydantic-ai refuses a toolset whose names
    clash. The first server in config order keeps a name; the clash is logged once."""

    def __init__(self, members: list[McpServerToolset], *, reserved: set[str]) -> None:
        self.members = members
        self.reserved = reserved
        self._warned: set[tuple[str, str]] = set()

    @property
    def id(self) -> str | None:
        return "mcp"

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        listed = await asyncio.gather(*(m.get_tools(ctx) for m in self.members))
        out: dict[str, ToolsetTool[Any]] = {}
        for member, tools in zip(self.members, listed, strict=True):
            for name, tool in tools.items():
                if name in self.reserved or name in out:
                    key = (member.conn.name, name)
                    if key not in self._warned:
                        self._warned.add(key)
                        log.warning("mcp_tool_name_taken", server=member.conn.name, tool=name)
                    continue
                out[name] = tool
        return out

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        # ``tool.toolset`` is the server's toolset, or its fallback's for a tool offered in its place
        return await tool.toolset.call_tool(name, tool_args, ctx, tool)
