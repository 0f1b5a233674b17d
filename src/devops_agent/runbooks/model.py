"""The runbook schema: what a runbook YAML file may contain, validated strictly.

Unknown keys are errors, analyzers must be registered, analyzer ``on:`` must name steps of the
same runbook, and every ``{{ placeholder }}`` must name a declared input or one of the
:data:`STANDARD_INPUTS`. Tool names are *not* checked here: toolsets are pluggable and may be
disabled, so an unknown tool becomes a gap at run time rather than a load failure.

This module must not run anything: no tools, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from devops_agent.runbooks.analyzers import ANALYZERS
from devops_agent.runbooks.templating import TemplateError, is_empty, template_names

STANDARD_INPUTS = ("question", "logs", "repo", "since", "until", "query")
"""Inputs every runbook may reference without declaring them (from the question and the CLI)."""

_NAME = r"^[a-z0-9][a-z0-9_-]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunbookInput(_Strict):
    """A value the runbook reads from the request; ``default`` applies when it is empty."""

    description: str = ""
    required: bool = False
    default: Any = None


class Step(_Strict):
    """One tool call. ``args`` are templated; ``when`` skips the step if that input is empty;
    ``fallback_for`` runs it only when that other step of the runbook gathered nothing (it
    failed or returned no data), e.g. reading /var/log when the host has no journal."""

    id: str = Field(pattern=_NAME)
    tool: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    when: str | None = None
    fallback_for: str | None = None
    description: str = ""


class AnalyzerUse(_Strict):
    """Run analyzer ``use`` over the results of steps ``on`` with ``params``.

    An entry ``runbook/step`` names another runbook's step: its result joins the evidence when
    that runbook ran in the same investigation (the commits are lined up with the first error of
    log-errors), and is simply absent when it did not.
    """

    use: str
    on: list[str] = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)

    @field_validator("use")
    @classmethod
    def _registered(cls, value: str) -> str:
        if value not in ANALYZERS:
            raise ValueError(f"unknown analyzer {value!r}; known: {', '.join(sorted(ANALYZERS))}")
        return value


class ReportSpec(_Strict):
    title: str


class Runbook(_Strict):
    """A named, data-only investigation: steps to gather evidence, analyzers, static advice."""

    name: str = Field(pattern=_NAME)
    title: str
    description: str = ""
    keywords: list[str] = Field(default_factory=list)
    inputs: dict[str, RunbookInput] = Field(default_factory=dict)
    steps: list[Step] = Field(min_length=1)
    analyzers: list[AnalyzerUse] = Field(default_factory=list)
    next_steps: list[str] = Field(default_factory=list)
    report: ReportSpec | None = None

    _source: str = PrivateAttr(default="")

    @property
    def source(self) -> str:
        """Where the runbook was loaded from (``package`` or a file path)."""
        return self._source

    def with_source(self, source: str) -> Runbook:
        """Record where this runbook came from; returns ``self``."""
        self._source = source
        return self

    @property
    def report_title(self) -> str:
        """The (still templated) title of this runbook's report."""
        return self.report.title if self.report else self.title

    @model_validator(mode="after")
    def _check_references(self) -> Runbook:
        known = set(STANDARD_INPUTS) | set(self.inputs)
        ids = [step.id for step in self.steps]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            second = next(n for n, i in enumerate(ids) if i in ids[:n])  # where the file goes wrong
            raise ValueError(f"steps[{second}].id: duplicate step ids: {', '.join(dupes)}")
        for i, step in enumerate(self.steps):
            if step.when is not None and step.when not in known:
                raise ValueError(f"steps[{i}].when: unknown input {step.when!r}; declare it under inputs")
            if step.fallback_for is not None and step.fallback_for not in ids[:i]:
                raise ValueError(
                    f"steps[{i}].fallback_for: {step.fallback_for!r} is not a step before this one"
                )
            _check_templates(f"steps[{i}].args", step.args, known)
        _check_templates("report.title", self.report_title, known)
        for i, use in enumerate(self.analyzers):
            missing = [s for s in use.on if "/" not in s and s not in ids]
            if missing:
                raise ValueError(f"analyzers[{i}].on: unknown step(s) {', '.join(missing)}")
        return self

    def context(self, inputs: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """Template values for this runbook and the names of required inputs that are missing.

        Every given input is passed through; the standard inputs default to ``None``; a declared
        input that is empty takes its ``default``.
        """
        values: dict[str, Any] = dict.fromkeys(STANDARD_INPUTS)
        values.update(inputs)
        missing: list[str] = []
        for name, spec in self.inputs.items():
            if is_empty(values.get(name)):
                values[name] = spec.default
                if spec.required and is_empty(spec.default):
                    missing.append(name)
        return values, missing


def _check_templates(where: str, value: Any, known: set[str]) -> None:
    # Raised as ValueError: pydantic only turns ValueError into a validation error with a location.
    try:
        unknown = template_names(value) - known
    except TemplateError as exc:
        raise ValueError(f"{where}: {exc.message}") from None
    if unknown:
        raise ValueError(f"{where}: unknown template value(s) {', '.join(sorted(unknown))}")
