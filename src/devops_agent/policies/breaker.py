"""Per-tool circuit breakers: stop calling a tool that keeps failing, probe it again later.

States: ``closed`` (calls pass; consecutive failures are counted), ``open`` (calls are refused
with a retry-after until ``reset_timeout_s`` has passed), ``half_open`` (one trial call is let
through; success closes the breaker, failure opens it again). State changes are reported to an
optional listener so the session service can persist them for ``devops-agent tools status``.

This module holds no I/O; the clock is injectable for tests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from devops_agent.config.settings import BreakerSettings
from devops_agent.errors import CircuitOpenError

BreakerState = Literal["closed", "open", "half_open"]


@dataclass(frozen=True)
class BreakerSnapshot:
    tool: str
    state: BreakerState
    failures: int
    opened_at: datetime | None
    retry_after_s: float | None


@dataclass
class CircuitBreaker:
    tool: str
    settings: BreakerSettings
    clock: Callable[[], float] = time.monotonic
    state: BreakerState = "closed"
    failures: int = 0
    _opened_mono: float | None = None
    _opened_wall: datetime | None = None
    _trial_in_flight: bool = False

    def _retry_after(self) -> float:
        assert self._opened_mono is not None
        return max(0.0, self.settings.reset_timeout_s - (self.clock() - self._opened_mono))

    def before_call(self) -> None:
        """Raise :class:`CircuitOpenError` when the call must not go through."""
        if self.state == "open":
            if self._retry_after() > 0:
                raise CircuitOpenError(self.tool, self._retry_after())
            self.state = "half_open"
            self._trial_in_flight = False
        if self.state == "half_open":
            if self._trial_in_flight:
                raise CircuitOpenError(self.tool, self.settings.reset_timeout_s)
            self._trial_in_flight = True

    def record_success(self) -> None:
        self.state = "closed"
        self.failures = 0
        self._opened_mono = None
        self._opened_wall = None
        self._trial_in_flight = False

    def record_failure(self) -> None:
        self.failures += 1
        self._trial_in_flight = False
        if self.state == "half_open" or self.failures >= self.settings.failure_threshold:
            self.state = "open"
            self._opened_mono = self.clock()
            self._opened_wall = datetime.now(UTC)

    def snapshot(self) -> BreakerSnapshot:
        retry = self._retry_after() if self.state == "open" else None
        return BreakerSnapshot(self.tool, self.state, self.failures, self._opened_wall, retry)


@dataclass
class BreakerBoard:
    """All breakers of a process, created on first use; thread-safe (sync tools run in threads)."""

    settings: BreakerSettings
    listener: Callable[[BreakerSnapshot], None] | None = None
    clock: Callable[[], float] = time.monotonic
    _breakers: dict[str, CircuitBreaker] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, tool: str) -> CircuitBreaker:
        with self._lock:
            if tool not in self._breakers:
                self._breakers[tool] = CircuitBreaker(tool, self.settings, self.clock)
            return self._breakers[tool]

    def before_call(self, tool: str) -> None:
        breaker = self.get(tool)
        with self._lock:
            before = breaker.state
            try:
                breaker.before_call()
            finally:
                changed = breaker.state != before
        if changed:
            self._notify(breaker)

    def record(self, tool: str, *, ok: bool) -> None:
        breaker = self.get(tool)
        with self._lock:
            before = (breaker.state, breaker.failures)
            breaker.record_success() if ok else breaker.record_failure()
            changed = (breaker.state, breaker.failures) != before
        if changed:
            self._notify(breaker)

    def snapshots(self) -> list[BreakerSnapshot]:
        with self._lock:
            return [b.snapshot() for b in self._breakers.values()]

    def _notify(self, breaker: CircuitBreaker) -> None:
        if self.listener is not None:
            self.listener(breaker.snapshot())
