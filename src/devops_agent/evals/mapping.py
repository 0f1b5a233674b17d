"""Which recording answers a call to one of our tools: the mapping (data) and how it is applied.

The mapping (``data/holmes_tools.yaml``, or a file given with ``--mapping``) lists, for each of our
tools, the recorded tools that can answer it and how our arguments become their parameters. Its
keys are documented in that file and in docs/evaluation.md. Two directions are derived from it:

- :meth:`ToolMapping.answer` — a call of ours (tool, arguments) → the recording that answers it,
  with the rule upstream applies to its own calls (every recorded key present with an equal value)
  loosened only where the mapping says so (``optional``, ``ignore``, ``compare``);
- :meth:`ToolMapping.inverse` — a recording → the call of ours it answers (``call``), which the
  scripted models make and the coverage figure counts.

This module decides matches; it neither reads case folders nor runs tools.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from devops_agent.errors import ConfigError
from devops_agent.evals.kubectl import kubectl_fields
from devops_agent.evals.recordings import Recording, same_value
from devops_agent.tools.kubernetes.events import event_kind

Shape = Literal["text", "pod_log"]


def _kind(value: Any) -> Any:
    """kubectl's kind words as one form: ``Pod``, ``pods``, ``po`` → ``pod``; ``pvc`` →
    ``persistentvolumeclaim``."""
    return event_kind(str(value)).lower() if isinstance(value, str) and value else value


def _name_part(value: Any) -> Any:
    """``Kind/name`` → ``name`` (a bare name stays)."""
    return str(value).rpartition("/")[2] or None if isinstance(value, str) else value


def _kind_part(value: Any) -> Any:
    """``Kind/name`` → the kind in one form; a bare name has none (``None``)."""
    if not isinstance(value, str) or "/" not in value:
        return None
    return _kind(value.rpartition("/")[0]) or None


FILTERS: dict[str, Callable[[Any], Any]] = {
    "kind": _kind_part,
    "name": _name_part,
    "lower": lambda v: v.lower() if isinstance(v, str) else v,
}
"""Filters a template may apply: ``{involved_object|name}``."""
COMPARERS: dict[str, Callable[[Any], Any]] = {"kind": _kind, "lower": FILTERS["lower"]}
"""Forms a ``compare`` key is brought to on both sides before comparing."""

_WHOLE = re.compile(r"^\{(\w+)(?:\|(\w+))?\}$")
_PART = re.compile(r"\{(\w+)(?:\|(\w+))?\}")


class _Missing:
    """A template whose argument is unset: the parameter is left out."""


MISSING = _Missing()


class Answer(BaseModel):
    """One way a recorded tool answers a tool of ours."""

    model_config = ConfigDict(extra="forbid")

    recorded: str
    when: dict[str, Any] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)
    optional: list[str] = Field(default_factory=list)
    ignore: list[str] = Field(default_factory=list)
    compare: dict[str, Literal["kind", "lower"]] = Field(default_factory=dict)
    accept: dict[str, list[str]] = Field(default_factory=dict)
    call: dict[str, Any] = Field(default_factory=dict)
    shape: Shape = "text"


class ToolMap(BaseModel):
    model_config = ConfigDict(extra="forbid")

    derive: Literal["kubectl"] | None = None
    """Read more arguments out of one: ``kubectl`` parses a command line (``derive_from``)."""
    derive_from: str = "command"
    fill: dict[str, str] = Field(default_factory=dict)
    answers: list[Answer]


class MappingFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1]
    tools: dict[str, ToolMap]
    unmapped: dict[str, str] = Field(default_factory=dict)


def render(template: Any, values: Mapping[str, Any]) -> Any:
    """``template`` with ``values``: ``"{x}"`` is ``values[x]`` as it is (an int stays an int),
    ``"{x|f}"`` goes through filter ``f``, a longer string is formatted; :data:`MISSING` when a
    value it needs is unset. A non-string template is a constant."""
    if not isinstance(template, str):
        return template
    whole = _WHOLE.match(template)
    if whole:
        return _value(whole.group(1), whole.group(2), values)
    missing = False

    def part(m: re.Match[str]) -> str:
        nonlocal missing
        v = _value(m.group(1), m.group(2), values)
        if v is MISSING:
            missing = True
            return ""
        return str(v)

    text = _PART.sub(part, template)
    return MISSING if missing else text


def _value(key: str, filt: str | None, values: Mapping[str, Any]) -> Any:
    v = values.get(key)
    if v is not None and filt:
        v = FILTERS[filt](v)
    return MISSING if v is None or v == "" else v


@dataclass(frozen=True)
class Match:
    """The recording that answers a call, and how."""

    recording: Recording
    answer: Answer
    params: dict[str, Any]
    """The recorded tool's parameters our call became."""
    approximate: bool
    """Parameters the mapping ignores (a limit, a filter) were set on the recording."""


class ToolMapping:
    """The mapping file, applied."""

    def __init__(self, data: MappingFile, source: str) -> None:
        self.data = data
        self.source = source

    @classmethod
    def load(cls, path: Path | None = None) -> ToolMapping:
        """The shipped mapping, or the file at ``path``; an invalid one is a :class:`ConfigError`."""
        where = str(path) if path else "the shipped mapping (evals/data/holmes_tools.yaml)"
        try:
            if path is None:
                text = resources.files("devops_agent.evals").joinpath("data/holmes_tools.yaml").read_text()
            else:
                text = path.read_text()
            return cls(MappingFile.model_validate(yaml.safe_load(text) or {}), where)
        except OSError as exc:
            raise ConfigError(f"cannot read the tool mapping {where}: {exc.strerror}") from exc
        except yaml.YAMLError as exc:
            raise ConfigError(f"the tool mapping {where} is not YAML: {exc}") from exc
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise ConfigError(
                f"invalid tool mapping {where}: {loc}: {first['msg']}", hint="see docs/evaluation.md"
            ) from exc

    @property
    def tools(self) -> dict[str, ToolMap]:
        return self.data.tools

    def filled(self, tool: str, args: Mapping[str, Any], settings: Any) -> dict[str, Any]:
        """``args`` with what the mapping derives from them (a kubectl command's fields), then the
        unset ones it fills from the settings (``kubernetes.namespace``)."""
        spec = self.tools.get(tool)
        out = _derived(spec, args) if spec else dict(args)
        for key, path in (spec.fill if spec else {}).items():
            if out.get(key) is None:
                value: Any = settings
                for part in path.split("."):
                    value = getattr(value, part, None)
                out[key] = value
        return out

    def answer(self, tool: str, args: Mapping[str, Any], recordings: Sequence[Recording]) -> Match | None:
        """The recording that answers ``tool(**args)`` (arguments already filled), or ``None``.

        Candidates are tried in the mapping's order; within one, the recording with the fewest
        ignored parameters set wins (the broadest), then file order.
        """
        spec = self.tools.get(tool)
        if spec is None:
            return None
        args = _derived(spec, args)
        for answer in spec.answers:
            if not all(_same_arg(args.get(k), v) for k, v in answer.when.items()):
                continue
            params = {k: v for k, tmpl in answer.params.items() if (v := render(tmpl, args)) is not MISSING}
            found = [r for r in recordings if self._matches(answer, r, params)]
            if found:
                best = min(found, key=lambda r: _ignored(answer, r))
                return Match(best, answer, params, approximate=_ignored(answer, best) > 0)
        return None

    def inverse(self, recording: Recording) -> tuple[str, dict[str, Any]] | None:
        """The call of ours (tool, arguments) that ``recording`` answers, or ``None`` when no tool
        of ours can ask for it (its tool is unmapped, or its kind is one we cannot name)."""
        values = recording.match_params or {}
        for tool, spec in self.tools.items():
            for answer in spec.answers:
                if answer.recorded != recording.tool or not _accepted(answer, recording):
                    continue
                args = {k: v for k, tmpl in answer.call.items() if (v := render(tmpl, values)) is not MISSING}
                # The call must lead back to this recording (another candidate's keys may fit better).
                if self.answer(tool, args, [recording]) is not None:
                    return tool, args
        return None

    def reachable(self, recording: Recording) -> bool:
        """Whether some call of ours can be answered with ``recording``."""
        return self.inverse(recording) is not None

    def _matches(self, answer: Answer, recording: Recording, params: Mapping[str, Any]) -> bool:
        if recording.tool != answer.recorded or not _accepted(answer, recording):
            return False
        for key, recorded in (recording.match_params or {}).items():
            if key in answer.ignore:
                continue
            if key not in params:
                if recorded is None or key in answer.optional:
                    continue
                return False
            compare = COMPARERS.get(answer.compare.get(key, ""), lambda v: v)
            if not same_value(compare(recorded), compare(params[key])):
                return False
        return True


DERIVERS: dict[str, Callable[[Any], dict[str, Any]]] = {"kubectl": kubectl_fields}


def _derived(spec: ToolMap, args: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` and what ``spec.derive`` reads out of one of them (given arguments win)."""
    if spec.derive is None:
        return dict(args)
    return {
        **DERIVERS[spec.derive](args.get(spec.derive_from)),
        **{k: v for k, v in args.items() if v is not None},
    }


def _same_arg(given: Any, wanted: Any) -> bool:
    return given is None if wanted is None else same_value(wanted, given)


def _accepted(answer: Answer, recording: Recording) -> bool:
    values = recording.match_params or {}
    for key, allowed in answer.accept.items():
        if key not in values:
            continue
        compare = COMPARERS.get(answer.compare.get(key, ""), lambda v: v)
        if compare(values[key]) not in {compare(a) for a in allowed}:
            return False
    return True


def _ignored(answer: Answer, recording: Recording) -> int:
    values = recording.match_params or {}
    return sum(1 for k in answer.ignore if values.get(k) not in (None, ""))
