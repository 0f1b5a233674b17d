"""HTTP failures of integration clients as tool results, the same way for every service.

A 429 and a 5xx are transient (a retry later can help; the circuit breaker counts them); the
``Retry-After`` header is read in either of its forms; a timeout and an unreachable server are
transient too. Each integration states its own words for the rest (401/403/404/...: the hints
there are specific to each service) in an :class:`ErrorTable`; this module turns a status into a
result. It must not import any client library: integrations read their exceptions themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class Rule:
    """A service's words for one status: ``message`` and ``hint`` are format strings over
    ``{service}``, ``{status}``, ``{what}`` (the object asked for) and ``{said}`` (``": "`` and the
    server's explanation, or nothing)."""

    message: str
    hint: str | None = None


@dataclass(frozen=True)
class ErrorTable:
    """One service's failures as tool results, over the shared mapping above.

    :meth:`result` uses the service's :class:`Rule` for a status when it has one, else 429 →
    :func:`rate_limited`, 5xx → :func:`server_error`, anything else → ``fallback``. The transport
    failures, :meth:`timeout` and :meth:`unreachable`, say which setting to look at.
    """

    service: str
    """The service as messages name it: ``Jira``, ``Kubernetes API``, ``Docker daemon``."""
    timeout_hint: str
    unreachable_hint: str
    rules: Mapping[int, Rule] = field(default_factory=dict)
    fallback: Rule = Rule("{service} request failed ({status}){said}")

    def result(
        self, status: int | None, *, what: str = "", detail: str = "", retry_after: float | None = None
    ) -> ToolResult:
        """A failed result for HTTP ``status`` (``None``: the client gave none)."""
        said = f": {detail}" if detail else ""
        rule = self.rules.get(status) if status is not None else None
        if rule is None and status == 429:
            return rate_limited(self.service, retry_after, said)
        if rule is None and status is not None and status >= 500:
            return server_error(self.service, status, said)
        rule = rule or self.fallback
        words = {"service": self.service, "status": status, "what": what, "said": said}
        hint = rule.hint.format(**words) if rule.hint else None
        return ToolResult.fail(rule.message.format(**words), hint, status=status)

    def timeout(self, subject: str | None = None) -> ToolResult:
        """The server did not answer within the configured timeout: transient."""
        return ToolResult.fail(
            f"{subject or self.service} did not answer in time", self.timeout_hint, transient=True
        )

    def unreachable(
        self, subject: str | None = None, reason: str = "", hint: str | None = None
    ) -> ToolResult:
        """No connection could be made (refused, no route, DNS): transient."""
        because = f": {reason}" if reason else ""
        return ToolResult.fail(
            f"cannot connect to {subject or self.service}{because}",
            hint or self.unreachable_hint,
            transient=True,
        )
