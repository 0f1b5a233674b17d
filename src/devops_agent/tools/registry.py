"""Plugin discovery: built-in and third-party extensions register through one entry-point hook.

A package exposes ``devops_agent.toolsets`` entry points whose target is
``register(registry: ToolRegistry) -> None``; the function adds what the package brings:

- :meth:`ToolRegistry.add_toolset` — a factory that builds a toolset from the effective
  :class:`Settings`;
- :meth:`ToolRegistry.add_check` — a health check ``devops-agent doctor`` runs;
- :meth:`ToolRegistry.add_analyzer` — a runbook analyzer, by the name runbooks ``use``;
- :meth:`ToolRegistry.add_runbook_dir` — a folder of runbook YAML;
- :meth:`ToolRegistry.add_specialist_dir` / :meth:`ToolRegistry.add_specialist` — specialist
  agents for model runs (a folder of YAML, or one definition as data).

Built-in toolsets use exactly the same hook (see ``pyproject.toml``), so a plugin is a
first-class citizen. A toolset whose optional dependency is missing is reported as unavailable
with the extra to install, instead of failing the whole registry. This module only collects:
it must not import the runbook engine or the agent (they read the registry).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from difflib import get_close_matches
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import structlog

from devops_agent.config import Settings
from devops_agent.errors import ConfigError, NotFoundError
from devops_agent.tools.base import ToolEntry, ToolsetBuilder

ENTRY_POINT_GROUP = "devops_agent.toolsets"

ToolsetFactory = Callable[[Settings], ToolsetBuilder]
HealthProbe = Callable[[Settings], tuple[bool, str]]
"""A health check: ``(ok, what it found)``; it reports failures in the message, it does not raise."""

log = structlog.get_logger(__name__)


@dataclass
class ToolsetInfo:
    name: str
    factory: ToolsetFactory
    description: str = ""
    extra: str | None = None


@dataclass
class Unavailable:
    name: str
    reason: str


def _always(_settings: Settings) -> bool:
    return True


@dataclass
class HealthCheck:
    """A check ``doctor`` runs when ``configured(settings)`` says the user set the thing up."""

    name: str
    run: HealthProbe
    configured: Callable[[Settings], bool] = _always
    required: bool = True
    """Whether a failure fails ``doctor``; ``False``: it only warns (an optional service)."""
    extra: str | None = None


@dataclass
class ToolRegistry:
    """Known toolsets by name; :meth:`build` turns them into tools for one set of settings."""

    toolsets: dict[str, ToolsetInfo] = field(default_factory=dict)
    unavailable: list[Unavailable] = field(default_factory=list)
    checks: dict[str, HealthCheck] = field(default_factory=dict)
    analyzers: dict[str, Callable[..., Any]] = field(default_factory=dict)
    """Runbook analyzers by name; the runbook engine's contract (``runbooks.analyzers.base``)."""
    runbook_dirs: list[Path] = field(default_factory=list)
    specialist_dirs: list[Path] = field(default_factory=list)
    specialists: list[dict[str, Any]] = field(default_factory=list)
    """Specialist definitions as data (name, description, instructions, toolsets, tools,
    mcp_profiles); the agent validates them (``agent.reasoning.specialists``)."""

    def add_toolset(
        self, name: str, factory: ToolsetFactory, description: str = "", extra: str | None = None
    ) -> None:
        """Register a toolset. ``extra`` names the pip extra its dependencies come from."""
        if name in self.toolsets:
            raise ValueError(f"toolset {name!r} is registered twice")
        self.toolsets[name] = ToolsetInfo(name, factory, description, extra)

    def add_check(
        self,
        name: str,
        run: HealthProbe,
        *,
        configured: Callable[[Settings], bool] = _always,
        required: bool = True,
        extra: str | None = None,
    ) -> None:
        """Register a health check; ``configured`` says when it applies, ``extra`` what to install
        when ``run`` raises ``ImportError``."""
        if name in self.checks:
            raise ValueError(f"check {name!r} is registered twice")
        self.checks[name] = HealthCheck(name, run, configured, required, extra)

    def add_analyzer(self, name: str, analyzer: Callable[..., Any]) -> None:
        """Register a runbook analyzer under the name runbooks ``use`` (see docs/plugins.md)."""
        if name in self.analyzers:
            raise ValueError(f"analyzer {name!r} is registered twice")
        self.analyzers[name] = analyzer

    def add_runbook_dir(self, path: Path | str) -> None:
        """Register a folder of runbook YAML; the user's ``runbooks.extra_dirs`` override it."""
        self.runbook_dirs.append(Path(path))

    def add_specialist_dir(self, path: Path | str) -> None:
        """Register a folder of specialist YAML; the user's ``agent.specialist_dirs`` override it."""
        self.specialist_dirs.append(Path(path))

    def add_specialist(self, definition: Mapping[str, Any]) -> None:
        """Register one specialist defined as data (the fields of a specialist YAML)."""
        self.specialists.append(dict(definition))

    def load_entry_points(self) -> ToolRegistry:
        """Call every ``devops_agent.toolsets`` entry point's register function."""
        for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            try:
                register = ep.load()
                register(self)
            except Exception as exc:
                # A broken plugin must not take the agent down; doctor and `tools list` report it.
                self.unavailable.append(Unavailable(ep.name, f"cannot load: {type(exc).__name__}: {exc}"))
                log.warning("toolset_unavailable", toolset=ep.name, error=repr(exc))
        return self

    def build(self, settings: Settings) -> dict[str, ToolsetBuilder]:
        """Instantiate every enabled toolset for ``settings``.

        A name in ``tools.disabled`` that no toolset has is a :class:`ConfigError`: a typo
        (``"shel"``) would otherwise leave the toolset it meant enabled without a word."""
        self.check_disabled(settings.tools.disabled)
        built: dict[str, ToolsetBuilder] = {}
        for name, info in self.toolsets.items():
            if name in settings.tools.disabled:
                continue
            try:
                built[name] = info.factory(settings)
            except ImportError as exc:
                hint = f"pip install 'devops-agent[{info.extra}]'" if info.extra else str(exc)
                self.unavailable.append(Unavailable(name, f"missing dependency ({hint})"))
        return built

    def check_disabled(self, names: Iterable[str]) -> None:
        """Raise :class:`ConfigError` for the first of ``names`` that is not a known toolset
        (registered, or a plugin that failed to load), naming the known ones."""
        known = set(self.toolsets) | {u.name for u in self.unavailable}
        for name in names:
            if name in known:
                continue
            close = get_close_matches(name, sorted(known), n=1)
            guess = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(
                f"tools.disabled names {name!r}, which is not a toolset",
                hint=f"{guess}the toolsets are: {', '.join(sorted(known))}",
            )


def default_registry() -> ToolRegistry:
    """A registry with every installed toolset (built-in and plugins)."""
    return ToolRegistry().load_entry_points()


@dataclass
class ToolCatalog:
    """Every tool of the built toolsets, by tool name; ``registry`` is what they were built from
    (with the plugins' analyzers and runbook folders)."""

    toolsets: dict[str, ToolsetBuilder]
    registry: ToolRegistry = field(default_factory=ToolRegistry)

    @property
    def entries(self) -> dict[str, ToolEntry]:
        out: dict[str, ToolEntry] = {}
        for ts in self.toolsets.values():
            out.update(ts.entries)
        return out

    def get(self, name: str) -> ToolEntry:
        try:
            return self.entries[name]
        except KeyError:
            raise NotFoundError(
                f"unknown tool {name!r}", hint="`devops-agent tools list` shows the available tools"
            ) from None


def build_catalog(settings: Settings, registry: ToolRegistry | None = None) -> ToolCatalog:
    """The tools of every enabled toolset of ``registry`` (default: the installed ones)."""
    registry = registry or default_registry()
    return ToolCatalog(registry.build(settings), registry)
