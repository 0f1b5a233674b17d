"""State shared by CLI commands: the loaded settings and the store, created lazily.

Interfaces sit on top of everything; this module is the only place the CLI builds settings,
the store and the session service, so every command gets them the same way.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from devops_agent.config import LoadedSettings, Settings, load_settings
from devops_agent.errors import PathAccessError
from devops_agent.store import Store

out = Console(soft_wrap=True)
"""stdout: reports and --json output only."""
err = Console(stderr=True, soft_wrap=True)
"""stderr: progress, warnings and errors."""


@dataclass
class AppState:
    config_file: Path | None = None
    debug: bool = False
    overrides: dict[str, Any] = field(default_factory=dict)
    _loaded: LoadedSettings | None = None
    _store: Store | None = None

    @property
    def loaded(self) -> LoadedSettings:
        if self._loaded is None:
            self._loaded = load_settings(self.config_file, **self.overrides)
        return self._loaded

    @property
    def settings(self) -> Settings:
        return self.loaded.settings

    def store(self) -> Store:
        if self._store is None:
            self._store = Store.from_settings(self.settings)
        return self._store

    def close(self) -> None:
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
