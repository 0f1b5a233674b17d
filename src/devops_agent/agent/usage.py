"""Token usage and cost of one model run, from the responses it received.

The counts are what each response reported (``usage`` of the OpenAI-compatible answer, or the
provider's equivalent); the cost comes from pydantic-ai's price data (``genai-prices``, a snapshot
shipped in the package: no network). A model the price data does not know (a local server, a
scripted model) has tokens and no cost, never a guessed one.

This module only reads messages; it stores and prints nothing (``cli/render.py`` prints it).
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse


def run_usage(messages: Iterable[ModelMessage]) -> dict[str, Any]:
    """``requests``, ``input_tokens``, ``output_tokens``, ``total_tokens`` and ``cost_usd`` (``None``
    when any response's price is unknown) over the responses in ``messages``."""
    requests = input_tokens = output_tokens = 0
    cost: Decimal | None = Decimal(0)
    for m in messages:
        if not isinstance(m, ModelResponse):
            continue
        requests += 1
        input_tokens += m.usage.input_tokens
        output_tokens += m.usage.output_tokens
        if cost is not None:
            try:
                cost += m.cost().total_price
            except (LookupError, ValueError, AssertionError):  # unknown model, or usage not reported
                cost = None
    return {
        "requests": requests,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
        "cost_usd": None if cost is None or not requests else round(float(cost), 6),
    }
