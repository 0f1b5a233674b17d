"""Model profiles: what a model reads and writes per request, what it supports, what it costs.

A :class:`ModelProfile` is looked up by the configured ``provider:model`` name in the table
shipped in ``data/models.toml`` (longest matching name first, then the provider's entry, then a
cautious default), then changed by what a local endpoint reports about itself
(:mod:`.discovery`), then by ``[model.profiles."provider:model"]`` in config — the person's word
is last. :meth:`ModelProfile.cost` prices one response's usage from the table, exactly (decimal).

This module holds data and arithmetic only: it makes no requests and must not import the agent.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass, fields, replace
from decimal import Decimal
from importlib import resources
from typing import TYPE_CHECKING, Any

from devops_agent.config.context import ProfileOverride, TokenizerName

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelResponse

MILLION = Decimal(1_000_000)

# Provider prefixes that name the same service (pydantic-ai spells some of them several ways).
_FAMILIES = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "google-vertex": "google-gla",
    "google": "google-gla",
}
# Providers that cache only at explicit cache points (the rest cache implicitly, or not at all).
EXPLICIT_CACHE_PROVIDERS = frozenset({"anthropic", "bedrock", "openrouter"})


@dataclass(frozen=True)
class ModelProfile:
    """Everything the context policies need to know about one model."""

    name: str
    context_window: int
    max_output: int
    tools: bool = True
    json_schema: bool = True
    streaming: bool = True
    prompt_caching: bool = False
    """The provider needs cache points set by the client (Anthropic): they are set when true."""
    local: bool = False
    input_per_mtok: Decimal | None = None
    output_per_mtok: Decimal | None = None
    cached_input_per_mtok: Decimal | None = None
    cache_write_per_mtok: Decimal | None = None
    long_context_from: int | None = None
    long_input_per_mtok: Decimal | None = None
    long_output_per_mtok: Decimal | None = None
    long_cached_input_per_mtok: Decimal | None = None
    tokenizer: TokenizerName = "estimate"
    source: str = "default"
    """Where the window came from: ``shipped``, ``provider``, ``default``, ``endpoint`` or ``config``."""

    @property
    def provider(self) -> str:
        return provider_family(self.name)

    @property
    def priced(self) -> bool:
        """Whether the table has prices for it (a local model costs nothing: priced at zero)."""
        return self.local or (self.input_per_mtok is not None and self.output_per_mtok is not None)

    def cost(
        self, input_tokens: int, output_tokens: int, cache_read_tokens: int = 0, cache_write_tokens: int = 0
    ) -> Decimal | None:
        """USD for one response, by the table; ``None`` when the model has no price.

        ``input_tokens`` counts every input token, cached ones included (as providers report it).
        """
        if self.local and self.input_per_mtok is None:
            return Decimal(0)
        if self.input_per_mtok is None or self.output_per_mtok is None:
            return None
        long = self.long_context_from is not None and input_tokens > self.long_context_from
        price_in = _first(self.long_input_per_mtok if long else None, self.input_per_mtok)
        price_out = _first(self.long_output_per_mtok if long else None, self.output_per_mtok)
        cached = _first(
            self.long_cached_input_per_mtok if long else None, self.cached_input_per_mtok, price_in
        )
        write = _first(self.cache_write_per_mtok, price_in)
        plain = max(input_tokens - cache_read_tokens - cache_write_tokens, 0)
        total = plain * price_in + cache_read_tokens * cached + cache_write_tokens * write
        return (total + output_tokens * price_out) / MILLION

    def with_overrides(self, override: ProfileOverride | dict[str, Any], source: str) -> ModelProfile:
        """A copy with the keys ``override`` sets; ``source`` is recorded when it sets the window."""
        values = override.model_dump(exclude_none=True) if isinstance(override, ProfileOverride) else override
        known = {f.name for f in fields(self)}
        values = {k: v for k, v in values.items() if k in known and v is not None}
        if not values:
            return self
        if "context_window" in values:
            values["source"] = source
        return replace(self, **values)


def response_cost(response: ModelResponse, profile: ModelProfile | None) -> tuple[Decimal | None, str]:
    """The cost of one response and where its price came from: the profile's table (``table``),
    else pydantic-ai's price data (``genai-prices``, a snapshot in the package: no network), else
    none (``none``: a scripted model, an unpriced remote; never a guessed price)."""
    u = response.usage
    if profile is not None and profile.priced:
        cost = profile.cost(u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens)
        if cost is not None:
            return cost, "table"
    try:
        return response.cost().total_price, "genai-prices"
    except (LookupError, ValueError, AssertionError):  # unknown model, or usage not reported
        return None, "none"


def _first(*prices: Decimal | None) -> Decimal:
    return next(p for p in prices if p is not None)


def provider_family(name: str) -> str:
    """``openai`` for ``openai:``, ``openai-chat:`` and ``openai-responses:`` names, and so on."""
    provider = name.split(":", 1)[0] if ":" in name else name
    return _FAMILIES.get(provider, provider)


def canonical(name: str) -> str:
    """``name`` with its provider spelled as the table spells it."""
    if ":" not in name:
        return name
    provider, model = name.split(":", 1)
    return f"{provider_family(provider)}:{model}"


@functools.cache
def _table() -> dict[str, Any]:
    text = resources.files("devops_agent.policies.context").joinpath("data/models.toml").read_text()
    return tomllib.loads(text)


def _prices(values: dict[str, Any]) -> dict[str, Any]:
    return {k: Decimal(str(v)) if k.endswith("_per_mtok") else v for k, v in values.items()}


def shipped_names() -> list[str]:
    """The model names the shipped table knows."""
    return sorted(_table()["models"])


def shipped_profile(name: str) -> ModelProfile:
    """The profile the shipped table gives ``name``: its longest matching model entry, else its
    provider's entry, else the default."""
    table = _table()
    key = canonical(name)
    models: dict[str, Any] = table["models"]
    matches = [m for m in models if key == m or key.startswith((m + "-", m + "@", m + ":"))]
    if matches:
        best = max(matches, key=len)
        return ModelProfile(name=name, source="shipped", **_prices(models[best]))
    provider = provider_family(name)
    if provider in table["providers"]:
        return ModelProfile(name=name, source="provider", **_prices(table["providers"][provider]))
    return ModelProfile(name=name, source="default", **_prices(table["default"]))


def profile_for(
    name: str,
    overrides: dict[str, ProfileOverride] | None = None,
    discovered: dict[str, Any] | None = None,
) -> ModelProfile:
    """The effective profile of ``name``: shipped, then what its endpoint reported, then config."""
    profile = shipped_profile(name)
    if discovered:
        profile = profile.with_overrides(discovered, "endpoint")
    override = (overrides or {}).get(name) or (overrides or {}).get(canonical(name))
    if override is not None:
        profile = profile.with_overrides(override, "config")
    return profile
