"""The token budget as a capability: every model request fits ``window − reserved output − margin``.

:class:`ContextBudget` runs before each attempt at a model request (pydantic-ai's
``prepare_model_request``, the hook meant for context-window fitting): it counts what would be
sent — instructions, tool definitions, messages — and, when that is over the limit, sends a
compacted copy (:func:`~devops_agent.policies.context.compaction.compact`). The session keeps the
whole conversation; only the request is shaped. Counting (:mod:`.tokens`):

* a count is scaled by what the provider reported for earlier requests of the run (its own
  count of what was sent), never down;
* ``limit = (window − reserve) / (1 + margin)``, the margin being the counter's measured error;
* when the count is too close to the limit to tell (within the margin) and the provider can
  count (Anthropic, Gemini), the provider's count decides.

Older turns are folded into an extractive summary, or into the fast model's summary when a
``summarize`` callable is given (its summary is used only when shorter). Every compaction is
reported through ``on_compaction`` (the runner turns it into a ``context_compacted`` event), and
every request is recorded in :attr:`ContextBudget.records`. Reserve output is also sent as the
request's ``max_tokens``. This module is a policy: it must not import the agent or interfaces.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import structlog
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, UserPromptPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext

from devops_agent.config.context import ContextSettings
from devops_agent.errors import DevOpsAgentError
from devops_agent.policies.context.compaction import Compaction, Pins, compact
from devops_agent.policies.context.profiles import ModelProfile
from devops_agent.policies.context.tokens import (
    Calibration,
    TextCounter,
    count_instructions,
    count_messages,
    count_tools,
)

log = structlog.get_logger(__name__)

Summarizer = Callable[[str], Awaitable[str | None]]
"""Text of the folded turns' extractive summary → a shorter summary (the fast model), or None."""

PROVIDER_FRAMING_MARGIN = 0.01


class ContextOverflow(DevOpsAgentError):
    """Even the pinned part of a request (system prompt, tools, question) exceeds the window."""


@dataclass
class RequestRecord:
    """One model request as the budget saw it."""

    request: int
    tokens_full: int
    """Tokens of everything the run would have sent without the budget (counted, scaled)."""
    tokens_sent: int
    limit: int
    compacted: bool
    duration_ms: float
    method: str


@dataclass
class CompactionInfo:
    """What one compaction did, for the ``context_compacted`` event."""

    request: int
    compaction: Compaction
    limit: int
    window: int
    counter: str
    summarizer: str | None
    duration_ms: float


@dataclass
class ContextBudget(AbstractCapability[Any]):
    """Fits each request into the model's window (see the module docstring)."""

    profile: ModelProfile
    counter: TextCounter
    settings: ContextSettings = field(default_factory=ContextSettings)
    session_id: str | None = None
    pins: Pins = field(default_factory=Pins)
    summarize: Summarizer | None = None
    on_compaction: Callable[[CompactionInfo], None] | None = None
    calibrate: bool = True
    """Learn from the provider's reported input tokens (off for scripted models, whose usage is made up)."""
    records: list[RequestRecord] = field(default_factory=list)
    calibration: Calibration = field(default_factory=Calibration)
    _provider_counts: bool = True
    _last_sent: int = 0
    _summaries: dict[str, str] = field(default_factory=dict)

    @property
    def reserve(self) -> int:
        """Tokens kept free for the answer."""
        return self.settings.reserve_output or min(self.profile.max_output, self.profile.context_window // 4)

    @property
    def limit(self) -> int:
        """Counted tokens a request may have."""
        room = self.profile.context_window - self.reserve
        return max(math.floor(room / (1 + self.counter.margin)), 0)

    def summary(self) -> dict[str, Any]:
        """The run's requests as the budget saw them (the ``context`` figures of its usage)."""
        if not self.records:
            return {}
        times = sorted(r.duration_ms for r in self.records)
        return {
            "window": self.profile.context_window,
            "limit": self.limit,
            "counter": self.counter.method,
            "requests": len(self.records),
            "compacted_requests": sum(1 for r in self.records if r.compacted),
            "tokens_full_total": sum(r.tokens_full for r in self.records),
            "tokens_sent_total": sum(r.tokens_sent for r in self.records),
            "tokens_full_max": max(r.tokens_full for r in self.records),
            "tokens_sent_max": max(r.tokens_sent for r in self.records),
            "over_window_without_budget": sum(
                1 for r in self.records if r.tokens_full > self.profile.context_window
            ),
            "compaction_ms_mean": round(sum(times) / len(times), 3),
            "compaction_ms_p95": round(times[min(len(times) - 1, int(len(times) * 0.95))], 3),
            "compaction_ms_max": round(times[-1], 3),
        }

    def get_model_settings(self) -> ModelSettings | None:
        return ModelSettings(max_tokens=self.reserve)

    def fixed_tokens(self, request_context: ModelRequestContext) -> int:
        params = request_context.model_request_parameters
        tools = [*params.function_tools, *getattr(params, "output_tools", [])]
        return count_instructions(self.counter, params.instruction_parts) + count_tools(self.counter, tools)

    async def prepare_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        started = time.perf_counter()
        messages = list(request_context.messages)
        fixed = self.fixed_tokens(request_context)
        counted = fixed + count_messages(self.counter, messages)
        full = self.calibration.scale(counted)
        limit = self.limit
        step = len(self.records) + 1
        if full <= limit and not self.pins.render():
            self._record(step, full, full, limit, False, started)
            self._last_sent = counted
            return request_context
        if full > limit and await self._provider_says_it_fits(request_context, messages, full):
            self._record(step, full, full, limit, False, started, method="provider")
            self._last_sent = counted
            return request_context
        # Compact against the raw counter: the calibration ratio is folded into the limit.
        raw_limit = math.floor(limit / max(self.calibration.ratio if self.calibration.observed else 1.0, 1.0))
        result = compact(
            messages,
            counter=self.counter,
            fixed_tokens=fixed,
            limit=raw_limit,
            keep_turns=self.settings.keep_turns,
            session_id=self.session_id,
            pins=self.pins,
        )
        if not result.fits:
            raise ContextOverflow(
                f"the request cannot fit the model's window: what must be sent (system prompt, "
                f"{len(request_context.model_request_parameters.function_tools)} tool definitions, the "
                f"question) takes about {result.tokens_after:,} tokens of the {limit:,} available "
                f"({self.profile.context_window:,}-token window, {self.reserve:,} kept for the answer)",
                hint="use a model with a larger window (model.profiles.NAME.context_window if yours is "
                "larger than assumed), offer fewer tools (tools.disabled), or ask a shorter question",
            )
        summarizer = None
        if result.summary is not None:
            summarizer = "extractive"
            if self.summarize is not None and (shorter := await self._fast_summary(result.summary)):
                result.messages = _swap_summary(result.messages, result.summary, shorter)
                result.tokens_after = fixed + count_messages(self.counter, result.messages)
                summarizer = "fast"
        request_context.messages = result.messages
        sent = self.calibration.scale(result.tokens_after)
        changed = bool(result.replaced or result.folded or result.cut)
        record = self._record(step, full, sent, limit, changed, started)
        self._last_sent = result.tokens_after
        if changed and self.on_compaction is not None:
            self.on_compaction(
                CompactionInfo(
                    step, result, limit, self.profile.context_window, self.counter.method, summarizer,
                    record.duration_ms,
                )
            )  # fmt: skip
        return request_context

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        if self.calibrate:
            self.calibration.observe(self._last_sent, response.usage.input_tokens)
        return response

    def _record(
        self, step: int, full: int, sent: int, limit: int, compacted: bool, started: float, method: str = ""
    ) -> RequestRecord:
        record = RequestRecord(
            step,
            full,
            sent,
            limit,
            compacted,
            (time.perf_counter() - started) * 1000,
            method or self.counter.method,
        )
        self.records.append(record)
        return record

    async def _provider_says_it_fits(
        self, request_context: ModelRequestContext, messages: list[ModelMessage], counted: int
    ) -> bool:
        """Ask the provider's count when ours is within the margin of the limit (and it can count)."""
        if not self._provider_counts or self.settings.token_counter not in ("auto", "provider"):
            return False
        room = self.profile.context_window - self.reserve
        if counted > room * (1 + self.counter.margin):
            return False  # clearly over, whatever the error
        try:
            usage = await request_context.model.count_tokens(
                messages, request_context.model_settings, request_context.model_request_parameters
            )
        except NotImplementedError:
            self._provider_counts = False
            return False
        except Exception as exc:  # an endpoint that cannot count now: our count decides
            log.info("provider_token_count_failed", error=str(exc)[:200])
            self._provider_counts = False
            return False
        return 0 < usage.input_tokens <= room * (1 - PROVIDER_FRAMING_MARGIN)

    async def _fast_summary(self, extractive: str) -> str | None:
        if extractive in self._summaries:
            return self._summaries[extractive]
        assert self.summarize is not None
        try:
            text = await self.summarize(extractive)
        except Exception as exc:  # the extractive summary stands; the run goes on
            log.warning("fast_summary_failed", error=str(exc)[:200])
            text = None
        # The block keeps its first line (what it is, where the full results are).
        block = f"{extractive.splitlines()[0]}\n{text.strip()}" if text and text.strip() else None
        good = block if block and self.counter.count(block) < self.counter.count(extractive) else None
        self._summaries[extractive] = good or ""
        return good


def _swap_summary(messages: list[ModelMessage], old: str, new: str) -> list[ModelMessage]:
    out = list(messages)
    for i, m in enumerate(out):
        if isinstance(m, ModelRequest) and any(
            isinstance(p, UserPromptPart) and p.content == old for p in m.parts
        ):
            parts = [
                replace(p, content=new) if isinstance(p, UserPromptPart) and p.content == old else p
                for p in m.parts
            ]
            out[i] = replace(m, parts=parts)
            break
    return out
