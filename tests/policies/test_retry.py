"""The retry policy for transient tool failures (triage uses it): one budget across calls, backoff
doubling per attempt, a result's own ``retry_after_s`` honoured and capped."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from devops_agent.policies.retry import TransientRetry, is_transient
from devops_agent.results import ToolResult


def _flaky(failures: int) -> tuple[list[int], Callable[[int], Awaitable[ToolResult]]]:
    attempts: list[int] = []

    async def attempt(n: int) -> ToolResult:
        attempts.append(n)
        if len(attempts) <= failures:
            return ToolResult.fail("503 from upstream", transient=True)
        return ToolResult.ok("fine")

    return attempts, attempt


def test_a_transient_failure_is_tried_again_until_it_passes() -> None:
    retry = TransientRetry(budget=4, backoff_s=0.001)
    attempts, attempt = _flaky(2)
    result = asyncio.run(retry.run(attempt))
    assert result.status == "success"
    assert attempts == [0, 1, 2]
    assert retry.used == 2


def test_the_budget_is_shared_by_every_call() -> None:
    retry = TransientRetry(budget=3, backoff_s=0.001)
    first, attempt1 = _flaky(2)
    second, attempt2 = _flaky(5)
    assert asyncio.run(retry.run(attempt1)).status == "success"
    last = asyncio.run(retry.run(attempt2))
    assert is_transient(last)  # one retry was left for the second call
    assert (first, second, retry.used) == ([0, 1, 2], [0, 1], 3)


def test_other_failures_are_not_retried() -> None:
    retry = TransientRetry(budget=4, backoff_s=0.001)
    calls: list[int] = []

    async def attempt(n: int) -> ToolResult:
        calls.append(n)
        return ToolResult.fail("invalid PromQL")

    assert asyncio.run(retry.run(attempt)).error == "invalid PromQL"
    assert calls == [0]
    assert retry.used == 0


def test_delay_doubles_and_honours_retry_after_within_the_cap() -> None:
    retry = TransientRetry(budget=4, backoff_s=0.2, max_backoff_s=5.0)
    plain = ToolResult.fail("timeout", transient=True)
    assert [retry.delay(plain, n) for n in range(4)] == [0.2, 0.4, 0.8, 1.6]
    assert retry.delay(ToolResult.fail("429", transient=True, retry_after_s=2), 0) == 2.0
    assert retry.delay(ToolResult.fail("429", transient=True, retry_after_s=600), 0) == 5.0
