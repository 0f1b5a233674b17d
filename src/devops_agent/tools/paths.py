"""Confine file access to the configured roots (``files.roots``).

Every toolset that reads the filesystem on the model's behalf (files, logs, git) resolves the
path it was given through :func:`resolve_in_roots` first. Symlinks and ``..`` are resolved before
the check, so neither can lead outside a root. This module only decides *where* a tool may look;
it must not open, read or list anything itself, and it must not decide whether a path exists —
callers report a missing path in their own words.
"""

from __future__ import annotations

from pathlib import Path

from devops_agent.config import Settings
from devops_agent.errors import PathAccessError

__all__ = ["resolve_in_roots", "roots_of"]


def roots_of(settings: Settings) -> list[Path]:
    """The configured roots as absolute, symlink-free paths (relative roots are taken from the cwd).

    Duplicates are dropped; order is kept, so error messages list roots as configured.
    """
    cwd = Path.cwd()
    roots: list[Path] = []
    for root in settings.files.roots:
        expanded = root.expanduser()
        resolved = (expanded if expanded.is_absolute() else cwd / expanded).resolve()
        if resolved not in roots:
            roots.append(resolved)
    return roots


def resolve_in_roots(path: str, roots: list[Path]) -> Path:
    """Resolve ``path`` (relative paths against the cwd) and check it lies inside one of ``roots``.

    ``roots`` are expected to be resolved already (see :func:`roots_of`). The returned path is
    absolute with symlinks resolved; it may not exist.

    Raises:
        PathAccessError: the path is empty, malformed, or outside every root; the hint lists the
            roots and says how to add one.
    """
    if not path or "\x00" in path:
        raise PathAccessError(f"invalid path {path!r}", hint="give a file or directory path")
    try:
        resolved = Path(path).expanduser().resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: symlink loop on some Pythons
        raise PathAccessError(f"cannot resolve path {path!r}: {exc}", hint="check the path") from exc
    for root in roots:
        if resolved == root or resolved.is_relative_to(root):
            return resolved
    shown = ", ".join(str(r) for r in roots) or "(none configured)"
    via = f" (resolves to {resolved})" if str(resolved) != path else ""
    raise PathAccessError(
        f"path {path!r}{via} is outside the allowed roots",
        hint=(
            f"allowed roots: {shown}. To allow another directory, add it to `files.roots` in "
            "devops-agent.toml or pass the path on the command line."
        ),
        path=str(resolved),
        roots=[str(r) for r in roots],
    )
