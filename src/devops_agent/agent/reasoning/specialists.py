"""Specialist agents as data: who they are, what they may use, where their definitions come from.

A specialist is YAML (or the same fields registered by a plugin through the
``devops_agent.toolsets`` entry point: :meth:`ToolRegistry.add_specialist_dir` or
:meth:`ToolRegistry.add_specialist`)::

    name: logs
    description: Reads logs ...            # what the orchestrator is told it is for
    instructions: |                        # its own instructions
      ...
    toolsets: [logs]                       # the read-only tools of these toolsets
    tools: [k8s_logs, docker_*]            # and these tools (names or glob patterns)
    mcp_profiles: []                       # the MCP profiles whose servers it may use

Definitions are read in order — shipped (``agent/specialists/*.yaml``), plugins', the user's
``agent.specialist_dirs`` — and a later one replaces an earlier one of the same name. What a
specialist may call is narrower than the run's tools, never wider: its subset goes through the
run's own pipeline, where the mode filter and the gate judge every call. This module loads and
resolves definitions; it builds no agent (:mod:`~devops_agent.agent.reasoning.delegation` does).
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from devops_agent.config import Settings
from devops_agent.errors import ConfigError, NotFoundError
from devops_agent.tools.registry import ToolCatalog, ToolRegistry

DELEGATE_PREFIX = "ask_"
"""The orchestrator delegates to specialist ``logs`` by calling ``ask_logs``."""


class Specialist(BaseModel):
    """One specialist agent's definition."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=40)
    description: str = Field(min_length=1)
    instructions: str = Field(min_length=1)
    toolsets: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    mcp_profiles: list[str] = Field(default_factory=list)
    source: str = Field("", exclude=True, description="where the definition was read from")

    @property
    def delegate_tool(self) -> str:
        return DELEGATE_PREFIX + self.name

    def tool_names(self, catalog: ToolCatalog, extra: Iterable[str] = ()) -> list[str]:
        """The tools it may call among those available: the read-only tools of its toolsets, and
        each tool it names (a glob names only read-only ones; an exact name is taken as it is and
        judged by the mode and the gate like any call). ``extra``: the agent layer's tools
        (``run_runbook``, ``analyze_logs``), which it must name."""
        entries = catalog.entries
        chosen: list[str] = []
        for toolset in self.toolsets:
            builder = catalog.toolsets.get(toolset)
            if builder is not None:
                chosen += [n for n, e in builder.entries.items() if e.spec.read_only]
        names = [*entries, *extra]
        for wanted in self.tools:
            if wanted in names:
                chosen.append(wanted)
                continue
            chosen += [
                n
                for n in names
                if fnmatch.fnmatchcase(n, wanted) and (n not in entries or entries[n].spec.read_only)
            ]
        return list(dict.fromkeys(chosen))


def _parse(data: Any, source: str) -> Specialist:
    if not isinstance(data, Mapping):
        raise ConfigError(f"specialist {source}: expected a mapping of fields", hint="see docs/reasoning.md")
    try:
        return Specialist.model_validate({**data, "source": source})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "definition"
        raise ConfigError(
            f"specialist {source}: {where}: {first['msg']}", hint="see docs/reasoning.md for the fields"
        ) from exc


def _read_dir(path: Path) -> list[Specialist]:
    if not path.is_dir():
        raise ConfigError(f"specialist folder {path} does not exist", hint="check agent.specialist_dirs")
    out = []
    for file in sorted(path.glob("*.yaml")) + sorted(path.glob("*.yml")):
        try:
            data = yaml.safe_load(file.read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read specialist {file}: {exc}") from exc
        out.append(_parse(data, str(file)))
    return out


@functools.cache
def _shipped() -> tuple[Specialist, ...]:
    # Shipped files do not change while the process runs: read once, not on every model run.
    folder = resources.files("devops_agent.agent").joinpath("specialists")
    out = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            out.append(_parse(yaml.safe_load(entry.read_text()), f"shipped:{entry.name}"))
    return tuple(out)


def load_specialists(settings: Settings, registry: ToolRegistry) -> dict[str, Specialist]:
    """Every specialist by name: shipped, the plugins', the user's (a later one replaces an earlier)."""
    found = list(_shipped())
    for folder in registry.specialist_dirs:
        found += _read_dir(folder)
    found += [_parse(d, f"plugin:{d.get('name', '?')}") for d in registry.specialists]
    for folder in settings.agent.specialist_dirs:
        found += _read_dir(folder)
    return {s.name: s for s in found}


def check_names(names: Iterable[str], known: Mapping[str, Specialist]) -> list[str]:
    """``names`` checked against the known specialists; a :class:`NotFoundError` names the known ones."""
    chosen = [n.strip() for n in names if n.strip()]
    for name in chosen:
        if name not in known:
            raise NotFoundError(
                f"unknown specialist {name!r}",
                hint=f"known: {', '.join(sorted(known))} (`devops-agent specialists` lists them)",
            )
    return list(dict.fromkeys(chosen))
