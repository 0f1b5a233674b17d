"""Usage limits: how the guard prices what a run spent (the end-to-end limits are in
``tests/agent/test_usage.py``)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from genai_prices import Usage, calc_price
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.usage import RequestUsage

from devops_agent.agent.usage import usage_of
from devops_agent.config.context import LimitSettings
from devops_agent.policies.context.limits import UsageGuard
from devops_agent.policies.context.profiles import ModelProfile, shipped_profile
from devops_agent.policies.context.tokens import EstimateCounter


def response(model: str, provider: str) -> ModelResponse:
    return ModelResponse(
        parts=[TextPart("ok")],
        usage=RequestUsage(input_tokens=12_000, output_tokens=3_000),
        model_name=model,
        provider_name=provider,
    )


def guard(profile: ModelProfile) -> UsageGuard:
    return UsageGuard(limits=LimitSettings(), profile=profile, counter=EstimateCounter())


def test_a_model_the_table_does_not_price_counts_as_the_runs_usage_reports_it() -> None:
    # A profile without prices (a model our table lacks) for a model pydantic-ai's data prices.
    unpriced = ModelProfile(name="openai:gpt-4o", context_window=128_000, max_output=16_384)
    answer = response("gpt-4o", "openai")
    g = guard(unpriced)
    g.add_response(answer, unpriced)
    expected = calc_price(Usage(input_tokens=12_000, output_tokens=3_000), "gpt-4o", provider_id="openai")
    assert g.run.cost_usd == pytest.approx(expected.total_price)
    assert g.run.cost_usd > 0
    assert g.run.unpriced == 0
    reported = usage_of([("openai:gpt-4o", answer, unpriced)])
    assert Decimal(str(reported["cost_usd"])) == pytest.approx(g.run.cost_usd), "limit and report agree"


def test_the_table_prices_first_and_a_model_nobody_prices_stays_unpriced() -> None:
    table = shipped_profile("openai:gpt-4o")
    g = guard(table)
    g.add_response(response("gpt-4o", "openai"), table)
    assert g.run.cost_usd == table.cost(12_000, 3_000)
    nobody = ModelProfile(name="scripted", context_window=32_000, max_output=4_096)
    g.add_response(response("scripted", "scripted"), nobody)
    assert g.run.unpriced == 1
    assert g.run.cost_usd == table.cost(12_000, 3_000), "no guessed price"
