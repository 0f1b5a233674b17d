"""The model runner's context policies for one run, and the partial report a limit leaves.

:func:`context_policies` builds, from the settings and the model's profile, the capabilities the
model loop runs with — the token budget (:class:`~devops_agent.policies.context.budget.ContextBudget`,
with the fast model as summarizer of older turns when there is one), the usage limits
(:class:`~devops_agent.policies.context.limits.UsageGuard`, seeded with the session's and the
day's usage from the store), and prompt caching where the provider needs cache points — and
turns what they report into events (``context_compacted``, ``limit_reached``).
:func:`partial_report` is what a run stopped by a limit answers with: what it did and found so
far, and which limit stopped it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic_ai.capabilities import AbstractCapability, Caching
from pydantic_ai.direct import model_request
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model

from devops_agent.agent.models import model_profile
from devops_agent.agent.routing import ModelRouter
from devops_agent.agent.runners.base import RunScope
from devops_agent.agent.usage import usage_of
from devops_agent.events import ContextCompacted, LimitReached
from devops_agent.policies.context.budget import CompactionInfo, ContextBudget, Summarizer
from devops_agent.policies.context.compaction import Pins, headline
from devops_agent.policies.context.limits import (
    Scope,
    Tally,
    UsageGuard,
    UsageLimitReached,
    any_limit,
)
from devops_agent.policies.context.profiles import ModelProfile
from devops_agent.policies.context.tokens import TextCounter, text_counter
from devops_agent.report import Checked, Gap, Report, render_markdown
from devops_agent.store.run_usage import run_usages

SUMMARY_INSTRUCTIONS = """\
You compress the earlier steps of an investigation so that the investigator can go on with less
context. Keep every tool call id in [brackets], every error, count, name, host, pod, namespace,
file and time exactly as written; drop repetition and routine successes. Plain text, one line
per fact, at most {words} words."""


@dataclass
class ContextPolicies:
    """What the context policies of one run are made of."""

    profile: ModelProfile
    counter: TextCounter
    router: ModelRouter
    budget: ContextBudget | None = None
    guard: UsageGuard | None = None
    capabilities: list[AbstractCapability[Any]] = field(default_factory=list)

    def usage(self, loop_messages: list[ModelMessage], model_name: str | None) -> dict[str, Any]:
        """The run's usage: the loop's responses and the routed models' (summaries …) together."""
        name = model_name or self.profile.name
        answers = [(name, m, self.profile) for m in loop_messages if isinstance(m, ModelResponse)]
        usage = usage_of(answers + self.router.answers())
        if self.budget is not None and self.budget.records:
            usage["context"] = self.budget.summary()
        return usage


def _scripted(model: Model) -> bool:
    # A scripted (function or test) model makes its usage up: nothing to learn from it.
    return model.system in ("function", "test")


def _prior_usage(scope: RunScope) -> dict[Scope, Tally]:
    def total(usages: list[dict[str, Any]]) -> Tally:
        out = Tally()
        for u in usages:
            out = out + Tally.from_usage(u)
        return out

    midnight = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return {
        "session": total(run_usages(scope.store, session_id=scope.session.id)),
        "day": total(run_usages(scope.store, since=midnight)),
    }


def fast_summarizer(router: ModelRouter, guard: UsageGuard | None, words: int = 400) -> Summarizer:
    """Older turns summarized by the fast model; its requests go to the router's ledger."""

    async def summarize(text: str) -> str | None:
        route = router.route("summarize")
        messages: list[ModelMessage] = [
            ModelRequest(
                parts=[SystemPromptPart(SUMMARY_INSTRUCTIONS.format(words=words)), UserPromptPart(text)]
            )
        ]
        response = await model_request(route.model, messages)
        router.record("summarize", route, "ok", response)
        if guard is not None:
            guard.add_response(response, route.profile)
        return "".join(p.content for p in response.parts if isinstance(p, TextPart)) or None

    return summarize


def context_policies(
    scope: RunScope,
    model: Model,
    model_name: str | None,
    fast: Model | None = None,
    pins: Pins | None = None,
) -> ContextPolicies:
    """The context capabilities of a run of ``model`` (see the module docstring). ``pins``: the
    plan and findings every request carries (a planner updates the object as the run goes)."""
    settings = scope.settings
    profile = model_profile(settings.model, model_name or model.model_name)
    counter = text_counter(profile, settings.context.token_counter)
    router = ModelRouter.from_settings(settings.model, smart=model, smart_name=model_name, fast=fast)
    policies = ContextPolicies(profile, counter, router)
    if any_limit(settings.limits):

        def limit_hit(error: UsageLimitReached) -> None:
            scope.emit(
                LimitReached(
                    **scope.ids,
                    scope=error.scope,
                    limit=error.metric,
                    used=float(error.used),
                    ceiling=float(error.ceiling),
                )
            )

        policies.guard = UsageGuard(
            settings.limits, profile, counter, _prior_usage(scope), on_limit=limit_hit
        )
    if settings.context.budget:

        def compacted(info: CompactionInfo) -> None:
            c = info.compaction
            scope.emit(
                ContextCompacted(
                    **scope.ids,
                    request=info.request,
                    tokens_before=c.tokens_before,
                    tokens_after=c.tokens_after,
                    limit=info.limit,
                    window=info.window,
                    counter=info.counter,
                    replaced=c.replaced,
                    folded=c.folded,
                    cut=c.cut,
                    summarizer=info.summarizer,
                    duration_ms=round(info.duration_ms, 3),
                )
            )

        wants_fast = settings.context.summarizer in ("auto", "fast") and router.fast is not None
        policies.budget = ContextBudget(
            profile,
            counter,
            settings.context,
            session_id=scope.session.id,
            pins=pins if pins is not None else Pins(),
            summarize=fast_summarizer(router, policies.guard) if wants_fast else None,
            on_compaction=compacted,
            calibrate=not _scripted(model),
        )
        policies.capabilities.append(policies.budget)
        if policies.guard is not None:
            policies.guard.fixed_tokens = policies.budget.fixed_tokens
    if policies.guard is not None:
        policies.capabilities.append(policies.guard)  # after the budget: it sees what is sent
    if profile.prompt_caching:
        # System prompt and tool definitions as cache points; not the conversation, which the
        # budget rewrites as it compacts.
        policies.capabilities.append(Caching(retention=True, messages=False))
    return policies


def partial_report(
    scope: RunScope, messages: list[ModelMessage], error: UsageLimitReached, question: str | None
) -> tuple[str, dict[str, Any]]:
    """The Markdown and the report of a run a limit stopped: each call and what it returned, the
    model's last words, and a gap naming the limit."""
    calls: dict[str, ToolCallPart] = {}
    checks: list[Checked] = []
    said = ""
    for m in messages:
        for p in m.parts:
            if isinstance(p, ToolCallPart):
                calls[p.tool_call_id] = p
            elif isinstance(p, TextPart) and p.content.strip():
                said = p.content.strip()
            elif isinstance(p, ToolReturnPart) and p.tool_call_id in calls:
                line, _ = headline(p.content)
                ok = not (isinstance(p.content, dict) and p.content.get("status") in ("error", "no_data"))
                checks.append(
                    Checked(
                        step=p.tool_call_id, tool=p.tool_name, read=1 if ok else 0, unit="result", detail=line
                    )
                )
    answered = {c.step for c in checks}
    gaps = [
        Gap(step="run", tool="limits", reason=f"stopped before finishing: {error.message}", hint=error.hint)
    ]
    gaps += [
        Gap(step=cid, tool=call.tool_name, reason="called, but the run stopped before it ran")
        for cid, call in calls.items()
        if cid not in answered
    ]
    summary = (
        f"Stopped before finishing: {error.message}. This is a partial report of what the run "
        f"gathered ({len(checks)} tool results)"
        + (f"; the model's last words: {said[:600]}" if said else ".")
    )
    report = Report(
        title="Partial report (stopped by a usage limit)",
        question=question or "",
        summary=summary,
        gaps=gaps,
        checks=checks,
        stats={
            "stopped_by": {
                "scope": error.scope,
                "limit": error.metric,
                "used": float(error.used),
                "ceiling": float(error.ceiling),
            }
        },
    )
    report = scope.with_timeline(report)
    return render_markdown(report), report.model_dump(mode="json")


def find_limit(exc: BaseException | None, depth: int = 0) -> UsageLimitReached | None:
    """The limit behind ``exc`` (pydantic-ai may wrap it in an exception group of parallel calls)."""
    if exc is None or depth > 8:
        return None
    if isinstance(exc, UsageLimitReached):
        return exc
    for inner in getattr(exc, "exceptions", ()) or ():
        found = find_limit(inner, depth + 1)
        if found is not None:
            return found
    return find_limit(exc.__cause__ or exc.__context__, depth + 1)
