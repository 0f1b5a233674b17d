"""The service's runs: start them for a user (within their limit), follow each to its end.

:meth:`RunTracker.start` is the one way the API starts a run (a question, answers to a paused
run or to its plan, a resumed run, an alert): it enforces the per-user limit of concurrent runs (429 with
Retry-After), opens the run's trace span, and starts a follower that feeds the metrics from the
run's events and frees the user's slot when the run finishes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from devops_agent.agent.approvals import ApprovalDecision
from devops_agent.agent.reasoning.plan import PlanDecision
from devops_agent.agent.session import SessionService
from devops_agent.agent.supervisor import RunHandle
from devops_agent.api.metrics import Metrics
from devops_agent.api.problems import ApiError
from devops_agent.api.tokens import Principal
from devops_agent.events import RunFinished, RunStarted
from devops_agent.policies.modes import Mode
from devops_agent.telemetry import tracer

log = structlog.get_logger(__name__)
RETRY_AFTER_S = 5


@dataclass
class RunTracker:
    """Starts runs for users and follows them."""

    service: SessionService
    metrics: Metrics
    max_per_user: int
    draining: bool = False
    _active: dict[str | None, set[str]] = field(default_factory=dict)
    _followers: set[asyncio.Task[None]] = field(default_factory=set)

    def active(self, principal: Principal) -> int:
        """How many runs of this user are going."""
        return len(self._active.get(principal.id, ()))

    async def start(
        self,
        principal: Principal,
        prompt: str | None,
        *,
        session_id: str | None = None,
        mode: Mode | None = None,
        inputs: dict[str, Any] | None = None,
        approvals: Mapping[str, ApprovalDecision] | None = None,
        plan: PlanDecision | None = None,
    ) -> RunHandle:
        """Start a run for ``principal``; raises 429 over their limit and 503 while shutting down."""
        if self.draining:
            raise ApiError(
                503,
                "the service is shutting down; no new runs",
                hint="retry once it is back",
                error="ShuttingDown",
                headers={"Retry-After": "30"},
            )
        mine = self._active.setdefault(principal.id, set())
        if len(mine) >= self.max_per_user:
            raise ApiError(
                429,
                f"{principal.name} already has {len(mine)} runs going (limit {self.max_per_user})",
                hint="wait for one to finish, or cancel one (POST /v1/runs/{id}/cancel)",
                error="TooManyRuns",
                headers={"Retry-After": str(RETRY_AFTER_S)},
            )
        slot = f"starting-{id(object())}-{time.monotonic_ns()}"
        mine.add(slot)  # held while start() awaits the store, so two requests cannot both pass
        span = tracer().start_span("run", attributes={"devops_agent.user": principal.name})
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            handle = await self.service.start(
                prompt,
                session_id=session_id,
                mode=mode,
                inputs=inputs,
                approvals=approvals,
                plan=plan,
                user_id=principal.id,
            )
        except BaseException:
            span.end()
            raise
        finally:
            otel_context.detach(token)  # the run's task already copied the context with the span
            mine.discard(slot)
        span.set_attribute("devops_agent.session_id", handle.session_id)
        span.set_attribute("devops_agent.run_id", handle.run_id)
        mine.add(handle.run_id)
        task = asyncio.create_task(self._follow(principal, handle, span), name=f"follow-{handle.run_id}")
        self._followers.add(task)
        task.add_done_callback(self._followers.discard)
        return handle

    async def _follow(self, principal: Principal, handle: RunHandle, span: trace.Span) -> None:
        started = time.perf_counter()
        path = "unknown"
        try:
            async for event in self.service.events(handle.run_id):
                if isinstance(event, RunStarted):
                    path = event.path
                self.metrics.observe(event, path)
                if isinstance(event, RunFinished):
                    self.metrics.run_duration.labels(path).observe(time.perf_counter() - started)
                    span.set_attribute("devops_agent.status", event.status)
                    if event.status == "failed":
                        span.set_status(Status(StatusCode.ERROR, "run failed"))
        except Exception as exc:  # noqa: BLE001 - metrics must never take the service down
            log.warning("run_follow_failed", run_id=handle.run_id, error=repr(exc))
        finally:
            span.end()
            self._active.get(principal.id, set()).discard(handle.run_id)

    async def close(self) -> None:
        """Stop following (the runs themselves are stopped by the supervisor's drain)."""
        for task in list(self._followers):
            task.cancel()
        for task in list(self._followers):
            with contextlib.suppress(asyncio.CancelledError):
                await task
