"""Classify a proposed shell command as ``read_only``, ``mutating``, ``destructive`` or ``unknown``.

The command is parsed with bashlex (a real bash parser) and every simple command in the tree is
judged (:mod:`devops_agent.safety.walker`): parts of pipelines and lists, subshells and brace
groups, ``$(…)`` and backticks, process substitutions, loop bodies, functions, here-documents
fed to shells, and the strings given to ``sh -c``/``eval``/``ssh`` (parsed again, recursively).
Words are taken the way bash builds them: brace expansion is performed, an expansion the
classifier cannot evaluate exactly is ``unknown``, environment assignments are judged, and the
program is resolved by path (``resolver``: a ``PATH`` string or a ``shutil.which``-like
function; programs outside ``trusted_dirs`` are ``unknown``). Per-program knowledge lives in
:mod:`devops_agent.safety.commands`.

The overall level is the most severe part (``destructive`` > ``unknown`` > ``mutating`` >
``read_only``). :func:`classify` never raises: input that cannot be parsed is ``unknown`` with
``parse_error`` set. This module must not execute anything, and must not import from ``cli/`` or
``agent/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from devops_agent.safety.commands.base import LEVEL_RANK, Level, Verdict, unk, worst
from devops_agent.safety.resolve import DEFAULT_TRUSTED_DIRS, Resolver, as_resolver
from devops_agent.safety.shellwords import preprocess, unquote
from devops_agent.safety.walker import Context, Walker, bashlex_hazard, literal_vars, parse

MAX_LENGTH = 20_000

__all__ = ["Classification", "CommandResult", "classify", "unquote"]


@dataclass(frozen=True)
class CommandResult:
    """One simple command found in the input: its argv (unquoted), level, reason and nesting depth.

    ``depth`` is 0 for commands written at the top level and grows inside ``sh -c``, ``sudo``,
    ``xargs``, ``ssh`` and the like (the wrapper itself is listed too, at the outer depth).
    """

    argv: list[str]
    level: Level
    reason: str
    key: str = ""
    depth: int = 0
    writes: tuple[str, ...] = ()
    """Targets of its write redirections (``> FILE``) that are not harmless sinks like ``/dev/null``."""


@dataclass(frozen=True)
class Classification:
    """The verdict for a whole command line."""

    command: str
    level: Level
    reasons: list[str]
    commands: list[CommandResult] = field(default_factory=list)
    needs_shell: bool = False
    argv: list[str] | None = None
    parse_error: str | None = None

    @property
    def keys(self) -> list[str]:
        """The ``family.action`` keys of the parts at the overall level (used for impact texts)."""
        return [c.key for c in self.commands if c.level == self.level and c.key]


def classify(
    command: str,
    *,
    resolver: Resolver | str | None = None,
    trusted_dirs: Sequence[str] = DEFAULT_TRUSTED_DIRS,
) -> Classification:
    """Classify ``command``; never raises (unparseable input is ``unknown`` with ``parse_error``).

    ``resolver`` says which program a bare name runs: a ``PATH`` string, or a function returning
    the path (``None`` when not found); without one, names are judged as written (a name given
    by a path still has to lie in ``trusted_dirs``).
    """
    try:
        return _classify(command, as_resolver(resolver), tuple(trusted_dirs))
    except Exception as exc:  # noqa: BLE001 - the contract is "never raises"; anything odd is unknown
        return _unparsed(command, f"classifier failed: {type(exc).__name__}: {exc}")


def _unparsed(command: str, error: str) -> Classification:
    return Classification(command, "unknown", [f"cannot be parsed: {error}"], [], True, None, error)


def _classify(command: str, resolver: Resolver | None, trusted: tuple[str, ...]) -> Classification:
    if not isinstance(command, str):
        return _unparsed(repr(command), "not a string")
    if not command.strip():
        return _unparsed(command, "empty command")
    if len(command) > MAX_LENGTH:
        return _unparsed(command, f"longer than {MAX_LENGTH} characters")
    if "\x00" in command:
        return _unparsed(command, "contains a NUL byte")
    hazard = bashlex_hazard(command)
    if hazard:
        return _unparsed(command, hazard)
    try:
        trees = parse(command)
    except Exception as exc:  # noqa: BLE001 - bashlex raises several types, incl. NotImplementedError
        return _unparsed(command, f"{type(exc).__name__}: {exc}")
    source = preprocess(command)
    ctx = Context(resolver, trusted)
    walker = Walker(source, 0, ctx, literal_vars(trees, source))
    verdicts = [v for t in trees if (v := walker.walk(t)) is not None]
    verdicts.extend(walker.extra)
    top = worst(verdicts) or unk("nothing to run", "unknown")
    results = [CommandResult(r.argv, r.level, r.reason, r.key, r.depth, r.writes) for r in ctx.results]
    level = top.level
    top_level = [r for r in results if r.depth == 0]
    reasons = _reasons(top_level, walker.extra, level)
    needs_shell = bool(walker.features) or source != command
    argv: list[str] | None = None
    if not needs_shell and len(trees) == 1 and len(top_level) == 1:
        argv = list(top_level[0].argv)
    return Classification(command, level, reasons, results, needs_shell, argv, None)


def _reasons(results: list[CommandResult], extra: list[Verdict], level: Level) -> list[str]:
    ordered = sorted(
        [(r.level, r.reason) for r in results] + [(v.level, v.reason) for v in extra],
        key=lambda lr: -LEVEL_RANK[lr[0]],
    )
    out: list[str] = []
    for lvl, reason in ordered:
        if (lvl == level or (lvl != "read_only" and level != "read_only")) and reason not in out:
            out.append(reason)
    return out
