"""HTTP failures of integration clients as tool results, the same way for every service.

A 429 and a 5xx are transient (a retry later can help; the circuit breaker counts them); the
``Retry-After`` header is read in either of its forms. Tools map their own 401/403/404 since the
hints there are specific to each service.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

from devops_agent.tools.base import ToolResult


def bad_base_url(setting: str, value: str, env: str) -> ToolResult | None:
    """A failed result when a configured server URL is not an absolute ``http(s)://`` URL.

    Without a scheme the clients fail deep inside (``MissingSchema``, ``AttributeError``) with a
    message that names neither the setting nor the fix; ``None`` when the URL is usable.
    """
    parts = urlsplit(value.strip())
    if parts.scheme.lower() in ("http", "https") and parts.hostname:
        return None
    shown = value.strip().rsplit("@", 1)[-1]  # never echo credentials written into the URL
    example = "https://" + shown.split("://", 1)[-1].lstrip("/")
    return ToolResult.fail(
        f"{setting} {shown!r} is not an http(s) URL",
        f"set {setting} ({env}) to the full URL with its scheme, e.g. {example!r}",
    )


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
