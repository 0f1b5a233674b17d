"""The judge: does an answer contain every expected element? The same question HolmesGPT asks.

Upstream scores with a chain-of-thought classifier: the judge model reads the EXPECTED ELEMENTS
and the OUTPUT and picks **A** (all elements present: score 1) or **B** (some or none: score 0),
reasoning first; ``loose`` cases ask whether the output "reasonably matches" instead. Here the
judge is any model our model layer resolves (``openai:gpt-4.1``, ``anthropic:…``, an Ollama or
vLLM endpoint), answering a structured :class:`Verdict` (reasons, then the choice) whose reasons
are kept with the result.

:class:`ScriptedJudge` is the deterministic judge of CI: it picks A only when every expected
element appears in the output word for word (case and spacing aside) — a plumbing check that
the expected elements and the answer reach the judge and its verdict comes back, never a measure
of a model. This module sends only the expected elements and the answer, never a tool output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from devops_agent.agent.models import request_settings, resolve_model
from devops_agent.agent.usage import run_usage
from devops_agent.config.settings import ModelSettings

JudgeType = Literal["strict", "loose"]

STRICT = """\
You are evaluating the correctness of an OUTPUT given by a LLM. You must return a score that
represents the correctness of that OUTPUT.

The correctness is defined by the presence of EXPECTED ELEMENTS in the OUTPUT.
Make a judgement call whether each ELEMENT sufficiently matches the OUTPUT. ELEMENTS do
not need to appear verbatim or be a perfect match but their essence should be
present in the whole OUTPUT, even if it spans multiple sentences.

# EXPECTED ELEMENTS

- {expected}

# OUTPUT

{output}


Return a choice based on the number of EXPECTED ELEMENTS present in the OUTPUT.
Possible choices:
- A: All elements are presents
- B: Either no element is present or only some but not all elements are present
"""
"""Upstream's strict question (``tests/llm/utils/classifiers.py``), worded as it is there, so the
scores are comparable."""

LOOSE = """\
You are evaluating the correctness of an OUTPUT given by a LLM. You must return a score that
represents the correctness of that OUTPUT.

The correctness is defined by the presence of EXPECTED in the OUTPUT.
Make a judgement call whether each ELEMENT sufficiently matches the OUTPUT. ELEMENTS do
not need to appear verbatim or be a perfect match but their essence should be
present in the whole OUTPUT, even if it spans multiple sentences.

# EXPECTED

{expected}

# OUTPUT

{output}


Return a choice based on the number of EXPECTED presence in the OUTPUT.
Possible choices:
- A: The OUTPUT reasonably matches the EXPECTED content
- B: The OUTPUT does not match the EXPECTED content
"""

REASON_FIRST = (
    "Answer by giving your reasoning step by step in `reasons` first, to be sure that your "
    "conclusion is correct, then the single letter of your choice in `choice` (A or B)."
)
"""The chain-of-thought request upstream's classifier adds (it asks for reasons, then a choice)."""


class Verdict(BaseModel):
    """What the judge model answers."""

    reasons: str = Field(description="step-by-step reasoning about each expected element")
    choice: Literal["A", "B"] = Field(description="A: all elements present; B: not all")


class Judgement(BaseModel):
    """A judged answer: the score (1 for A), the reasoning, and what judging cost."""

    model: str
    type: JudgeType
    choice: Literal["A", "B"]
    score: float
    rationale: str
    usage: dict[str, Any] | None = None


def question(expected: list[str], output: str, kind: JudgeType = "strict") -> str:
    """The judge's question for ``expected`` elements and ``output``, as upstream words it."""
    template = LOOSE if kind == "loose" else STRICT
    return template.replace("{expected}", "\n- ".join(expected)).replace("{output}", output)


@dataclass
class Judge:
    """A judge model and its name."""

    model: Model
    name: str
    settings: ModelSettings | None = None

    async def __call__(self, expected: list[str], output: str, kind: JudgeType = "strict") -> Judgement:
        agent = Agent(self.model, output_type=Verdict, instructions=REASON_FIRST)
        extra = request_settings(self.settings) if self.settings is not None else None
        async with agent:
            result = await agent.run(question(expected, output, kind), model_settings=extra)
        verdict = result.output
        return Judgement(
            model=self.name,
            type=kind,
            choice=verdict.choice,
            score=1.0 if verdict.choice == "A" else 0.0,
            rationale=verdict.reasons,
            usage=run_usage(result.all_messages()),
        )


def resolve_judge(name: str, base: ModelSettings | None = None) -> Judge:
    """``scripted`` (CI's deterministic judge) or any ``provider:model`` the model layer knows,
    with the endpoint and key of ``base`` (``evals.judge`` in the settings)."""
    if name == "scripted":
        return Judge(ScriptedJudge(), "scripted")
    settings = (base or ModelSettings()).model_copy(update={"name": name})
    model = resolve_model(settings)
    assert model is not None
    return Judge(model, name, settings)


_NORM = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _NORM.sub(" ", text).strip().lower()


def _between(text: str, start: str, end: str) -> str:
    head, _, rest = text.partition(start)
    return rest.partition(end)[0].strip() if rest else ""


class ScriptedJudge(FunctionModel):
    """A judge for tests: A when every expected element is in the output word for word."""

    def __init__(self) -> None:
        super().__init__(self._judge, model_name="scripted-judge")

    def _judge(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = next(
            p.content
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, UserPromptPart) and isinstance(p.content, str)
        )
        loose = "# EXPECTED ELEMENTS" not in prompt
        if loose:
            elements = [_between(prompt, "# EXPECTED\n", "\n# OUTPUT")]
        else:
            block = _between(prompt, "# EXPECTED ELEMENTS\n", "\n# OUTPUT")
            elements = [e.strip() for e in block.removeprefix("- ").split("\n- ")]
        output = _norm(_between(prompt, "# OUTPUT\n", "\n\nReturn a choice"))
        missing = [e for e in elements if _norm(e) not in output]
        reasons = (
            "every expected element appears in the output"
            if not missing
            else "not in the output: " + "; ".join(m[:80] for m in missing)
        )
        args = {"reasons": reasons, "choice": "B" if missing else "A"}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])
