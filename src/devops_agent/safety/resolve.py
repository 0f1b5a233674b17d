"""Which program a command name really runs: resolved by path, not trusted by its base name.

A program is looked up in the classifier's tables by name only when it lives in a **system
binary directory** (:data:`DEFAULT_TRUSTED_DIRS`, configurable): writing there needs root, so
``/usr/bin/kubectl`` is kubectl. A name given by a path elsewhere (``./ls``, ``~/bin/kubectl``,
``/tmp/x/cat``) or found through ``PATH`` outside those directories (or through a relative
``PATH`` entry, which depends on the working directory) is a program of unknown behaviour.

A *resolver* maps a bare name to the path that would run (``shutil.which``-like: ``None`` when
not found); :class:`PathResolver` does it for a ``PATH`` string. Must not run anything; it only
looks at the filesystem.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Sequence

DEFAULT_TRUSTED_DIRS: tuple[str, ...] = ("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin")

Resolver = Callable[[str], "str | None"]
"""``name -> path that would run`` (absolute, or relative when found through a relative PATH entry)."""


class PathResolver:
    """Resolves names through a ``PATH`` string like the shell does (first executable file wins)."""

    def __init__(self, path: str) -> None:
        self.entries = path.split(":")

    def __call__(self, name: str) -> str | None:
        for entry in self.entries:
            if not entry or not entry.startswith("/"):
                # The shell looks in the working directory: whatever is there at run time wins.
                return posixpath.join(entry or ".", name)
            candidate = posixpath.join(entry, name)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
        return None


def as_resolver(resolver: Resolver | str | None) -> Resolver | None:
    """A resolver from a callable, a ``PATH`` string, or ``None`` (judge names as written)."""
    if resolver is None or callable(resolver):
        return resolver
    return PathResolver(resolver)


def in_trusted_dir(path: str, trusted: Sequence[str]) -> bool:
    """Whether ``path`` (absolute) names a file directly inside one of the ``trusted`` directories."""
    if not path.startswith("/"):
        return False
    directory = posixpath.dirname(posixpath.normpath(path))
    return any(directory == posixpath.normpath(t) for t in trusted)


def check_program(word: str, resolver: Resolver | None, trusted: Sequence[str]) -> tuple[str, str | None]:
    """``(name, problem)`` for the program word of a command.

    ``name`` is what the tables are consulted with (the base name for a trusted path); ``problem``
    says why the program cannot be judged by its name (``None`` when it can).
    """
    if "/" in word:
        normal = posixpath.normpath(word) if word.startswith("/") else word
        if word.startswith("/") and in_trusted_dir(normal, trusted):
            return posixpath.basename(normal), None
        return posixpath.basename(word), (
            f"{word!r} is a program outside the system binary directories ({', '.join(trusted)}): "
            "its behaviour cannot be known from its name"
        )
    if resolver is None:
        return word, None
    found = resolver(word)
    if found is None:
        return word, None  # not installed: bash fails with "command not found"
    if not in_trusted_dir(found, trusted):
        return word, f"{word!r} resolves to {found}, outside the system binary directories"
    return word, None
