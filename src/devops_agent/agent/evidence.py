"""Semantic checks of a model's structured answer against the evidence of the investigation.

A schema says an answer is well-formed; these say it is *true to the run*. A field of an output
model declares what it refers to with a marker in its ``Annotated`` type:

* ``Annotated[str, Ref("call_id")]`` — the value must be a tool call id of the run (or a file,
  namespace, id … — any kind :class:`Evidence` knows: ``Evidence.refs[kind]``);
* ``Annotated[str, SafeCommand()]`` — the command must pass the safety classifier (read-only by
  default; ``SafeCommand("mutating")`` allows a change a person will approve; destructive never);
* ``Annotated[datetime | str, InWindow()]`` — the time must parse and lie in the investigation's
  window (with ``slack``).

Markers work at any depth (nested models, lists, optionals). :func:`check` returns one line per
problem, naming the field path and what is wrong in words a model can act on. It never raises
for a bad answer. This module must not import interfaces.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart

from devops_agent.analysis.timeparse import extract_timestamp
from devops_agent.safety.classifier import classify
from devops_agent.safety.commands.base import Level

LEVEL_ORDER: dict[str, int] = {"read_only": 0, "mutating": 1, "unknown": 2, "destructive": 3}
MAX_KNOWN_SHOWN = 12


@dataclass(frozen=True)
class Ref:
    """The field's value must be one of the evidence's ``kind`` references."""

    kind: str


@dataclass(frozen=True)
class SafeCommand:
    """The field holds a shell command that must be rated at most ``max_level``."""

    max_level: Literal["read_only", "mutating"] = "read_only"


@dataclass(frozen=True)
class InWindow:
    """The field holds a time that must lie in the evidence's window (± ``slack``)."""

    slack: timedelta = timedelta(minutes=5)


@dataclass
class Evidence:
    """What the run saw: references by kind, its time window, the classifier's trusted dirs."""

    refs: dict[str, set[str]] = field(default_factory=dict)
    window: tuple[datetime, datetime] | None = None
    trusted_dirs: Sequence[str] = ("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin")

    def add(self, kind: str, values: Iterable[str]) -> Evidence:
        self.refs.setdefault(kind, set()).update(v for v in values if v)
        return self

    @classmethod
    def from_messages(
        cls, messages: Iterable[ModelMessage], window: tuple[datetime, datetime] | None = None
    ) -> Evidence:
        """Call ids of the run's tool calls, and the files and namespaces their arguments named."""
        ev = cls(window=window)
        for m in messages:
            if not isinstance(m, ModelResponse):
                continue
            for p in m.parts:
                if isinstance(p, ToolCallPart):
                    ev.add("call_id", [p.tool_call_id])
                    ev.add("tool", [p.tool_name])
                    args = p.args_as_dict()
                    ev.add(
                        "file",
                        [
                            str(v)
                            for k, v in args.items()
                            if k in ("path", "file", "paths") and isinstance(v, str)
                        ],
                    )
                    ev.add(
                        "namespace",
                        [str(args["namespace"])] if isinstance(args.get("namespace"), str) else [],
                    )
        return ev


def check(value: BaseModel, evidence: Evidence) -> list[str]:
    """Every semantic problem of ``value``; empty when it is true to the evidence."""
    problems: list[str] = []
    _walk(type(value), value, "", evidence, problems)
    return problems


def _markers(annotation: Any) -> tuple[Any, list[Any]]:
    """``(inner type, markers)`` of an ``Annotated`` type."""
    if get_origin(annotation) is Annotated:
        inner, *meta = get_args(annotation)
        return inner, [m for m in meta if isinstance(m, Ref | SafeCommand | InWindow)]
    return annotation, []


def _walk(annotation: Any, value: Any, path: str, ev: Evidence, problems: list[str]) -> None:
    if value is None:
        return
    annotation, markers = _markers(annotation)
    for marker in markers:
        problem = _judge(marker, value, path or "the answer", ev)
        if problem:
            problems.append(problem)
    if isinstance(value, BaseModel):
        hints = typing.get_type_hints(type(value), include_extras=True)
        for name in type(value).model_fields:
            _walk(
                hints.get(name, Any), getattr(value, name), f"{path}.{name}" if path else name, ev, problems
            )
        return
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin in (Union, types.UnionType):
        for arg in args:
            inner, inner_markers = _markers(arg)
            if inner_markers or _accepts(inner, value):
                _walk(arg, value, path, ev, problems)
                return
        return
    if isinstance(value, list | tuple | set) and args:
        for i, item in enumerate(value):
            _walk(args[0], item, f"{path}[{i}]", ev, problems)
    elif isinstance(value, dict) and len(args) == 2:
        for k, item in value.items():
            _walk(args[1], item, f"{path}[{k!r}]", ev, problems)


def _accepts(annotation: Any, value: Any) -> bool:
    base = get_origin(annotation) or annotation
    return isinstance(base, type) and isinstance(value, base)


def _judge(marker: Any, value: Any, path: str, ev: Evidence) -> str | None:
    if isinstance(marker, Ref):
        known = ev.refs.get(marker.kind, set())
        values = value if isinstance(value, list | tuple | set) else [value]
        missing = [str(v) for v in values if str(v) not in known]
        if not missing:
            return None
        shown = ", ".join(sorted(known)[:MAX_KNOWN_SHOWN]) or "none"
        more = f" (and {len(known) - MAX_KNOWN_SHOWN} more)" if len(known) > MAX_KNOWN_SHOWN else ""
        return (
            f"{path}: {', '.join(repr(m) for m in missing)} is not a {marker.kind} of this investigation; "
            f"use one that is: {shown}{more}"
        )
    if isinstance(marker, SafeCommand):
        verdict = classify(str(value), trusted_dirs=ev.trusted_dirs)
        level: Level = verdict.level
        if LEVEL_ORDER[level] <= LEVEL_ORDER[marker.max_level]:
            return None
        allowed = (
            "read-only commands"
            if marker.max_level == "read_only"
            else "commands that change nothing destructive"
        )
        why = "; ".join(verdict.reasons[:2])
        return (
            f"{path}: {str(value)!r} is rated {level} by the safety classifier ({why}); "
            f"only {allowed} may be proposed here"
        )
    if isinstance(marker, InWindow):
        when = value if isinstance(value, datetime) else extract_timestamp(str(value))
        if when is None:
            return (
                f"{path}: {str(value)!r} is not a time; write ISO 8601 with a zone, e.g. 2024-05-01T10:04:00Z"
            )
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        if ev.window is not None:
            start, end = ev.window
            if not (start - marker.slack <= when <= end + marker.slack):
                return (
                    f"{path}: {when.isoformat()} lies outside the investigation window "
                    f"{start.isoformat()} – {end.isoformat()}"
                )
    return None
