"""Tool schemas built once per function definition (``tools/schemas.py``)."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from devops_agent.tools.schemas import make_tool


def _closure(tag: str, doc: str = "Echo n.") -> Any:
    def echo(n: int, label: str = "x") -> dict[str, Any]:
        return {"tag": tag, "n": n, "label": label}

    echo.__doc__ = doc
    return echo


def _call(tool: Any, args: dict[str, Any]) -> Any:
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    validated = tool.function_schema.validator.validate_python(args)
    return asyncio.run(tool.function_schema.call(validated, ctx))


def test_a_second_closure_reuses_the_schema_and_calls_its_own_function() -> None:
    first = make_tool(_closure("a"), name="echo_reuse")
    second = make_tool(_closure("b"), name="echo_reuse")
    assert second.function_schema.validator is first.function_schema.validator  # built once
    assert _call(first, {"n": 1}) == {"tag": "a", "n": 1, "label": "x"}
    assert _call(second, {"n": 2, "label": "y"}) == {"tag": "b", "n": 2, "label": "y"}
    assert second.function_schema.json_schema == first.function_schema.json_schema


def test_what_describes_a_tool_keeps_schemas_apart() -> None:
    base = make_tool(_closure("a"), name="echo_apart")
    other_doc = make_tool(_closure("a", doc="Repeat n back."), name="echo_apart")
    other_name = make_tool(_closure("a"), name="echo_apart_2")
    assert other_doc.description == "Repeat n back."
    assert base.description == "Echo n."
    assert other_doc.function_schema is not base.function_schema
    assert other_name.name == "echo_apart_2"
    assert other_name.function_schema.name == "echo_apart_2"


def test_a_bound_method_is_built_anew() -> None:
    class Echo:
        def echo(self, n: int) -> int:
            """Echo n."""
            return n

    one, two = make_tool(Echo().echo, name="echo_obj"), make_tool(Echo().echo, name="echo_obj")
    assert one.function_schema.validator is not two.function_schema.validator


def test_closures_given_their_own_signature_are_built_anew() -> None:
    """The evals replay each tool through one ``def`` given the real tool's signature."""
    import inspect

    def replay_of(params: list[str]) -> Any:
        def replay(**kwargs: Any) -> dict[str, Any]:
            """Replay."""
            return kwargs

        replay.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, annotation=str) for p in params]
        )
        replay.__annotations__ = dict.fromkeys(params, str)
        return replay

    one = make_tool(replay_of(["a"]), name="replayed")
    two = make_tool(replay_of(["b", "c"]), name="replayed")
    assert set(one.function_schema.json_schema["properties"]) == {"a"}
    assert set(two.function_schema.json_schema["properties"]) == {"b", "c"}
