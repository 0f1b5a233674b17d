"""Checkpointing as a wrapper: a durable run does each tool call once, even across workers.

With ``execution = "queue"`` a run may be taken over by another worker after the one executing it
died. The run then replays from its start, and this wrapper — just inside the mode filter, so
nothing below it (record, audit, privacy, the tool itself) happens twice — answers every call that
had completed with the result the run saw then, read from the run's checkpoints. A call that had
not completed is made, and its result checkpointed before the run sees it.

A call is known by what it is — the tool, its arguments, and how many identical calls the run made
before it — not by the order calls started: runbooks and triage call tools concurrently, and the
order concurrent calls reach here differs between the first execution and the replay (a recorded
result handed to the wrong call would be worse than no checkpoint at all). Calls that pause or
stop the run (an approval, a halt) raise and are not checkpointed: the gate decides them again.

Where the checkpoints live is the :class:`ToolCheckpoint`'s business (the store, for workers).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic_ai import WrapperToolset
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import ToolsetTool

from devops_agent.tools.base import ToolResult


class ToolCheckpoint(Protocol):
    """A run's checkpoints of completed tool calls."""

    def recorded(self, key: str) -> ToolResult | None:
        """The result a completed call returned, if it completed before."""
        ...

    async def record(self, key: str, result: ToolResult) -> ToolResult:
        """Keep ``result`` for ``key``; return the result that holds (the first one kept wins)."""
        ...


def call_key(name: str, args: dict[str, Any], occurrence: int) -> str:
    """The identity of a call: tool, arguments (canonical JSON), and its occurrence in the run."""
    canonical = json.dumps(args, sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:24]
    return f"tool:{name[:120]}:{digest}:{occurrence}"


@dataclass
class CheckpointToolset(WrapperToolset[Any]):
    """Answers calls that completed before a takeover from their checkpoint; checkpoints the rest."""

    checkpoint: ToolCheckpoint | None = None
    _seen: Counter[tuple[str, str]] = field(default_factory=Counter)

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        if self.checkpoint is None:
            return await super().call_tool(name, tool_args, ctx, tool)
        base = call_key(name, tool_args, 0)
        self._seen[(name, base)] += 1
        key = call_key(name, tool_args, self._seen[(name, base)])
        done = self.checkpoint.recorded(key)
        if done is not None:
            return done
        result = await super().call_tool(name, tool_args, ctx, tool)
        if isinstance(result, ToolResult):
            return await self.checkpoint.record(key, result)
        return result
