"""Structured answers from any model, validated until they are right or clearly refused.

:func:`structured_call` asks the routed model (:mod:`.routing`) for a JSON object of a pydantic
type and passes every answer through, in order:

1. **syntax repair** — the JSON is cut out of prose and code fences; a truncated document is
   *not* completed (its missing end may hold what matters): it is a problem sent back; otherwise
   ``json-repair`` fixes trailing commas, quotes, comments, Python literals;
2. **schema** — the pydantic model;
3. **semantics** — :func:`devops_agent.agent.evidence.check` (referenced calls, files,
   namespaces and ids exist in the evidence; commands pass the safety classifier; times parse and
   lie in the window) and any ``checks`` given;
4. **self-correction** — the exact problems are sent back to the same model, up to ``retries``
   times;
5. **escalation** — then the smart model gets the task (with the fast model's last problems), as
   many tries;
6. **clear failure** — then :class:`StructuredOutputError` with every attempt's problems.

Nothing that failed a check is ever returned. Every request and its outcome is in the router's
ledger (which model did what, and the cost split). Any caller that needs typed output from a
routed model may use this (``benchmarks/structured_output.py`` measures it); the planner,
specialists and critic do not: they are pydantic-ai agents with an output type and checks
(:mod:`devops_agent.agent.reasoning.structured`). It sends the prompt as given: with the
privacy guard on, a caller passes what the guard masked (as the model loop's history is), and
evidence in the same placeholders.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from json_repair import repair_json
from pydantic import BaseModel, ValidationError
from pydantic_ai.direct import model_request
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)

from devops_agent.agent.evidence import Evidence, check
from devops_agent.agent.routing import ModelRouter, Route, Task
from devops_agent.errors import DevOpsAgentError

T = TypeVar("T", bound=BaseModel)
Stage = Literal["request", "parse", "schema", "semantic", "ok"]
SemanticCheck = Callable[[Any, Evidence], list[str]]
MAX_PROBLEMS = 8


@dataclass
class Attempt:
    """One answer and what became of it."""

    role: str
    model: str
    stage: Stage
    problems: list[str] = field(default_factory=list)
    repaired: bool = False
    raw: str = ""


@dataclass
class StructuredResult(Generic[T]):
    value: T
    outcome: Literal["first_try", "repaired", "corrected", "escalated"]
    model: str
    attempts: list[Attempt]


class StructuredOutputError(DevOpsAgentError):
    """No model gave a valid answer within its tries."""

    def __init__(self, schema: str, attempts: list[Attempt]) -> None:
        self.attempts = attempts
        last = attempts[-1] if attempts else None
        tried = ", ".join(sorted({f"{a.role} ({a.model})" for a in attempts})) or "no model"
        detail = "; ".join(last.problems[:3]) if last else "no answer"
        super().__init__(
            f"no valid {schema} after {len(attempts)} answers from {tried}: {detail}",
            hint="the models' answers are in the run's events; a larger model.smart may do better",
        )


# -- parse ----------------------------------------------------------------------------------------


def _candidate(text: str) -> str | None:
    """The JSON document in ``text``: a fenced block's content, else from the first ``{``/``[``."""
    if "```" in text:
        inner = text.split("```", 2)[1]
        tag, newline, rest = inner.partition("\n")
        return rest if newline and (not tag.strip() or tag.strip().isalnum()) else inner
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    return text[min(starts) :] if starts else None


def _truncated(doc: str) -> bool:
    """Whether the document ends inside a string or with brackets still open."""
    stack: list[str] = []
    in_string = escaped = False
    quote = previous = ""
    for ch in doc:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                in_string = False
        elif ch == '"' or (ch == "'" and previous in "{[,:"):
            # A single quote opens a string only where a value or key may start (Python-style
            # JSON); elsewhere it is an apostrophe in unquoted text.
            in_string, quote = True, ch
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]":
            if stack:
                stack.pop()
            if not stack:
                return False  # the first complete document ended
        if not ch.isspace():
            previous = ch
    return in_string or bool(stack)


def parse(text: str) -> tuple[Any, bool, list[str]]:
    """``(object, repaired, problems)`` of a model's answer."""
    doc = _candidate(text.strip())
    if doc is None:
        return None, False, ["the answer holds no JSON object; answer with the JSON object only"]
    try:
        return json.loads(doc), False, []
    except ValueError:
        pass
    if _truncated(doc):
        return (
            None,
            False,
            ["the JSON was cut off before it ended; answer again, shorter, with the whole object"],
        )
    repaired = repair_json(doc, return_objects=True)
    if repaired in ("", None) or not isinstance(repaired, dict | list):
        return (
            None,
            False,
            ["the answer is not valid JSON and could not be repaired; answer with the JSON object only"],
        )
    return repaired, True, []


# -- one model's tries ----------------------------------------------------------------------------


def _schema_text(output_type: type[BaseModel]) -> str:
    return json.dumps(output_type.model_json_schema(), separators=(",", ":"))


def _instructions(output_type: type[BaseModel], instructions: str | None) -> str:
    return (
        (instructions + "\n\n" if instructions else "")
        + "Answer with one JSON object only (no prose, no code fence) that follows this JSON schema:\n"
        + _schema_text(output_type)
    )


def _correction(problems: list[str]) -> str:
    listed = "\n".join(f"- {p}" for p in problems[:MAX_PROBLEMS])
    return f"Your answer was not accepted:\n{listed}\nAnswer again with the corrected JSON object only."


def _schema_problems(exc: ValidationError) -> list[str]:
    return [f"{'.'.join(str(p) for p in e['loc']) or 'the object'}: {e['msg']}" for e in exc.errors()]


def judge(
    text: str, output_type: type[T], evidence: Evidence, checks: Sequence[SemanticCheck] = ()
) -> tuple[T | None, Stage, list[str], bool]:
    """``(value, stage reached, problems, repaired)`` of one answer: the value only when valid."""
    obj, repaired, problems = parse(text)
    if problems:
        return None, "parse", problems, repaired
    try:
        value = output_type.model_validate(obj)
    except ValidationError as exc:
        return None, "schema", _schema_problems(exc), repaired
    problems = check(value, evidence)
    for extra in checks:
        problems += extra(value, evidence)
    if problems:
        return None, "semantic", problems, repaired
    return value, "ok", [], repaired


async def _tries(
    router: ModelRouter,
    task: str,
    route: Route,
    messages: list[ModelMessage],
    output_type: type[T],
    evidence: Evidence,
    checks: Sequence[SemanticCheck],
    tries: int,
    attempts: list[Attempt],
) -> T | None:
    for _ in range(tries):
        try:
            response = await model_request(route.model, messages)
        except Exception as exc:  # a failed request is an attempt too; the next model may answer
            router.record(task, route, "error", None)
            attempts.append(Attempt(route.role, route.name, "request", [f"the request failed: {exc}"[:300]]))
            return None
        text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
        value, stage, problems, repaired = judge(text, output_type, evidence, checks)
        router.record(task, route, "ok" if value is not None else "invalid", response)
        attempts.append(Attempt(route.role, route.name, stage, problems, repaired, text[:2000]))
        if value is not None:
            return value
        messages += [response, ModelRequest(parts=[UserPromptPart(_correction(problems))])]
    return None


async def structured_call(
    router: ModelRouter,
    task: Task | str,
    output_type: type[T],
    prompt: str,
    *,
    evidence: Evidence | None = None,
    instructions: str | None = None,
    retries: int = 2,
    checks: Sequence[SemanticCheck] = (),
) -> StructuredResult[T]:
    """A valid ``output_type`` for ``prompt`` (see the module docstring), or
    :class:`StructuredOutputError`."""
    ev = evidence or Evidence()
    attempts: list[Attempt] = []
    route: Route | None = router.route(task)
    system = SystemPromptPart(_instructions(output_type, instructions))
    question = prompt
    escalated = False
    while route is not None:
        messages: list[ModelMessage] = [ModelRequest(parts=[system, UserPromptPart(question)])]
        value = await _tries(router, task, route, messages, output_type, ev, checks, retries + 1, attempts)
        if value is not None:
            mine = [a for a in attempts if a.model == route.name and a.role == route.role]
            outcome: Literal["first_try", "repaired", "corrected", "escalated"] = (
                "escalated"
                if escalated
                else "corrected"
                if len(mine) > 1
                else "repaired"
                if mine[-1].repaired
                else "first_try"
            )
            return StructuredResult(value, outcome, route.name, attempts)
        route = router.escalation(route)
        if route is not None:
            escalated = True
            last = attempts[-1].problems if attempts else []
            question = prompt + (
                "\n\nAnother model answered this before you and was not accepted:\n"
                + "\n".join(f"- {p}" for p in last[:MAX_PROBLEMS])
                if last
                else ""
            )
    raise StructuredOutputError(output_type.__name__, attempts)


def responses_of(router: ModelRouter) -> list[ModelResponse]:
    """The responses the router's models gave (for a run's usage)."""
    return [r for r in router.responses() if isinstance(r, ModelResponse)]
