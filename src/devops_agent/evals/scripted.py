"""Scripted stand-ins for a model, per case, to prove the harness without one (CI).

Both make the same calls: for every recording a tool of ours can ask for, the call that recording
answers (:meth:`~devops_agent.evals.mapping.ToolMapping.inverse`); the case's log files, when it
ships some, through ``logs_errors``; and one probe that no recording answers (so the unmatched
count is exercised on every case). Then:

- the **right** model answers from what it read — the tool results it received, as the scripted
  model quotes them — and states each expected element;
- the **wrong** model says everything is healthy.

A right answer passing and a wrong one failing proves the plumbing (cases, replay, pipeline,
answer, judge, scoring), not any model's skill. This module writes scripts; it runs nothing.
"""

from __future__ import annotations

import json
from typing import Any

from devops_agent.agent.scripted import Script, ScriptedModel, ScriptedToolCall, Turn
from devops_agent.evals.cases import Case
from devops_agent.evals.mapping import ToolMapping

PROBE = ScriptedToolCall(
    tool="k8s_describe",
    args={"kind": "pod", "name": "eval-probe-nothing-recorded", "namespace": "eval-probe"},
)
"""A call no recording answers: every scripted run makes it once, and must count it unmatched."""

WRONG_TEXT = (
    "I checked {tool_count} sources. Everything is healthy: no errors, no restarts, no failing "
    "checks. Nothing needs to be done."
)


def evidence_calls(case: Case, mapping: ToolMapping) -> list[ScriptedToolCall]:
    """The calls of ours that the case's recordings answer (each once), then its log files."""
    calls: dict[str, ScriptedToolCall] = {}
    for recording in case.recordings:
        found = mapping.inverse(recording)
        if found is None:
            continue
        tool, args = found
        calls.setdefault(
            json.dumps([tool, args], sort_keys=True, default=str), ScriptedToolCall(tool=tool, args=args)
        )
    logs = case.inputs.get("logs")
    if logs:
        read: dict[str, Any] = {"paths": list(logs)}
        if case.inputs.get("since"):
            read["since"] = case.inputs["since"]
        calls["logs"] = ScriptedToolCall(tool="logs_errors", args=read)
    return list(calls.values())


def right_text(case: Case) -> str:
    """The right answer: what the tools returned, then every expected element."""
    conclusion = "\n".join(f"- {e}" for e in case.expected)
    return f"What the evidence shows ({{tool_count}} tool results):\n{{results}}\n\nConclusion:\n{conclusion}"


def right_model(case: Case, mapping: ToolMapping) -> ScriptedModel:
    calls = [*evidence_calls(case, mapping), PROBE]
    return ScriptedModel(Script(turns=[Turn(tool_calls=calls), Turn(text=right_text(case))]))


def wrong_model(case: Case, mapping: ToolMapping) -> ScriptedModel:
    calls = [*evidence_calls(case, mapping), PROBE]
    return ScriptedModel(Script(turns=[Turn(tool_calls=calls), Turn(text=WRONG_TEXT)]))
