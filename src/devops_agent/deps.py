"""What a tool may ask of the run it serves: ``RunContext[ToolDeps].deps``.

A tool that needs more than its arguments — the settings, the session store, which session and
run it serves — declares a first parameter ``ctx: RunContext[ToolDeps]`` and reads them here,
instead of reaching for globals, contextvars or a ``Store`` of its own. The session service builds
one ``ToolDeps`` per run and both paths (the model loop and the runbooks) pass it, so a tool
behaves the same whichever path calls it. This module is foundation: it must not import tools,
policies, the agent or interfaces.
"""

from __future__ import annotations

from dataclasses import dataclass

from devops_agent.config import Settings
from devops_agent.store import Store


@dataclass(frozen=True)
class ToolDeps:
    """The run-scoped dependencies a tool may use."""

    settings: Settings
    store: Store | None = None
    session_id: str | None = None
    run_id: str | None = None
