"""Session modes: ``ask`` offers and runs read-only tools only; ``agent`` allows the rest.

Decided from each tool's :class:`ToolSpec`, never from its name. A tool without a spec (an MCP
or third-party tool that did not declare one) counts as not read-only. The safety guard
(:mod:`devops_agent.policies.guard`) applies this twice: forbidden tools are not offered to the
model, and a call that names one anyway (a hallucinated tool, a replayed history) is refused
with a message the model can act on.
"""

from __future__ import annotations

from typing import Literal

from devops_agent.tools.base import ToolSpec

Mode = Literal["ask", "agent"]
MODES: tuple[Mode, ...] = ("ask", "agent")


def allowed(mode: Mode, spec: ToolSpec | None) -> bool:
    """Whether ``mode`` lets a tool with ``spec`` run without further checks."""
    if mode == "agent":
        return True
    return spec is not None and spec.read_only
