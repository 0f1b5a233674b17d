"""Settings of the model path's context policies: model profiles, the token budget, large
payloads, and usage limits (``[model.profiles.*]``, ``[context]``, ``[limits.*]``).

Only the shape and validation of the settings live here (foundation layer); what they do is in
``policies/context`` and ``agent/routing.py``. This module must not import anything above config.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

from pydantic import Field

from devops_agent.config.section import Section

TokenizerName = Literal["o200k_base", "cl100k_base", "estimate"]


class ProfileOverride(Section):
    """What to change in a model's profile (``[model.profiles."provider:model"]``); a key left out
    keeps the shipped value, or what a local endpoint reports about itself."""

    context_window: int | None = Field(None, ge=512, description="tokens the model reads per request")
    max_output: int | None = Field(None, ge=16, description="most tokens it writes per answer")
    tools: bool | None = Field(None, description="whether it calls tools")
    json_schema: bool | None = Field(None, description="whether it can be held to a JSON schema")
    streaming: bool | None = None
    prompt_caching: bool | None = None
    input_per_mtok: Decimal | None = Field(None, ge=0, description="USD per million input tokens")
    output_per_mtok: Decimal | None = Field(None, ge=0, description="USD per million output tokens")
    cached_input_per_mtok: Decimal | None = Field(
        None, ge=0, description="USD per million input tokens read from the provider's prompt cache"
    )
    tokenizer: TokenizerName | None = Field(
        None, description="how to count its tokens offline: an OpenAI encoding, or the estimate"
    )


class PayloadSettings(Section):
    """When a tool result is summarized by type before a model reads it (the raw result is kept)."""

    max_chars: int = Field(12_000, ge=500, description="a result longer than this (as JSON) is summarized")
    max_items: int = Field(200, ge=5, description="a list longer than this is summarized")
    summary_chars: int = Field(4_000, ge=500, description="the longest summary of one result")


class ContextSettings(Section):
    """The token budget every model request is fitted into (``window − reserved output − margin``)."""

    budget: bool = Field(True, description="fit each request into the model's window; off: send all")
    reserve_output: int | None = Field(
        None,
        ge=64,
        description="tokens kept free for the answer; default: the profile's max_output, "
        "at most a quarter of the window",
    )
    keep_turns: int = Field(
        3, ge=1, description="the latest model turns (a call and its result) always sent whole"
    )
    summarizer: Literal["auto", "fast", "extractive"] = Field(
        "auto",
        description="who summarizes older turns: the fast model (auto: when model.fast is set) or an "
        "extractive summary made without a model",
    )
    token_counter: Literal["auto", "provider", "local", "estimate"] = Field(
        "auto",
        description="auto: the model's tokenizer when it ships here, else the calibrated estimate, "
        "with the provider's own count asked when the estimate is too close to the limit to tell",
    )
    payloads: PayloadSettings = Field(default_factory=PayloadSettings)


class LimitSet(Section):
    """Ceilings on one scope's model use; unset means no ceiling."""

    requests: int | None = Field(None, ge=1, description="model requests")
    tool_calls: int | None = Field(None, ge=1, description="tool calls")
    tokens: int | None = Field(None, ge=1, description="input + output tokens")
    cost_usd: Decimal | None = Field(None, gt=0, description="money, by the model's price table")

    def any(self) -> bool:
        return any(v is not None for v in (self.requests, self.tool_calls, self.tokens, self.cost_usd))


class LimitSettings(Section):
    """Usage limits per run, per session and per day (UTC, every session of this store together).
    A run that reaches one ends with a partial report that says which."""

    run: LimitSet = Field(default_factory=LimitSet)
    session: LimitSet = Field(default_factory=LimitSet)
    day: LimitSet = Field(default_factory=LimitSet)
