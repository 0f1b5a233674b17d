"""Replayed tools: our whole tool catalog, answered from a case's recordings.

:func:`replay_registry` builds a :class:`~devops_agent.tools.registry.ToolRegistry` that holds, for
every toolset of the real registry, a toolset of the same name whose tools have the same names,
schemas, descriptions and :class:`~devops_agent.tools.base.ToolSpec` (so modes, approvals,
privacy, caps, breakers and telemetry apply exactly as to the real ones), but whose bodies ask a
:class:`ReplayBook` instead of a cluster. A session service built on that registry runs the model
loop, the runbooks or any later runner unchanged; nothing here wraps or bypasses the pipeline.

Each run of a case gets its own book (the library finds it by the run's session id): the book
answers each call with the mapping (:mod:`devops_agent.evals.mapping`), and a call no recording
matches gets what HolmesGPT's harness gives an unmocked call — ``no_data`` and nothing else — and
is counted. The plugins' analyzers and runbook folders are carried over; no real tool ever runs.
"""

from __future__ import annotations

import inspect
import threading
import typing
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic_ai import RunContext

from devops_agent.config import Settings
from devops_agent.deps import ToolDeps
from devops_agent.evals.mapping import ToolMapping
from devops_agent.evals.recordings import Recording
from devops_agent.evals.shapes import replayed
from devops_agent.tools.base import ToolEntry, ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry


@dataclass
class ReplayCall:
    """One call a replayed tool answered: what was asked, and which recording answered it."""

    tool: str
    args: dict[str, Any]
    matched: bool
    status: str
    recording: str | None = None
    recorded_tool: str | None = None
    approximate: bool = False
    reason: str | None = None
    """Why nothing matched: ``no mapping`` (no recorded tool answers this tool of ours) or
    ``no recording`` (the mapped tools were recorded with other parameters)."""

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in (None, False) or k == "matched"}


@dataclass
class ReplayBook:
    """One run's recordings and the calls answered from them."""

    recordings: Sequence[Recording]
    mapping: ToolMapping
    settings: Settings
    calls: list[ReplayCall] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, tool: str, args: dict[str, Any]) -> ToolResult:
        """The replayed result of ``tool(**args)``; an unmatched call is ``no_data``, counted."""
        filled = self.mapping.filled(tool, args, self.settings)
        match = self.mapping.answer(tool, filled, self.recordings)
        if match is None:
            reason = "no recording" if tool in self.mapping.tools else "no mapping"
            self._log(ReplayCall(tool, dict(args), False, "no_data", reason=reason))
            # HolmesGPT answers an unmocked call with NO_DATA and nothing else; so does the replay.
            return ToolResult(status="no_data")
        result = replayed(match, filled)
        rec = match.recording
        self._log(ReplayCall(tool, dict(args), True, result.status, rec.file, rec.tool, match.approximate))
        return result

    def _log(self, call: ReplayCall) -> None:
        with self._lock:
            self.calls.append(call)

    @property
    def unmatched(self) -> int:
        return sum(1 for c in self.calls if not c.matched)


class ReplayLibrary:
    """The books of the runs in flight, by session id (a run's tools find theirs through
    ``ctx.deps.session_id``, so one registry serves every case at once)."""

    def __init__(self, mapping: ToolMapping, settings: Settings) -> None:
        self.mapping = mapping
        self.settings = settings
        self._books: dict[str, ReplayBook] = {}
        self._lock = threading.Lock()

    def open(self, session_id: str, recordings: Sequence[Recording]) -> ReplayBook:
        book = ReplayBook(recordings, self.mapping, self.settings)
        with self._lock:
            self._books[session_id] = book
        return book

    def close(self, session_id: str) -> None:
        with self._lock:
            self._books.pop(session_id, None)

    def answer(self, deps: ToolDeps, tool: str, args: dict[str, Any]) -> ToolResult:
        with self._lock:
            book = self._books.get(deps.session_id or "")
        if book is None:  # a programming error of the harness, told to the caller like any failure
            return ToolResult.fail(f"no recordings are open for session {deps.session_id}")
        return book.answer(tool, args)


_CTX = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=RunContext[ToolDeps])


def mirror(
    entry: ToolEntry, answer: Callable[[ToolDeps, str, dict[str, Any]], ToolResult]
) -> Callable[..., Any]:
    """A function with ``entry``'s name, parameters (types resolved), docstring and return type,
    whose body hands its arguments to ``answer``. Its first parameter is the run's context (the
    original's, or added), through which the book is found."""
    fn = entry.function
    hints = typing.get_type_hints(fn, include_extras=True)
    params = list(inspect.signature(fn).parameters.values())
    if params and params[0].name == "ctx":
        params = params[1:]
    resolved = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in params]
    names = [p.name for p in resolved]

    def replay(ctx: RunContext[ToolDeps], **kwargs: Any) -> ToolResult:
        return answer(ctx.deps, entry.name, {k: kwargs[k] for k in names if k in kwargs})

    replay.__signature__ = inspect.Signature([_CTX, *resolved], return_annotation=ToolResult)  # type: ignore[attr-defined]
    replay.__annotations__ = {"ctx": _CTX.annotation, **{p.name: p.annotation for p in resolved}}
    replay.__annotations__["return"] = ToolResult
    replay.__name__ = replay.__qualname__ = entry.name
    replay.__doc__ = fn.__doc__
    replay.__module__ = __name__
    return replay


def replay_registry(
    library: ReplayLibrary, source: ToolRegistry, settings: Settings, *, live: Sequence[str] = ()
) -> ToolRegistry:
    """A registry whose toolsets mirror those ``source`` builds for ``settings``, answered by
    ``library``; the toolsets named in ``live`` are ``source``'s own (they run for real, within
    the run's settings). ``source``'s analyzers and runbook folders are kept (the runbooks use them)."""
    built = source.build(settings)
    registry = ToolRegistry(
        analyzers=dict(source.analyzers),
        runbook_dirs=list(source.runbook_dirs),
        unavailable=list(source.unavailable),
    )
    for name, builder in built.items():
        if name in live:
            info = source.toolsets[name]
            registry.add_toolset(name, info.factory, description=info.description, extra=info.extra)
            continue
        mirrored = ToolsetBuilder(builder.name, builder.description)
        for entry in builder.entries.values():
            spec = entry.spec
            mirrored.tool(
                category=spec.category,
                read_only=spec.read_only,
                risk=spec.risk,
                name=entry.name,
                command_arg=spec.command_arg,
            )(mirror(entry, library.answer))
        registry.add_toolset(name, _constant(mirrored), description=builder.description)
    return registry


def _constant(builder: ToolsetBuilder) -> Callable[[Settings], ToolsetBuilder]:
    def factory(_settings: Settings) -> ToolsetBuilder:
        return builder

    return factory
