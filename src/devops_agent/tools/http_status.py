"""HTTP failures of integration clients as tool results, the same way for every service.

A 429 and a 5xx are transient (a retry later can help; the circuit breaker counts them); the
``Retry-After`` header is read in either of its forms. Tools map their own 401/403/404 since the
hints there are specific to each service.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from devops_agent.tools.base import ToolResult


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date); ``None`` if absent."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
        return max(0.0, (when - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


def rate_limited(service: str, retry_after: float | None, suffix: str = "") -> ToolResult:
    """A 429: transient, with the wait when the server said how long."""
    wait = f"retry after {retry_after:.0f}s" if retry_after is not None else "retry later"
    return ToolResult.fail(
        f"{service} rate limit hit (429){suffix}", wait, status=429, transient=True, retry_after_s=retry_after
    )


def server_error(service: str, status: int, suffix: str = "") -> ToolResult:
    """A 5xx: transient."""
    return ToolResult.fail(
        f"{service} server error ({status}){suffix}",
        f"{service} is failing; retry later",
        status=status,
        transient=True,
    )
