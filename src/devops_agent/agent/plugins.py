"""What plugins add to the runbook engine: their analyzers and their folders of runbooks.

Plugins register through one hook, the ``devops_agent.toolsets`` entry points
(:mod:`devops_agent.tools.registry`); the registry only collects what they add. This module hands
the runbook parts of it to the engine: each analyzer into the engine's table (before any runbook
that uses it is parsed, since a runbook naming an unknown analyzer is invalid), and the folders
between the shipped runbooks and the user's ``runbooks.extra_dirs`` (a user's runbook overrides a
plugin's of the same name, as it overrides a shipped one). It must not run tools or analyzers.
"""

from __future__ import annotations

from pathlib import Path

import structlog

from devops_agent.config import Settings
from devops_agent.runbooks import ANALYZERS, Runbook, load_runbooks, register_analyzer
from devops_agent.tools.registry import ToolRegistry, default_registry

log = structlog.get_logger(__name__)


def install_analyzers(registry: ToolRegistry) -> None:
    """Add the plugins' analyzers to the engine's table; a name already taken by another analyzer
    keeps the first one (a plugin cannot replace a built-in analyzer) and is logged."""
    for name, analyzer in registry.analyzers.items():
        taken = ANALYZERS.get(name)
        if taken is analyzer:
            continue
        if taken is not None:
            log.warning("plugin_analyzer_ignored", analyzer=name, reason="the name is taken")
            continue
        register_analyzer(name)(analyzer)


def runbook_dirs(settings: Settings, registry: ToolRegistry) -> list[Path]:
    """The folders runbooks are read from after the shipped ones: the plugins', then the user's."""
    return [*registry.runbook_dirs, *settings.runbooks.extra_dirs]


def available_runbooks(settings: Settings, registry: ToolRegistry | None = None) -> list[Runbook]:
    """Every runbook a run may use: shipped, the plugins', the user's (a later one of the same name
    replaces an earlier one), with the plugins' analyzers installed first."""
    registry = registry or default_registry()
    install_analyzers(registry)
    return load_runbooks(runbook_dirs(settings, registry))
