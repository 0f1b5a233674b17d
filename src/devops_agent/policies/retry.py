"""Retrying a tool call whose result says it failed for a passing reason (``transient=True``).

A tool marks an error transient when trying again may help (a 5xx, a timeout, a rate limit); it
may say how long to wait (``retry_after_s``, from a ``Retry-After`` header). :class:`TransientRetry`
tries such a call again with exponential backoff, waiting what the result asked where it asked,
never more than ``max_backoff_s``, and spends one budget shared by every call of a run, so a
service that is down costs a bounded number of extra calls, not one round per call.

Policy only: this module decides whether and how long to wait. It must not call tools, emit
events or import the agent or an interface; the caller passes one attempt as a callable (which
emits its own events, so every attempt is visible).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from devops_agent.results import ToolResult

__all__ = ["MAX_BACKOFF_S", "TransientRetry", "is_transient"]

MAX_BACKOFF_S = 5.0
"""The longest wait between two attempts, whatever the result asked."""


def is_transient(result: ToolResult) -> bool:
    """Whether ``result`` is an error its tool says may pass if the call is tried again."""
    return result.status == "error" and bool(result.metadata.get("transient"))


@dataclass
class TransientRetry:
    """Retries transient failures; ``budget`` retries in all, across every call made through it."""

    budget: int
    backoff_s: float
    max_backoff_s: float = MAX_BACKOFF_S
    used: int = 0
    """Retries spent so far (a run's statistics report it)."""

    def delay(self, result: ToolResult, attempt: int) -> float:
        """Seconds to wait before retry ``attempt + 1``: the result's ``retry_after_s`` where it
        gives one, else ``backoff_s`` doubled per attempt; capped at ``max_backoff_s``."""
        after = result.metadata.get("retry_after_s")
        wanted = float(after) if isinstance(after, int | float) else self.backoff_s * 2**attempt
        return min(wanted, self.max_backoff_s)

    async def run(self, attempt: Callable[[int], Awaitable[ToolResult]]) -> ToolResult:
        """Call ``attempt(0)``, then ``attempt(1)``, ... while the result is transient and the
        budget lasts; return the last result (a transient error once the budget is spent)."""
        tries = 0
        while True:
            result = await attempt(tries)
            if not is_transient(result) or self.used >= self.budget:
                return result
            wait = self.delay(result, tries)
            self.used += 1
            tries += 1
            await asyncio.sleep(wait)
