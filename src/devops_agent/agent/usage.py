"""Token usage and cost of one model run, from the responses it received.

The counts are what each response reported (``usage`` of the OpenAI-compatible answer, or the
provider's equivalent). The cost comes from the price table of the model's profile
(``policies/context/data/models.toml``, overridable per model in config), exactly, in decimal;
for a model the table has no price for, from pydantic-ai's price data (``genai-prices``, a
snapshot shipped in the package: no network); a model neither knows (a scripted model, an
unpriced remote) has tokens and no cost, never a guessed one. A local server's model costs 0.

``by_model`` splits a run whose requests went to several models (the loop's model, the fast
model's summaries and structured answers). This module only reads messages; it stores and
prints nothing (``cli/render.py`` prints it, the session service stores it with the run).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart

from devops_agent.policies.context.profiles import ModelProfile, response_cost

ProfileOf = Callable[[str | None], ModelProfile | None]
"""The profile of the model a response names (``ModelResponse.model_name``), if known."""

COST_PLACES = Decimal("1e-10")


def _blank() -> dict[str, Any]:
    return {
        "requests": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "cost": Decimal(0),
        "sources": set(),
    }


def _finish(acc: dict[str, Any], tool_calls: int | None = None) -> dict[str, Any]:
    cost: Decimal | None = acc["cost"]
    out = {
        "requests": acc["requests"],
        "input_tokens": acc["input_tokens"],
        "output_tokens": acc["output_tokens"],
        "total_tokens": acc["input_tokens"] + acc["output_tokens"],
        "cache_read_tokens": acc["cache_read_tokens"],
        "cache_write_tokens": acc["cache_write_tokens"],
        "cost_usd": None
        if cost is None or not acc["requests"]
        else float(cost.quantize(COST_PLACES).normalize()),
        "price_source": "+".join(sorted(acc["sources"])) or None,
    }
    if tool_calls is not None:
        out["tool_calls"] = tool_calls
    return out


def usage_of(answers: Iterable[tuple[str, ModelResponse, ModelProfile | None]]) -> dict[str, Any]:
    """Usage of ``(model name, response, its profile)`` triples: the totals, ``tool_calls`` the
    responses asked for, and ``by_model`` when more than one model answered."""
    total = _blank()
    per: dict[str, dict[str, Any]] = {}
    tool_calls = 0
    for name, m, profile in answers:
        acc = per.setdefault(name, _blank())
        cost, source = response_cost(m, profile)
        tool_calls += sum(1 for p in m.parts if isinstance(p, ToolCallPart))
        for target in (total, acc):
            target["requests"] += 1
            target["input_tokens"] += m.usage.input_tokens
            target["output_tokens"] += m.usage.output_tokens
            target["cache_read_tokens"] += m.usage.cache_read_tokens
            target["cache_write_tokens"] += m.usage.cache_write_tokens
            if source != "none":
                target["sources"].add(source)
            target["cost"] = None if cost is None or target["cost"] is None else target["cost"] + cost
    out = _finish(total, tool_calls)
    if len(per) > 1:
        out["by_model"] = {name: _finish(acc) for name, acc in per.items()}
    return out


def run_usage(
    messages: Iterable[ModelMessage], profile_of: ProfileOf | None = None, *, default_model: str | None = None
) -> dict[str, Any]:
    """``requests``, ``input_tokens``, ``output_tokens``, ``total_tokens``, cache tokens,
    ``tool_calls``, ``cost_usd`` (``None`` when any response's price is unknown) and
    ``price_source`` over the responses in ``messages``; ``by_model`` when several models answered."""
    answers = []
    for m in messages:
        if isinstance(m, ModelResponse):
            name = m.model_name or default_model or "?"
            answers.append((name, m, profile_of(name) if profile_of is not None else None))
    return usage_of(answers)


def merge_usage(runs: Iterable[dict[str, Any] | None]) -> dict[str, Any] | None:
    """Usages added up (a session's runs): counts summed, ``cost_usd`` only if every one has it."""
    used = [u for u in runs if u and u.get("requests")]
    if not used:
        return None
    keys = ("requests", "input_tokens", "output_tokens", "total_tokens", "tool_calls", "cache_read_tokens")
    total: dict[str, Any] = {k: sum(int(u.get(k) or 0) for u in used) for k in keys}
    costs = [u.get("cost_usd") for u in used]
    total["cost_usd"] = (
        float(sum((Decimal(str(c)) for c in costs if c is not None), Decimal(0)).normalize())
        if all(c is not None for c in costs)
        else None
    )
    models: dict[str, list[dict[str, Any]]] = {}
    for u in used:
        for name, sub in (u.get("by_model") or {}).items():
            models.setdefault(name, []).append(sub)
    if models:
        total["by_model"] = {name: merge_usage(subs) for name, subs in models.items()}
    return total
