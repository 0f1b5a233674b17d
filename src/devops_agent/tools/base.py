"""What a tool is: a plain typed function, its ``ToolSpec``, and the ``ToolResult`` it returns
(both defined in the foundation, :mod:`devops_agent.results`, and re-exported here for tools).

Tools stay plain (principle 2 of the architecture): a tool does one thing and returns data or a
``ToolResult``. Modes, approvals, privacy, telemetry, circuit breaking and size limits are
wrappers in ``policies/`` that read the ``ToolSpec`` attached here; they are never written into a
tool. This module must not import from policies, agent or interface layers.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

from devops_agent.results import Risk, Status, ToolResult, ToolSpec

if TYPE_CHECKING:  # the agent runtime is imported where a toolset is built for it (about 0.8 s):
    # commands that only call tools directly (search, logs, metrics) start without it; the store
    # behind ToolDeps where a tool is called directly
    from pydantic_ai import FunctionToolset

    from devops_agent.config import Settings
    from devops_agent.deps import ToolDeps

__all__ = [
    "SPEC_KEY",
    "Risk",
    "Status",
    "ToolEntry",
    "ToolResult",
    "ToolSpec",
    "ToolsetBuilder",
    "call_directly",
    "spec_from_metadata",
    "spec_of",
    "tool",
]

F = TypeVar("F", bound=Callable[..., Any])

SPEC_KEY = "devops_agent_spec"
"""Key under which a tool's :class:`ToolSpec` is stored in pydantic-ai tool metadata."""
_SPEC_ATTR = "__devops_agent_spec__"
"""Attribute under which :func:`tool` keeps a module-level function's :class:`ToolSpec`."""


@dataclass
class ToolEntry:
    """One registered tool: its callable, spec and owning toolset."""

    name: str
    function: Callable[..., Any]
    spec: ToolSpec
    toolset: str
    description: str = ""

    def bind_args(self, args: dict[str, Any]) -> inspect.BoundArguments:
        """Check ``args`` against the function signature (its ``ctx`` left out); raises
        ``TypeError`` on a mismatch."""
        bound = _signature(self.function).bind(**args)
        bound.apply_defaults()
        return bound


def tool(
    *, category: str, read_only: bool, risk: Risk = "safe", command_arg: str | None = None
) -> Callable[[F], F]:
    """Declare a module-level function a tool: its :class:`ToolSpec` travels with it, and
    :meth:`ToolsetBuilder.add` lists it. The function stays plain: importable and callable by name
    (with :func:`call_directly` when it takes the run's ``ctx``)."""
    spec = ToolSpec(category=category, read_only=read_only, risk=risk, command_arg=command_arg)

    def declare(fn: F) -> F:
        setattr(fn, _SPEC_ATTR, spec)
        return fn

    return declare


def spec_of(fn: Callable[..., Any]) -> ToolSpec | None:
    """The spec :func:`tool` declared on ``fn``, else ``None``."""
    spec = getattr(fn, _SPEC_ATTR, None)
    return spec if isinstance(spec, ToolSpec) else None


@dataclass
class ToolsetBuilder:
    """Collects a toolset's tools with their specs.

    Module-level tools (the integrations) are declared with :func:`tool` and listed::

        @tool(category="tickets", read_only=True)
        def jira_issue(ctx: RunContext[ToolDeps], key_or_url: str) -> ToolResult: ...

        def build(settings: Settings) -> ToolsetBuilder:
            return ToolsetBuilder("jira", "Read Jira issues").add(jira_issue)

    Closures over the settings are declared inside a toolset module's ``build``::

        def build(settings: Settings) -> ToolsetBuilder:
            ts = ToolsetBuilder("system", "Host resource usage via psutil")

            @ts.tool(category="system", read_only=True)
            def system_uptime() -> ToolResult: ...

            return ts
    """

    name: str
    description: str = ""
    entries: dict[str, ToolEntry] = field(default_factory=dict)
    _tools: list[Any] | None = field(default=None, init=False, repr=False, compare=False)
    """The pydantic-ai tools made from :attr:`entries`, kept: building their schemas costs ~6 ms a
    tool, and every run's pipeline asks for them again."""

    def tool(
        self,
        *,
        category: str | None = None,
        read_only: bool,
        risk: Risk = "safe",
        name: str | None = None,
        command_arg: str | None = None,
    ) -> Callable[[F], F]:
        def decorator(fn: F) -> F:
            tool_name = name or fn.__name__
            spec = ToolSpec(
                category=category or self.name, read_only=read_only, risk=risk, command_arg=command_arg
            )
            self._add(tool_name, fn, spec)
            return fn

        return decorator

    def add(self, *functions: Callable[..., Any]) -> ToolsetBuilder:
        """List module-level tool functions, each declared with :func:`tool` (its spec)."""
        for fn in functions:
            spec = spec_of(fn)
            if spec is None:
                raise ValueError(f"{fn.__name__} has no ToolSpec: declare it with @tool(...)")
            self._add(fn.__name__, fn, spec)
        return self

    def _add(self, name: str, fn: Callable[..., Any], spec: ToolSpec) -> None:
        if name in self.entries:
            raise ValueError(f"tool {name!r} registered twice in toolset {self.name!r}")
        doc = inspect.getdoc(fn) or ""
        self.entries[name] = ToolEntry(name, fn, spec, self.name, doc.split("\n\n")[0])
        self._tools = None

    def to_pydantic_ai(self) -> FunctionToolset[Any]:
        """The same tools as a pydantic-ai toolset, each with its spec in the metadata."""
        from pydantic_ai import FunctionToolset

        from devops_agent.tools.schemas import make_tool

        if self._tools is None:
            self._tools = [
                make_tool(e.function, name=e.name, metadata={SPEC_KEY: e.spec.model_dump()})
                for e in self.entries.values()
            ]
        return FunctionToolset(list(self._tools), id=self.name)


def spec_from_metadata(metadata: dict[str, Any] | None) -> ToolSpec | None:
    """Read a :class:`ToolSpec` back from pydantic-ai tool metadata (``None`` for foreign tools).

    Every call of every run reads its tool's spec in several wrappers (and the mode filter reads
    every tool's on every model request), so the spec is made once per content: it is frozen, so
    one instance can serve every reader."""
    if not metadata or SPEC_KEY not in metadata:
        return None
    raw = metadata[SPEC_KEY]
    try:
        return _spec_of(tuple(raw.items()))
    except (AttributeError, TypeError):  # not a dict of plain values: validate it as it is
        return ToolSpec.model_validate(raw)


@lru_cache(maxsize=4096)
def _spec_of(items: tuple[tuple[str, Any], ...]) -> ToolSpec:
    return ToolSpec.model_validate(dict(items))


def _signature(fn: Callable[..., Any], takes_ctx: bool | None = None) -> inspect.Signature:
    """``fn``'s signature as a caller passes arguments: without the run's context (the first
    parameter, named ``ctx`` by every tool here, when ``takes_ctx`` is not given)."""
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    if takes_ctx is None:
        takes_ctx = bool(params) and params[0].name == "ctx"
    return sig.replace(parameters=params[1:]) if takes_ctx else sig


def call_directly(fn: Callable[..., Any], deps: ToolDeps | Settings, /, *args: Any, **kwargs: Any) -> Any:
    """Call tool function ``fn`` outside a run (a CLI command, a test): the arguments validated
    against its schema as pydantic-ai does for a model (an out-of-range ``limit`` is refused, not
    clamped), and ``ctx.deps`` built from ``deps`` (settings alone: no store, no session).

    No policy applies here: no mode, approval, privacy or output cap. A path that runs tools for a
    person or a model goes through the tool pipeline (``policies.pipeline``) instead. Invalid
    arguments come back as a failed :class:`ToolResult`, as they do through the pipeline.
    """
    from pydantic_ai import RunContext, Tool
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    from devops_agent.deps import ToolDeps

    schema = Tool(fn).function_schema
    try:
        given = _signature(fn, schema.takes_ctx).bind(*args, **kwargs).arguments
        valid = schema.validator.validate_python(given)
    except (TypeError, ValidationError) as exc:
        problems = (
            "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
            )
            if isinstance(exc, ValidationError)
            else str(exc)
        )
        return ToolResult.fail(
            f"invalid arguments for {schema.name}: {problems}",
            "check the arguments against the tool's docstring",
        )
    if not schema.takes_ctx:
        return fn(**valid)
    tool_deps = deps if isinstance(deps, ToolDeps) else ToolDeps(deps)
    ctx = RunContext(deps=tool_deps, model=TestModel(), usage=RunUsage(), tool_name=schema.name)
    return fn(ctx, **valid)
