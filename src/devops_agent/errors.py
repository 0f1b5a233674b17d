"""Every exception DevOps Agent raises on purpose, in one place.

The hierarchy separates *misuse* (the person or integrator asked for something that cannot
work: a bad flag, an unknown session id, an unreadable path) from *runtime failures* (a store
that cannot be reached, a model endpoint that is down, a tool that failed). Interfaces print one
line for any :class:`DevOpsAgentError` (message plus hint) and exit non-zero; anything else is a
programming error and keeps its traceback.

::

    DevOpsAgentError                 base; carries ``hint`` and structured ``fields``
    ├── UserError                    the caller must change something (exit code 2)
    │   ├── ConfigError              invalid configuration file or environment value
    │   ├── NotFoundError            unknown session, tool, runbook, path …
    │   └── PathAccessError          path outside the configured roots or unreadable
    └── RuntimeFailure               the environment failed us (exit code 1)
        ├── StoreError               database unreachable, migration failed
        │   └── RunFencedError       another worker took the run over; this one may not write it
        ├── ModelError               model endpoint unreachable, auth failure, bad response
        ├── ToolError                a tool failed; ``tool`` names it
        │   ├── CircuitOpenError     the tool's breaker is open; ``retry_after_s`` says when
        │   └── McpServerUnavailable an MCP server cannot be reached; ``server`` names it
        ├── RunCancelledError        a run was cancelled by the user or the service
        └── RunHaltedError           the safety policy stopped a run (a halt pattern matched)

Third-party exceptions are mapped to these types at the boundary where they are caught (the
store maps SQLAlchemy errors, the model layer maps pydantic-ai / httpx errors); nothing above
that boundary should see a library's own exception type.

This module must not import anything from the rest of the package.
"""

from __future__ import annotations

from typing import Any


class DevOpsAgentError(Exception):
    """Base of every deliberate error. ``hint`` tells the reader what to do next."""

    exit_code: int = 1

    def __init__(self, message: str, *, hint: str | None = None, **fields: Any) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.fields: dict[str, Any] = fields

    def one_line(self) -> str:
        """The message and the hint on one line, as the CLI prints it."""
        return f"{self.message} ({self.hint})" if self.hint else self.message

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serializable form for ``--json`` output and error events."""
        return {"error": type(self).__name__, "message": self.message, "hint": self.hint, **self.fields}


class UserError(DevOpsAgentError):
    """The request cannot work as given; the caller must change it."""

    exit_code = 2


class ConfigError(UserError):
    """A configuration file or environment variable holds an invalid value."""


class NotFoundError(UserError):
    """A named thing (session, tool, runbook, file) does not exist."""


class PathAccessError(UserError):
    """A path is outside the configured roots, missing, or unreadable."""


class RuntimeFailure(DevOpsAgentError):
    """Something outside the caller's control failed."""


class StoreError(RuntimeFailure):
    """The session store could not be opened, migrated, read or written."""


class RunFencedError(StoreError):
    """A durable run changed hands (its worker was declared dead and another took it over): the
    old worker's writes to it are refused, so one run never has two writers."""


class ModelError(RuntimeFailure):
    """The model endpoint failed: unreachable, unauthorized, or answered nonsense."""


class ToolError(RuntimeFailure):
    """A tool failed. ``fields['tool']`` names it."""

    def __init__(self, message: str, *, tool: str, hint: str | None = None, **fields: Any) -> None:
        super().__init__(message, hint=hint, tool=tool, **fields)
        self.tool = tool


class CircuitOpenError(ToolError):
    """The tool failed repeatedly and its circuit breaker is open for ``retry_after_s`` more seconds."""

    def __init__(self, tool: str, retry_after_s: float) -> None:
        super().__init__(
            f"tool {tool!r} is temporarily disabled after repeated failures",
            tool=tool,
            hint=f"retry after {retry_after_s:.0f}s, or use another tool to gather this evidence",
            retry_after_s=round(retry_after_s, 1),
        )
        self.retry_after_s = retry_after_s


class McpServerUnavailable(ToolError):
    """An MCP server is not running or stopped answering; its tools cannot run until it is back."""

    def __init__(self, server: str, tool: str, reason: str, *, retry_after_s: float | None = None) -> None:
        when = f"; the agent reconnects in {retry_after_s:.0f}s" if retry_after_s else ""
        super().__init__(
            f"MCP server {server!r} is unavailable: {reason}",
            tool=tool,
            hint=f"its tools cannot run now{when}; gather this evidence another way, and say what "
            "could not be checked (`devops-agent mcp list` shows the server's state)",
            server=server,
        )
        self.server = server
        self.reason = reason


class RunCancelledError(RuntimeFailure):
    """A run was cancelled before it finished."""


class RunHaltedError(RuntimeFailure):
    """The safety policy stopped the run: the model proposed something that must not be retried."""
