"""What the orchestrator is told: how to investigate, when to plan, whom to ask, how to answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from devops_agent.agent.reasoning.plan import PlanMode
from devops_agent.agent.reasoning.specialists import Specialist

BASE = """\
You lead an investigation for platform engineers and SREs. Investigate by calling tools; never
guess what a tool could tell you. Prefer a few targeted calls over many broad ones, and narrow
the scope (time window, path, limit) when results are big. Every tool returns JSON with its
`call_id`, `status` (success, error, no_data), `data`, `error` and a `hint`: when a call fails,
read the hint and adapt instead of repeating the same call."""

PLAN = {
    "always": """\
Before anything else, call propose_plan with the goal and the ordered steps; your other tools are
offered once the plan is approved. Its answer is the decision: carry out an approved plan step by
step, revise it when changes are asked, and stop when it is rejected.""",
    "auto": """\
For anything more than a single lookup, and always before a step that changes something, first
call propose_plan with the goal and the ordered steps, and wait for its answer: carry out an
approved plan step by step, and revise it when changes are asked. A plan of one read-only step
runs at once; a plain lookup needs no plan.""",
    "never": "",
}

ANSWER = """\
Finish by calling final_result: `summary`; `findings`, each citing in `citations` the call_id of
every call whose output shows it and quoting in `evidence` the exact lines of that output, with
numbers and times exactly as the output gives them (never computed or rounded); `hypotheses` for
what the evidence suggests but does not prove, with your confidence; `next_steps`; and `gaps`:
what you could not check, and why. A claim no call shows is a hypothesis, not a finding."""


def orchestrator_instructions(
    mode: PlanMode, specialists: Mapping[str, Specialist], work_tools: Mapping[str, Any]
) -> str:
    """The orchestrator's instructions for this run."""
    parts = [BASE]
    if PLAN.get(mode):
        parts.append(PLAN[mode])
    if specialists:
        listed = "\n".join(
            f"- {s.delegate_tool}: {' '.join(s.description.split())}" for s in specialists.values()
        )
        parts.append(
            "Specialists investigate a focused task with their own tools and report findings that cite "
            "their calls; ask several at once when their tasks are independent:\n" + listed
        )
    if work_tools:
        parts.append(
            "The deterministic runbooks and analyzers are tools too ("
            + ", ".join(sorted(work_tools))
            + "): let them compute (error groups, anomalies, change points) and build on their findings."
        )
    parts.append(ANSWER)
    return "\n\n".join(parts)
