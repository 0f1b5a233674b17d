"""What every tool returns and declares: :class:`ToolResult` and :class:`ToolSpec`.

Foundation types: tools build them, policies read them, the runbook engine and analyzers take
results apart, and interfaces print them, so they live below all of those. This module holds
data only: it must not import tools, policies, the agent or an interface.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from devops_agent.evidence import Evidence

Risk = Literal["safe", "sensitive", "destructive"]
Status = Literal["success", "error", "no_data", "approval_required"]


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
    _evidence: Evidence | None = PrivateAttr(default=None)

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

    @property
    def evidence(self) -> Evidence | None:
        """What the result shows, for the user's faces to draw (a series, a template table,
        timeline entries); like :attr:`raw`, never serialized, so never sent to a model. The
        privacy wrapper masks it as it masks ``data``; the ``tool_result`` event carries it."""
        return self._evidence

    def with_evidence(self, evidence: Evidence | None) -> ToolResult:
        self._evidence = evidence if evidence is None or not evidence.empty else None
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
