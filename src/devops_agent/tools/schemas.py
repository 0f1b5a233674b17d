"""pydantic-ai ``Tool`` objects whose argument schema is built once per function definition.

Building a tool's schema (signature, type hints, docstring, a pydantic validator) costs about
0.1-1 ms per tool. Toolsets that are made per run from closures (the planner's work tools, the
specialists' ``ask_*`` tools, a benchmark's registry) rebuilt every schema on every run, before
the run's first event. A closure made by the same ``def`` has the same code, signature and
docstring, so its schema is the same: :func:`make_tool` reuses it and swaps in the new function.

This module must not change what a tool accepts or how it is described: anything that could make
two functions' schemas differ (code, name, docstring, defaults) is part of the cache key, and
what cannot be keyed (an object that is not a plain function, unhashable defaults) is built anew.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Hashable
from typing import Any

from pydantic_ai import Tool
from pydantic_ai._function_schema import FunctionSchema

_MAX = 512
_SCHEMAS: dict[Hashable, FunctionSchema] = {}


def _key(fn: Callable[..., Any], name: str) -> Hashable | None:
    if not isinstance(fn, types.FunctionType):
        return None  # a method, partial or callable object: its signature is not its code's
    if "__signature__" in fn.__dict__ or "__wrapped__" in fn.__dict__:
        return None  # a signature made per function (the evals' replayed tools): not its code's
    key = (
        fn.__code__,
        fn.__module__,
        name,
        fn.__doc__,
        fn.__defaults__,
        tuple(sorted((fn.__kwdefaults__ or {}).items())),
        tuple(fn.__annotations__.items()),
    )
    try:
        hash(key)
    except TypeError:
        return None
    return key


def make_tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Tool[Any]:
    """``Tool(fn, name=, description=, metadata=)``, reusing the schema of an earlier closure of
    the same definition."""
    tool_name = name or fn.__name__
    key = _key(fn, tool_name)
    schema = _SCHEMAS.get(key) if key is not None else None
    if schema is not None:
        schema = dataclasses.replace(schema, function=fn)
        return Tool(fn, name=tool_name, description=description, metadata=metadata, function_schema=schema)
    tool: Tool[Any] = Tool(fn, name=tool_name, description=description, metadata=metadata)
    if key is not None:
        if len(_SCHEMAS) >= _MAX:  # definitions are few; docstrings made per config may vary
            _SCHEMAS.clear()
        _SCHEMAS[key] = tool.function_schema
    return tool
