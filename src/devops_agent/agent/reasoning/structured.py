"""The one place a reasoning agent's structured output is asked for and validated.

Every agent of a reasoning run — orchestrator, specialists, critic, synthesizer — is built by
:func:`structured_agent`: the model answers with the output model as a tool call (pydantic-ai's
structured output), pydantic validates the shape, and the ``checks`` (semantic: every finding
cites a call, a summary is there) turn into a ``ModelRetry`` the model reads and fixes, within
``retries``. A fuller pipeline (JSON repair, escalation to a stronger model) replaces the inside
of this function, not its callers.

It builds agents; it runs none and decides nothing about tools (the pipeline does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pydantic_ai
from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests, ModelRetry, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.models import Model
from pydantic_ai.toolsets import AbstractToolset

from devops_agent.agent.runtime import CitedResultToolset, agent_header
from devops_agent.deps import ToolDeps

T = TypeVar("T", bound=BaseModel)
Check = Callable[[Any], list[str]]
"""A semantic check of an output: the problems the model must fix (empty: none)."""


def structured_agent(
    model: Model,
    output: type[BaseModel],
    *,
    role: str,
    instructions: str,
    pipeline: AbstractToolset[Any] | None = None,
    own_tools: Sequence[AbstractToolset[Any]] = (),
    capabilities: Sequence[AbstractCapability[Any]] = (),
    checks: Sequence[Check] = (),
    allow_text: bool = False,
    deferred: bool = False,
    retries: int = 2,
) -> Agent[ToolDeps, Any]:
    """An agent playing ``role`` that ends with an ``output`` (or text, with ``allow_text``; or the
    calls that wait for a person, with ``deferred``). ``pipeline`` is the run's tool pipeline (the
    model reads each result as JSON, with the call's id to cite); ``own_tools`` the agent's own
    tools (planning, delegation), which reach no data themselves."""
    pydantic_ai.BANNER_ENABLED = False
    types: list[Any] = [output]
    if allow_text:
        types.append(str)
    if deferred:
        types.append(DeferredToolRequests)
    toolsets: list[AbstractToolset[Any]] = [CitedResultToolset(pipeline)] if pipeline is not None else []
    agent: Agent[ToolDeps, Any] = Agent(
        model,
        deps_type=ToolDeps,
        name=role,
        instructions=f"{agent_header(role)}\n{instructions}",
        toolsets=[*toolsets, *own_tools],
        capabilities=list(capabilities),
        output_type=types,
        retries={"output": retries},
    )
    if checks:

        def validate(_ctx: RunContext[ToolDeps], value: Any) -> Any:
            if isinstance(value, output):
                problems = [p for check in checks for p in check(value)]
                if problems:
                    raise ModelRetry("Fix the answer: " + "; ".join(problems))
            return value

        agent.output_validator(validate)
    return agent
