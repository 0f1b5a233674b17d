"""State shared by CLI commands: the loaded settings and the store, created lazily.

Interfaces sit on top of everything; this module is the only place the CLI builds settings,
the store and the session service, so every command gets them the same way.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

from devops_agent.errors import PathAccessError
from devops_agent.textsafe import has_controls, visible, visible_same_length

if TYPE_CHECKING:  # settings and the store load on first use: --help needs neither
    from devops_agent.config import LoadedSettings, Settings
    from devops_agent.store import Store
    from devops_agent.tools.mcp.pool import McpPool


class SafeConsole(Console):
    """A console that shows terminal control characters instead of sending them.

    Everything the CLI prints passes through :meth:`render`, so a log line, a command or a session
    title holding ``ESC[2J`` is shown as ``␛[2J`` wherever it appears (Markdown, tables, prompts,
    progress), without each command having to remember it. Rich's own control segments (cursor
    moves of the progress spinner) and style codes are added after this and are left alone.
    """

    printed = False
    """Whether anything was printed: a --json command that printed its result and then failed
    must not add a second JSON document (the error object) to stdout."""

    def print(self, *objects: Any, **kwargs: Any) -> None:  # noqa: A003 - Console's own name
        self.printed = True
        super().print(*objects, **kwargs)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        # Text is made visible before it is laid out, so that lines wrap at its shown width; what
        # only shows in the segments (or needs more than one character) is made visible there.
        if isinstance(renderable, str) and has_controls(renderable):
            renderable = visible(renderable)
        elif isinstance(renderable, Text) and has_controls(renderable.plain):
            same = visible_same_length(renderable.plain)
            if same is not None:
                renderable = renderable.copy()
                renderable.plain = same
        for segment in super().render(renderable, options):
            if segment.control is None and has_controls(segment.text):
                yield Segment(visible(segment.text), segment.style)
            else:
                yield segment


out = SafeConsole(soft_wrap=True)
"""stdout: reports and --json output only."""
err = SafeConsole(stderr=True, soft_wrap=True)
"""stderr: progress, warnings and errors."""


@dataclass
class AppState:
    config_file: Path | None = None
    debug: bool = False
    overrides: dict[str, Any] = field(default_factory=dict)
    _loaded: LoadedSettings | None = None
    _store: Store | None = None
    _mcp: McpPool | None = None
    _mcp_read: bool = False

    @property
    def loaded(self) -> LoadedSettings:
        if self._loaded is None:
            from devops_agent.config import load_settings

            self._loaded = load_settings(self.config_file, **self.overrides)
        return self._loaded

    @property
    def settings(self) -> Settings:
        return self.loaded.settings

    def store(self) -> Store:
        if self._store is None:
            from devops_agent.store import Store

            self._store = Store.from_settings(self.settings)
        return self._store

    def mcp_pool(self) -> McpPool | None:
        """The configured MCP servers, one pool for the whole command (chat's questions share its
        server processes); ``None`` when none is configured. Nothing starts until it is used."""
        if not self._mcp_read:
            from devops_agent.tools.mcp import pool_for

            self._mcp, self._mcp_read = pool_for(self.settings), True
        return self._mcp

    def close(self) -> None:
        if self._mcp is not None:
            self._mcp.close()
            self._mcp = None
        if self._store is not None:
            self._store.close()
            self._store = None


def state(ctx: typer.Context) -> AppState:
    obj = ctx.find_root().obj
    assert isinstance(obj, AppState)
    return obj


def with_roots(settings: Settings, paths: list[Path]) -> Settings:
    """Settings whose file roots also include ``paths`` (what the user named on the command line)."""
    extra = [p.resolve() if p.is_dir() else p.resolve().parent for p in paths]
    roots = list(dict.fromkeys([*settings.files.roots, *extra]))
    files = settings.files.model_copy(update={"roots": roots})
    return settings.model_copy(update={"files": files})


def is_stream(path: str | Path, param_hint: str) -> bool:
    """Whether an input path is a pipe or character device (process substitution such as
    ``<(kubectl logs …)``, a FIFO), to be read once as a stream rather than as a file.

    A path that does not exist is a bad parameter, one that cannot be looked at a one-line
    access error (exit 2): never a traceback.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise typer.BadParameter(f"path '{path}' does not exist.", param_hint=param_hint) from None
    except OSError as exc:
        raise PathAccessError(
            f"cannot read {path}: {exc.strerror or exc}", hint="check the path and its permissions"
        ) from exc
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)
