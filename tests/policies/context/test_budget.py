"""The token budget in the model loop: every request fits the window, each compaction is an
event, the session keeps everything, the fast model summarizes when there is one, and a request
that cannot fit is a clear error. Prompt caching is switched on where the provider needs it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from pydantic_ai.capabilities import Caching
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from devops_agent.agent.messages import load_message
from devops_agent.agent.runners.context import context_policies
from devops_agent.agent.scripted import ScriptedModel
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.events import ContextCompacted, ErrorEvent, RunFinished
from devops_agent.policies.context.budget import ContextBudget
from devops_agent.policies.context.tokens import TiktokenCounter, count_messages, count_tools
from devops_agent.store import Store
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry

WINDOW = 6_000
COUNTER = TiktokenCounter("o200k_base")


def registry() -> ToolRegistry:
    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("kit", "probes")

        @ts.tool(read_only=True)
        def read_probe(step: int) -> ToolResult:
            """Read the probe of one step."""
            body = " ".join(f"metric_{step}_{i}={i * step % 97}" for i in range(100))
            return ToolResult.ok(
                {"step": step, "error": f"probe {step} saw disk errors on sdb{step}", "body": body}
            )

        return ts

    reg = ToolRegistry()
    reg.add_toolset("kit", build)
    return reg


class Investigator:
    """Calls read_probe ``steps`` times, then answers; records the real size of every request."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.sizes: list[int] = []
        self.model = FunctionModel(self.respond, stream_function=self.stream, model_name="small:6k")

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        size = count_tools(COUNTER, info.function_tools) + COUNTER.count(info.instructions or "")
        self.sizes.append(size + count_messages(COUNTER, messages))
        step = len(self.sizes)
        if step <= self.steps:
            return ModelResponse(parts=[ToolCallPart("read_probe", {"step": step}, tool_call_id=f"p{step}")])
        return ModelResponse(parts=[])

    async def stream(self, messages: list[ModelMessage], info: AgentInfo) -> Any:
        response = self.respond(messages, info)
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        if calls:
            yield cast(
                DeltaToolCalls,
                {
                    0: DeltaToolCall(
                        name=calls[0].tool_name,
                        json_args=json.dumps(calls[0].args),
                        tool_call_id=calls[0].tool_call_id,
                    )
                },
            )
        else:
            yield "All probes read."


def settings_for(tmp_path: Path, window: int = WINDOW, **model: Any) -> Settings:
    profile = {"context_window": window, "max_output": 500, "tokenizer": "o200k_base"}
    return Settings(
        database_url=f"sqlite:///{tmp_path / 'agent.db'}",
        data_dir=tmp_path,
        model={"name": "small:6k", "max_tool_steps": 40, "profiles": {"small:6k": profile}} | model,
    )


def run(settings: Settings, model: Any) -> tuple[list[Any], RunFinished, list[ModelMessage]]:
    with Store(settings.resolved_database_url()) as store:
        service = SessionService(settings, store, registry=registry(), model=model, privacy=False)
        events, final = asyncio.run(service.run("Which disks fail?", mode="ask"))
        stored = [load_message(p) for p in store.load_messages(final.session_id)]
    return events, final, stored


def test_every_request_fits_and_the_session_keeps_every_result(tmp_path: Path) -> None:
    bot = Investigator(steps=24)
    events, final, stored = run(settings_for(tmp_path), bot.model)
    assert final.status == "completed"
    assert len(bot.sizes) == 25
    assert max(bot.sizes) <= WINDOW - 500, "every request left room for the answer"
    compactions = [e for e in events if isinstance(e, ContextCompacted)]
    assert compactions
    for e in compactions:
        assert e.tokens_after < e.tokens_before
        assert e.tokens_after <= e.limit
        assert e.window == WINDOW
        assert e.counter == "tokenizer:o200k_base"
        assert e.replaced or e.folded
    # Without the budget the last requests would not have fit.
    context = (final.usage or {})["context"]
    assert context["over_window_without_budget"] > 0
    assert context["tokens_sent_total"] < context["tokens_full_total"]
    assert context["compacted_requests"] == len(compactions)
    # The session's own record is whole: every result as the tool returned it.
    returns = [
        p for m in stored if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)
    ]
    assert len(returns) == 24
    assert all("body" in p.content["data"] for p in returns)


def test_without_the_budget_the_same_run_overflows(tmp_path: Path) -> None:
    bot = Investigator(steps=24)
    _, final, _ = run(
        settings_for(tmp_path).model_copy(update={"context": Settings(context={"budget": False}).context}),
        bot.model,
    )
    assert final.status == "completed"
    assert max(bot.sizes) > WINDOW, "the check above is not vacuous: this run needs the budget"


def test_a_request_that_cannot_fit_is_a_clear_failure(tmp_path: Path) -> None:
    bot = Investigator(steps=2)
    settings = settings_for(tmp_path, window=1_000)
    with Store(settings.resolved_database_url()) as store:
        service = SessionService(settings, store, registry=registry(), model=bot.model, privacy=False)
        events, final = asyncio.run(service.run("Which disks fail? " * 300, mode="ask"))
    assert final.status == "failed"
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert "cannot fit the model's window" in error.message
    assert "1,000-token window" in error.message
    assert "the question" in error.message
    assert "model.profiles" in (error.hint or "")
    assert bot.sizes == [], "nothing was sent"


def test_the_fast_model_summarizes_older_turns_and_its_cost_is_counted(tmp_path: Path) -> None:
    script = tmp_path / "fast.yaml"
    script.write_text('turns:\n  - text: "Earlier: probes [p1] to [p9] saw disk errors on sdb1-sdb9."\n')
    fast = f"scripted:{script}"
    settings = settings_for(
        tmp_path,
        fast=fast,
        profiles={
            "small:6k": {"context_window": WINDOW, "max_output": 500, "tokenizer": "o200k_base"},
            fast: {"input_per_mtok": "0.10", "output_per_mtok": "0.40"},
        },
    )
    bot = Investigator(steps=24)
    events, final, _ = run(settings, bot.model)
    assert final.status == "completed"
    assert max(bot.sizes) <= WINDOW - 500
    summarized = [e for e in events if isinstance(e, ContextCompacted) and e.summarizer == "fast"]
    assert summarized
    usage = final.usage or {}
    assert set(usage["by_model"]) == {"small:6k", fast}
    assert usage["by_model"][fast]["requests"] >= 1
    assert usage["by_model"][fast]["cost_usd"] > 0


def _scope(settings: Settings) -> Any:
    return cast(
        Any, SimpleNamespace(settings=settings, session=SimpleNamespace(id="s"), emit=lambda e: e, ids={})
    )


def test_prompt_caching_is_switched_on_where_the_provider_needs_cache_points() -> None:
    scripted = ScriptedModel()
    anthropic = context_policies(
        _scope(Settings(model={"name": "anthropic:claude-sonnet-4-5"})),
        scripted,
        "anthropic:claude-sonnet-4-5",
    )
    openai = context_policies(_scope(Settings(model={"name": "openai:gpt-4o"})), scripted, "openai:gpt-4o")
    assert any(isinstance(c, Caching) for c in anthropic.capabilities)
    assert not any(isinstance(c, Caching) for c in openai.capabilities), "OpenAI caches on its own"
    budget = next(c for c in anthropic.capabilities if isinstance(c, ContextBudget))
    assert budget.reserve == 50_000  # a quarter of the 200k window (its max output is 64k)
    assert budget.get_model_settings() == {"max_tokens": 50_000}


class CountingModel(FunctionModel):
    """A model whose provider counts tokens (as Anthropic's and Gemini's APIs do)."""

    def __init__(self, tokens: int) -> None:
        super().__init__(lambda m, i: ModelResponse(parts=[]), model_name="counting")
        self.tokens = tokens
        self.asked = 0

    async def count_tokens(self, messages: Any, model_settings: Any, model_request_parameters: Any) -> Any:
        from pydantic_ai.usage import RequestUsage

        self.asked += 1
        return RequestUsage(input_tokens=self.tokens)


def _prepare(budget: ContextBudget, model: Any, messages: list[ModelMessage]) -> Any:
    from pydantic_ai import RunContext
    from pydantic_ai.models import ModelRequestContext, ModelRequestParameters
    from pydantic_ai.usage import RunUsage

    ctx = RunContext(deps=None, model=model, usage=RunUsage())
    request = ModelRequestContext(
        model=model,
        messages=list(messages),
        model_settings=None,
        model_request_parameters=ModelRequestParameters(),
    )
    return asyncio.run(budget.prepare_model_request(ctx, request))


def test_the_providers_count_decides_when_the_estimate_is_too_close_to_tell() -> None:
    from devops_agent.policies.context.profiles import ModelProfile
    from devops_agent.policies.context.tokens import EstimateCounter

    turns: list[ModelMessage] = [ModelRequest.user_text_prompt("Which disks fail?")]
    for i in range(30):
        turns.append(ModelResponse(parts=[ToolCallPart("read_probe", {"step": i}, tool_call_id=f"p{i}")]))
        turns.append(
            ModelRequest(
                parts=[
                    ToolReturnPart(
                        "read_probe", {"status": "success", "data": "sdb " * 60}, tool_call_id=f"p{i}"
                    )
                ]
            )
        )
    counter = EstimateCounter()
    size = count_messages(counter, turns)
    # A window where our count is over the limit but within the estimate's margin of the room.
    profile = ModelProfile(name="anthropic:x", context_window=int(size * 1.05) + 100, max_output=100)
    fits = CountingModel(tokens=int(size * 0.9))
    budget = ContextBudget(profile, counter)
    assert size > budget.limit
    sent = _prepare(budget, fits, turns)
    assert fits.asked == 1
    assert sent.messages == turns, "the provider said it fits: sent whole"
    assert budget.records[-1].method == "provider"
    too_big = CountingModel(tokens=size * 2)
    budget = ContextBudget(profile, counter)
    sent = _prepare(budget, too_big, turns)
    assert too_big.asked == 1
    assert len(sent.messages) < len(turns) or sent.messages != turns, "compacted by our count"
    far_over = ContextBudget(
        ModelProfile(name="anthropic:x", context_window=size // 3, max_output=100), counter
    )
    never = CountingModel(tokens=1)
    _prepare(far_over, never, turns)
    assert never.asked == 0, "clearly over whatever the error: not asked"
