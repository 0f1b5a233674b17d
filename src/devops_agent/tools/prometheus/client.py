"""The Prometheus HTTP API as the tools see it: settings, a thin synchronous client, its errors.

:class:`PromClient` reads ``/api/v1/...`` and maps every failure to a :class:`PromError` whose
message and hint are ready for the model (5xx and timeouts are ``transient``, so a retry policy
may try again). This module must not call an endpoint that changes the server.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from devops_agent.config import Settings
from devops_agent.results import ToolResult

NAME = "prometheus"
DEFAULT_URL = "http://127.0.0.1:9090"
DEFAULT_TIMEOUT_S = 15.0
PROMETHEUS_MAX_POINTS = 11_000
"""Prometheus refuses range queries with more points than this per series."""
SETTING_HINT = "set prometheus.url (DEVOPS_AGENT_PROMETHEUS__URL) to the server's base URL"
_SCHEME_RE = re.compile(r"^https?://[^/\s]", re.IGNORECASE)


@dataclass(frozen=True)
class PromConfig:
    """What the tools need from settings, read defensively so older settings still work."""

    url: str = DEFAULT_URL
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_points: int = PROMETHEUS_MAX_POINTS

    @classmethod
    def from_settings(cls, settings: Settings | Any) -> PromConfig:
        """Take ``settings.prometheus`` (url, timeout_s, max_points) where present, else defaults."""
        section = getattr(settings, "prometheus", None)
        url = getattr(section, "url", None) or DEFAULT_URL
        timeout = getattr(section, "timeout_s", None) or DEFAULT_TIMEOUT_S
        max_points = getattr(section, "max_points", None) or PROMETHEUS_MAX_POINTS
        return cls(str(url).rstrip("/"), float(timeout), min(int(max_points), PROMETHEUS_MAX_POINTS))


class PromError(Exception):
    """A request failed; carries what the tool result needs. Never leaves this package.

    ``runtime``: the environment failed (Prometheus unreachable, slow or failing), not the
    request (bad PromQL, bad arguments, a wrong URL setting); ``transient`` ones may be retried.
    Both reach the result's metadata, so a CLI can exit 1 for the first kind and 2 for the other.
    """

    def __init__(
        self, message: str, hint: str | None = None, *, transient: bool = False, runtime: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.transient = transient
        self.runtime = runtime or transient

    def result(self) -> ToolResult:
        if self.transient:
            return ToolResult.fail(self.message, self.hint, transient=True, runtime=True, source=NAME)
        if self.runtime:
            return ToolResult.fail(self.message, self.hint, runtime=True, source=NAME)
        return ToolResult.fail(self.message, self.hint, source=NAME)


def _api_error(response: httpx.Response, url: str) -> PromError:
    """Map a non-2xx answer to a :class:`PromError` with a hint."""
    body: dict[str, Any] = {}
    try:
        parsed = response.json()
        if isinstance(parsed, dict):
            body = parsed
    except ValueError:
        pass
    text = str(body.get("error") or response.text.strip()[:300] or response.reason_phrase)
    kind = body.get("errorType")
    code = response.status_code
    if code == 400 and kind == "bad_data":
        hint = "fix the PromQL (or the argument named in the message); prom_metrics lists metric names"
        if "parse error" in text:
            hint = "the PromQL does not parse: fix the syntax at the position given (line:column)"
        return PromError(f"Prometheus rejected the request: {text}", hint)
    if code == 422:
        return PromError(
            f"Prometheus could not execute the query: {text}",
            "make the query cheaper: a narrower selector, a shorter range, a larger step, or aggregate",
        )
    if code == 404:
        return PromError(
            f"{url} has no Prometheus HTTP API at {response.request.url.path} (404)", SETTING_HINT
        )
    if code in (401, 403):
        return PromError(
            f"Prometheus at {url} refused access ({code}): {text}", "check the URL and credentials"
        )
    if code >= 500:
        return PromError(
            f"Prometheus at {url} failed ({code} {kind or response.reason_phrase}): {text}",
            "a server-side error, often temporary (overload, timeout, restart); retry shortly or "
            "make the query cheaper",
            transient=True,
        )
    return PromError(f"Prometheus at {url} answered {code}: {text}")


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a Prometheus base URL, or None. Caught before any request is made:
    httpx would call ``127.0.0.1:9090`` an unsupported protocol, which reads like a network error."""
    if _SCHEME_RE.match(url):
        return None
    return f"prometheus.url must start with http:// or https://, got {url!r}"


class PromClient:
    """A thin, synchronous view of the Prometheus HTTP API.

    Each call opens and closes its own ``httpx.Client``: tools may run in parallel threads and
    nothing has to be closed when a toolset is dropped.
    """

    def __init__(self, config: PromConfig, transport: httpx.BaseTransport | None = None) -> None:
        self.config = config
        self._transport = transport
        self._url_problem = url_problem(config.url)

    @contextmanager
    def _client(self) -> Iterator[httpx.Client]:
        with httpx.Client(
            base_url=self.config.url,
            timeout=self.config.timeout_s,
            transport=self._transport,
            headers={"Accept": "application/json"},
        ) as client:
            yield client

    def get(self, path: str, params: Any = None, *, form: bool = False) -> tuple[Any, list[str]]:
        """The ``data`` and ``warnings`` of an API answer. ``form=True`` POSTs the parameters.

        POST is what the Prometheus API accepts for queries too long for a URL.

        Raises:
            PromError: the request failed; message and hint are ready for the model.
        """
        url = self.config.url
        if self._url_problem is not None:
            raise PromError(self._url_problem, SETTING_HINT)
        try:
            with self._client() as client:
                if form:
                    response = client.post(f"/api/v1/{path}", data=params)
                else:
                    response = client.get(f"/api/v1/{path}", params=params)
        except httpx.ConnectError as exc:
            raise PromError(
                f"cannot connect to Prometheus at {url}: {exc}",
                f"is Prometheus running at {url}? {SETTING_HINT}",
                runtime=True,
            ) from None
        except httpx.TimeoutException:
            raise PromError(
                f"Prometheus at {url} did not answer within {self.config.timeout_s:g}s",
                "the server may be overloaded or the query too expensive; retry, or narrow the query",
                transient=True,
            ) from None
        except httpx.InvalidURL as exc:
            raise PromError(f"invalid Prometheus URL {url!r}: {exc}", SETTING_HINT) from None
        except httpx.HTTPError as exc:
            raise PromError(
                f"request to Prometheus at {url} failed: {type(exc).__name__}: {exc}",
                "a network error; retry shortly",
                transient=True,
            ) from None
        if not response.is_success:
            raise _api_error(response, url)
        try:
            body = response.json()
        except ValueError:
            raise PromError(
                f"{url} did not answer with JSON: is it a Prometheus server?", SETTING_HINT
            ) from None
        if not isinstance(body, dict) or body.get("status") != "success":
            raise PromError(f"unexpected answer from {url}: {str(body)[:200]}", SETTING_HINT)
        return body.get("data"), [str(w) for w in body.get("warnings") or []]
