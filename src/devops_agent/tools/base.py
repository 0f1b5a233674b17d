"""What a tool is: a plain typed function, its ``ToolSpec``, and the ``ToolResult`` it returns.

Tools stay plain (principle 2 of the architecture): a tool does one thing and returns data or a
``ToolResult``. Modes, approvals, privacy, telemetry, circuit breaking and size limits are
wrappers in ``policies/`` that read the ``ToolSpec`` attached here; they are never written into a
tool. This module must not import from policies, agent or interface layers.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

if TYPE_CHECKING:  # the agent runtime is imported where a toolset is built for it (about 0.8 s):
    # commands that only call tools directly (search, logs, metrics) start without it
    from pydantic_ai import FunctionToolset

Risk = Literal["safe", "sensitive", "destructive"]
Status = Literal["success", "error", "no_data", "approval_required"]

F = TypeVar("F", bound=Callable[..., Any])

SPEC_KEY = "devops_agent_spec"
"""Key under which a tool's :class:`ToolSpec` is stored in pydantic-ai tool metadata."""


class ToolSpec(BaseModel):
    """Policy-relevant facts about a tool. Modes and approvals are decided from this, never names."""

    model_config = ConfigDict(frozen=True)

    category: str
    read_only: bool
    risk: Risk = "safe"
    command_arg: str | None = None
    """Name of the argument holding a shell command: the safety layer classifies it per call."""


class ToolResult(BaseModel):
    """The normalized outcome of every tool call; errors are data the model can read."""

    status: Status
    data: Any = None
    error: str | None = None
    hint: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    _raw: str | None = PrivateAttr(default=None)

    @property
    def raw(self) -> str | None:
        """The full output behind a summarized ``data`` (never serialized, so never sent to a model).

        A tool that condenses a large result (a console log into error signatures, say) attaches
        the original with :meth:`with_raw`; the session keeps it for the user
        (``devops-agent sessions output``) while the model reads only the summary.
        """
        return self._raw

    def with_raw(self, raw: str | None) -> ToolResult:
        self._raw = raw
        return self

    @classmethod
    def ok(cls, data: Any, **metadata: Any) -> ToolResult:
        return cls(status="success", data=data, metadata=metadata)

    @classmethod
    def fail(cls, error: str, hint: str | None = None, **metadata: Any) -> ToolResult:
        return cls(status="error", error=error, hint=hint, metadata=metadata)

    @classmethod
    def empty(cls, message: str, **metadata: Any) -> ToolResult:
        """Nothing matched: not an error, but the model should know the search came back empty."""
        return cls(status="no_data", data=None, error=None, hint=message, metadata=metadata)


@dataclass
class ToolEntry:
    """One registered tool: its callable, spec and owning toolset."""

    name: str
    function: Callable[..., Any]
    spec: ToolSpec
    toolset: str
    description: str = ""

    def bind_args(self, args: dict[str, Any]) -> inspect.BoundArguments:
        """Check ``args`` against the function signature; raises ``TypeError`` on a mismatch."""
        bound = inspect.signature(self.function).bind(**args)
        bound.apply_defaults()
        return bound


@dataclass
class ToolsetBuilder:
    """Collects a toolset's tools with their specs.

    Usage inside a toolset module::

        def build(settings: Settings) -> ToolsetBuilder:
            ts = ToolsetBuilder("system", "Host resource usage via psutil")

            @ts.tool(category="system", read_only=True)
            def system_uptime() -> ToolResult: ...

            return ts
    """

    name: str
    description: str = ""
    entries: dict[str, ToolEntry] = field(default_factory=dict)

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
            if tool_name in self.entries:
                raise ValueError(f"tool {tool_name!r} registered twice in toolset {self.name!r}")
            spec = ToolSpec(
                category=category or self.name, read_only=read_only, risk=risk, command_arg=command_arg
            )
            doc = inspect.getdoc(fn) or ""
            self.entries[tool_name] = ToolEntry(tool_name, fn, spec, self.name, doc.split("\n\n")[0])
            return fn

        return decorator

    def to_pydantic_ai(self) -> FunctionToolset[Any]:
        """The same tools as a pydantic-ai toolset, each with its spec in the metadata."""
        from pydantic_ai import FunctionToolset, Tool

        tools = [
            Tool(e.function, name=e.name, metadata={SPEC_KEY: e.spec.model_dump()})
            for e in self.entries.values()
        ]
        return FunctionToolset(tools, id=self.name)


def spec_from_metadata(metadata: dict[str, Any] | None) -> ToolSpec | None:
    """Read a :class:`ToolSpec` back from pydantic-ai tool metadata (``None`` for foreign tools)."""
    if not metadata or SPEC_KEY not in metadata:
        return None
    return ToolSpec.model_validate(metadata[SPEC_KEY])
