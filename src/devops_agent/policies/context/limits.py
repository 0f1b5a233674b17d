"""Usage limits per run, session and day, as a capability of the model loop.

``limits.run``, ``limits.session`` and ``limits.day`` (UTC, every session of the store) each cap
model requests, tool calls, tokens (input + output) and money (by the price table of each
model's profile, else pydantic-ai's price data, as the run's usage reports it).
:class:`UsageGuard` checks them where the run is about to spend:

* before each model request — its input tokens (as the budget will send them) and their price
  are counted in, so a request that would cross a token or money ceiling is not sent;
* before each tool call.

The answer being written when a ceiling is reached is not cut off: a response's output tokens
count after it arrived, so a run can pass a token or money ceiling by at most one answer. A model
the profile's table has no price for is priced after each response as the run's usage is
(pydantic-ai's price data); its input cannot be priced before the request.
Reaching a limit raises :class:`UsageLimitReached`; the model runner ends the run with a partial
report that says which limit stopped it. This module must not import the agent or interfaces.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext, ToolDefinition

from devops_agent.config.context import LimitSet, LimitSettings
from devops_agent.errors import DevOpsAgentError
from devops_agent.policies.context.profiles import MILLION, ModelProfile, response_cost
from devops_agent.policies.context.tokens import TextCounter, count_messages

Scope = Literal["run", "session", "day"]
Metric = Literal["requests", "tool_calls", "tokens", "cost_usd"]
SCOPES: tuple[Scope, ...] = ("run", "session", "day")


@dataclass
class Tally:
    """Usage added up: of a run as it goes, or of earlier runs (from the store)."""

    requests: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Decimal = Decimal(0)
    unpriced: int = 0
    """Responses whose model has no price (their cost is not in ``cost_usd``)."""

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def value(self, metric: Metric) -> Decimal:
        if metric == "cost_usd":
            return self.cost_usd
        return Decimal(self.tokens if metric == "tokens" else getattr(self, metric))

    @classmethod
    def from_usage(cls, usage: dict[str, Any] | None) -> Tally:
        """A run's ``usage`` (as ``run_finished`` carries it)."""
        u = usage or {}
        cost = u.get("cost_usd")
        return cls(
            requests=int(u.get("requests") or 0),
            tool_calls=int(u.get("tool_calls") or 0),
            input_tokens=int(u.get("input_tokens") or 0),
            output_tokens=int(u.get("output_tokens") or 0),
            cost_usd=Decimal(str(cost)) if cost is not None else Decimal(0),
            unpriced=0 if cost is not None or not u.get("requests") else 1,
        )

    def __add__(self, other: Tally) -> Tally:
        return Tally(
            self.requests + other.requests,
            self.tool_calls + other.tool_calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cost_usd + other.cost_usd,
            self.unpriced + other.unpriced,
        )


class UsageLimitReached(DevOpsAgentError):
    """A usage limit stopped the run."""

    def __init__(self, scope: Scope, metric: Metric, used: Decimal, ceiling: Decimal) -> None:
        self.scope, self.metric, self.used, self.ceiling = scope, metric, used, ceiling
        self.messages: list[ModelMessage] = []
        what = {
            "requests": "model requests",
            "tool_calls": "tool calls",
            "tokens": "tokens",
            "cost_usd": "USD",
        }
        super().__init__(
            f"the {scope} limit of {_fmt(ceiling)} {what[metric]} was reached ({_fmt(used)} would be used)",
            hint=f"raise limits.{scope}.{metric} in the config, or continue in the same session later"
            if scope != "run"
            else f"raise limits.run.{metric}, or ask a narrower question; the session can continue",
        )


def _fmt(value: Decimal) -> str:
    return f"{value:,.4f}".rstrip("0").rstrip(".") if value % 1 else f"{int(value):,}"


@dataclass
class UsageGuard(AbstractCapability[Any]):
    """Checks the limits before each model request and tool call (see the module docstring)."""

    limits: LimitSettings
    profile: ModelProfile
    counter: TextCounter
    prior: dict[Scope, Tally] = field(default_factory=dict)
    """Usage before this run: of the session's earlier runs, and of the day's."""
    run: Tally = field(default_factory=Tally)
    fixed_tokens: Callable[[ModelRequestContext], int] | None = None
    on_limit: Callable[[UsageLimitReached], None] | None = None
    reached: UsageLimitReached | None = None

    def _check(self, ctx: RunContext[Any], metric: Metric, adding: Decimal) -> None:
        if self.reached is not None:
            raise self.reached  # parallel tool calls of the same response: one stop, one event
        for scope in SCOPES:
            ceiling = _ceiling(getattr(self.limits, scope), metric)
            if ceiling is None:
                continue
            used = self.run.value(metric) + (self.prior[scope].value(metric) if scope in self.prior else 0)
            if used + adding > ceiling:
                error = UsageLimitReached(scope, metric, used + adding, ceiling)
                error.messages = list(ctx.messages)  # the run as far as it got, for its report
                self.reached = error
                if self.on_limit is not None:
                    self.on_limit(error)
                raise error

    async def prepare_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        fixed = self.fixed_tokens(request_context) if self.fixed_tokens else 0
        tokens = fixed + count_messages(self.counter, request_context.messages)
        self._check(ctx, "requests", Decimal(1))
        self._check(ctx, "tokens", Decimal(tokens))
        price = self.profile.input_per_mtok
        if price is not None:
            self._check(ctx, "cost_usd", tokens * price / MILLION)
        return request_context

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        self.add_response(response, self.profile)
        return response

    def add_response(self, response: ModelResponse, profile: ModelProfile) -> None:
        """Count one response (also the fast model's, made outside the loop)."""
        u = response.usage
        self.run.requests += 1
        self.run.input_tokens += u.input_tokens
        self.run.output_tokens += u.output_tokens
        cost, _source = response_cost(response, profile)  # priced as the run's usage reports it
        if cost is None:
            self.run.unpriced += 1
        else:
            self.run.cost_usd += cost

    async def before_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: dict[str, Any]
    ) -> dict[str, Any]:
        self._check(ctx, "tool_calls", Decimal(1))
        self.run.tool_calls += 1
        return args


def _ceiling(limits: LimitSet, metric: Metric) -> Decimal | None:
    value = getattr(limits, metric)
    return None if value is None else Decimal(str(value))


def any_limit(limits: LimitSettings) -> bool:
    return any(getattr(limits, s).any() for s in SCOPES)
