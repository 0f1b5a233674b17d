"""Planning a runbook run: render each step's arguments, skip steps whose inputs are missing, and
merge identical ``(tool, args)`` calls across runbooks into one :class:`PlannedCall`.

Pure and synchronous: this module must not call tools, emit events or run analyzers.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePath
from typing import Any

from devops_agent.report import Gap
from devops_agent.results import ToolResult
from devops_agent.runbooks.model import Runbook, Step
from devops_agent.runbooks.templating import TemplateError, is_empty, render


@dataclass
class PlannedCall:
    """One unique ``(tool, args)`` call and the runbook steps that asked for it."""

    tool: str
    args: dict[str, Any]
    refs: list[tuple[Runbook, Step]] = field(default_factory=list)
    call_id: str = field(default_factory=lambda: f"rb_{uuid.uuid4().hex[:12]}")
    result: ToolResult | None = None
    duration_ms: float = 0.0
    started_at: datetime | None = None
    ended_at: datetime | None = None

    @property
    def fallback_for(self) -> list[str]:
        """``runbook/step`` names whose failure makes this call run; empty when it always runs
        (a call that some step asks for unconditionally always runs)."""
        if any(step.fallback_for is None for _, step in self.refs):
            return []
        return [f"{rb.name}/{step.fallback_for}" for rb, step in self.refs]

    @property
    def step_names(self) -> str:
        return ", ".join(f"{rb.name}/{step.id}" for rb, step in self.refs)

    def label(self) -> str:
        """How the plan shows this call: ``host-health/disk: system_disk_usage()``."""
        args = ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in self.args.items())
        if len(args) > 120:
            args = args[:119] + "…"
        label = f"{self.step_names}: {self.tool}({args})"
        if self.fallback_for:
            label += f" if {' or '.join(self.fallback_for)} gathers nothing"
        return label


@dataclass
class Plan:
    """Every unique call to make, the gaps known before running, and each runbook's template values."""

    calls: list[PlannedCall] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    contexts: dict[str, dict[str, Any]] = field(default_factory=dict)
    steps: int = 0
    skipped: int = 0
    unrenderable: int = 0


def jsonable(value: Any) -> Any:
    """``value`` with paths as strings and tuples/sets as lists, so it can go into events and JSON."""
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    return value


def _input_hint(runbook: Runbook, name: str) -> str:
    spec = runbook.inputs.get(name)
    described = f" ({spec.description})" if spec and spec.description else ""
    return f"give the `{name}` input{described} to gather this"


def plan_runbooks(runbooks: Sequence[Runbook], inputs: Mapping[str, Any]) -> Plan:
    """Render every step's arguments and merge identical calls; skipped steps become gaps."""
    plan = Plan()
    by_key: dict[tuple[str, str], PlannedCall] = {}
    for runbook in runbooks:
        context, missing = runbook.context(inputs)
        plan.contexts[runbook.name] = context
        for step in runbook.steps:
            plan.steps += 1
            where = f"{runbook.name}/{step.id}"
            if missing or (step.when is not None and is_empty(context.get(step.when))):
                name = missing[0] if missing else str(step.when)
                plan.skipped += 1
                reason = f"skipped: input `{name}` was not given"
                plan.gaps.append(
                    Gap(step=where, tool=step.tool, reason=reason, hint=_input_hint(runbook, name))
                )
                continue
            try:
                rendered = jsonable(render(step.args, context))
            except TemplateError as exc:
                plan.unrenderable += 1
                plan.gaps.append(Gap(step=where, tool=step.tool, reason=exc.message, hint=exc.hint))
                continue
            # None means "not given": leave it out so the tool's own default applies.
            args = {k: v for k, v in rendered.items() if v is not None}
            key = (step.tool, json.dumps(args, sort_keys=True, default=str))
            call = by_key.get(key)
            if call is None:
                call = by_key[key] = PlannedCall(step.tool, args)
                plan.calls.append(call)
            call.refs.append((runbook, step))
    return plan
