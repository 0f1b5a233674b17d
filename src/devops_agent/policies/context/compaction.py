"""Fitting a conversation into a token limit: what is kept, summarized or cut, in order.

:func:`compact` works on the messages of one model request (never on the stored session) in
tiers, stopping at the first that fits ``limit``:

1. **older tool results → summaries.** Every tool result older than the latest ``keep_turns``
   turns becomes its one-line summary (a digest's headline, an error, the start of the data)
   with a pointer to the full result (``query_result`` / ``devops-agent sessions output``).
2. **older turns → one summary.** The oldest turns are folded, oldest first, into a summary block
   in the first request: one line per tool call (tool, arguments, call id, the result's
   headline) and the model's own words; lines that carry a signal (an error, error groups,
   anomalies) are kept longest. A caller may swap that block for the fast model's summary.
3. **latest turns.** Their results become summaries too, then the newest ones are cut (head and
   tail kept, with the pointer).

Always kept: the first request (system prompt, the session's first question), the plan and
findings (:class:`Pins`), the current question, and the turns the tiers have not reached. A unit
of compaction is a model response with the requests that answer it, so a tool call is never
separated from its result. This module is pure: it counts with the counter it is given.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from devops_agent.policies.context.tokens import TextCounter, count_message, count_messages

_SHRINK_TRIES = 6
_UNBOUNDED = 10**9
SUMMARY_TAG = "[context summary]"
PINS_TAG = "[plan and findings]"
HEADLINE_CHARS = 240
ARGS_CHARS = 80


@dataclass
class Pins:
    """What every request carries whatever is compacted: the plan and the findings so far."""

    plan: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)

    def render(self) -> str | None:
        if not (self.plan or self.findings):
            return None
        lines = [PINS_TAG]
        if self.plan:
            lines += ["Plan:", *(f"{i}. {s}" for i, s in enumerate(self.plan, 1))]
        if self.findings:
            lines += ["Findings so far:", *(f"- {f}" for f in self.findings)]
        return "\n".join(lines)


@dataclass
class Compaction:
    """What :func:`compact` did."""

    messages: list[ModelMessage]
    tokens_before: int
    tokens_after: int
    replaced: list[str] = field(default_factory=list)
    """Call ids whose results are sent as one-line summaries."""
    folded: list[str] = field(default_factory=list)
    """Call ids of the turns folded into the summary block."""
    folded_turns: int = 0
    cut: list[str] = field(default_factory=list)
    """Call ids of the latest results cut to fit."""
    tiers: list[str] = field(default_factory=list)
    summary: str | None = None
    """The summary block as sent (extractive) — a caller may replace it by a shorter one."""

    @property
    def fits(self) -> bool:
        return bool(self.messages)


def pointer(session_id: str | None, call_id: str) -> str:
    where = f"`devops-agent sessions output {session_id} {call_id}`" if session_id else "the session"
    return f"full result kept: query_result(call_id={call_id!r}) or {where}"


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def headline(content: Any) -> tuple[str, bool]:
    """The one-line summary of a tool result's content, and whether it carries a signal."""
    if isinstance(content, dict) and "status" in content:
        status = content.get("status")
        data = content.get("data")
        if status == "error":
            return f"error: {_short(str(content.get('error')), HEADLINE_CHARS)}", True
        if status == "no_data":
            return f"no data: {_short(str(content.get('hint') or ''), HEADLINE_CHARS)}", False
        if isinstance(data, dict) and isinstance(data.get("headline"), str):
            line = data["headline"]
            quiet = "no error" in line or "no anomaly" in line
            return _short(line, HEADLINE_CHARS), data.get("kind") in ("logs", "metrics") and not quiet
        text = data if isinstance(data, str) else json.dumps(data, default=str, ensure_ascii=False)
        return _short(text, HEADLINE_CHARS), False
    text = content if isinstance(content, str) else json.dumps(content, default=str, ensure_ascii=False)
    return _short(text, HEADLINE_CHARS), False


def _summarized_return(part: ToolReturnPart, session_id: str | None) -> ToolReturnPart:
    line, _ = headline(part.content)
    status = part.content.get("status", "success") if isinstance(part.content, dict) else "success"
    content = {"status": status, "summary": line, "compacted": pointer(session_id, part.tool_call_id)}
    return replace(part, content=content)


def _cut_return(part: ToolReturnPart, session_id: str | None, chars: int) -> ToolReturnPart:
    text = part.model_response_str()
    if len(text) <= chars:
        return part
    keep = max(chars - 200, 100)
    cut = text[: keep * 2 // 3] + f" … [{len(text) - keep} characters cut] … " + text[-keep // 3 :]
    return replace(part, content={"cut_to_fit": cut, "compacted": pointer(session_id, part.tool_call_id)})


def split_units(messages: Sequence[ModelMessage]) -> tuple[list[ModelMessage], list[list[ModelMessage]]]:
    """The leading requests, then units of one response and the requests after it."""
    head: list[ModelMessage] = []
    units: list[list[ModelMessage]] = []
    for m in messages:
        if isinstance(m, ModelResponse):
            units.append([m])
        elif units:
            units[-1].append(m)
        else:
            head.append(m)
    return head, units


def _map_returns(unit: list[ModelMessage], fn: Any) -> list[ModelMessage]:
    out: list[ModelMessage] = []
    for m in unit:
        if isinstance(m, ModelRequest):
            parts = [fn(p) if isinstance(p, ToolReturnPart) else _short_retry(p) for p in m.parts]
            out.append(replace(m, parts=parts))
        else:
            out.append(m)
    return out


def _short_retry(part: Any) -> Any:
    if isinstance(part, RetryPromptPart) and isinstance(part.content, str) and len(part.content) > 300:
        return replace(part, content=_short(part.content, 300))
    return part


def _call_ids(unit: Sequence[ModelMessage]) -> list[str]:
    return [
        p.tool_call_id
        for m in unit
        if isinstance(m, ModelResponse)
        for p in m.parts
        if isinstance(p, ToolCallPart)
    ]


QUIET, SIGNAL, WORDS = 0, 1, 2
"""Priorities of summary lines: a tool call whose result showed nothing wrong; one that showed an
error, error groups or anomalies; the words of the user and the model (their findings)."""


def _unit_lines(unit: Sequence[ModelMessage]) -> list[tuple[str, int]]:
    """Extractive summary lines of one unit with their priority: the model's words, one line per
    tool call, the user's words."""
    lines: list[tuple[str, int]] = []
    returns = {
        p.tool_call_id: p.content
        for m in unit
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    }
    for m in unit:
        if isinstance(m, ModelResponse):
            for p in m.parts:
                if isinstance(p, TextPart) and p.content.strip():
                    lines.append((f"model: {_short(p.content, 300)}", WORDS))
                elif isinstance(p, ToolCallPart):
                    args = _short(p.args_as_json_str(), ARGS_CHARS)
                    line, signal = headline(returns.get(p.tool_call_id, "(no result)"))
                    lines.append(
                        (f"{p.tool_name}({args}) [{p.tool_call_id}] → {line}", SIGNAL if signal else QUIET)
                    )
        else:
            for q in m.parts:
                if isinstance(q, UserPromptPart) and isinstance(q.content, str):
                    lines.append((f"user: {_short(q.content, 300)}", WORDS))
    return lines


def summary_block(
    lines: Sequence[tuple[str, int]], calls: int, session_id: str | None, budget_chars: int
) -> str:
    """The summary of folded turns within ``budget_chars``. Lines give way by priority, lowest
    first: quiet tool lines lose their results, then are counted instead of listed; then signal
    tool lines are shortened, then the oldest counted; the user's and the model's words go last
    (shortened, then the oldest counted)."""
    where = f"`devops-agent sessions output {session_id} CALL_ID`" if session_id else "the session"
    header = (
        f"{SUMMARY_TAG} {calls} earlier tool calls, summarized to fit the context window; each full "
        f"result: query_result(call_id=…) or {where}."
    )
    items: list[tuple[str, int]] = list(lines)
    hidden = 0

    def render() -> str:
        shown = [f"- {t}" for t, _ in items]
        more = [f"- … {hidden} more earlier lines left out to fit"] if hidden else []
        return "\n".join([header, *more, *shown])

    def drop_oldest(priority: int) -> None:
        nonlocal items, hidden
        while len(render()) > budget_chars:
            index = next((i for i, (_, p) in enumerate(items) if p == priority), None)
            if index is None:
                return
            items.pop(index)
            hidden += 1

    def shorten(priority: int, chars: int) -> None:
        nonlocal items
        items = [(_short(t, chars) if p == priority else t, p) for t, p in items]

    for priority, chars in ((QUIET, ARGS_CHARS + 40), (SIGNAL, 140), (WORDS, 160)):
        if len(render()) > budget_chars:
            shorten(priority, chars)
        if len(render()) > budget_chars:
            drop_oldest(priority)
    return render()


def _with_head_parts(head: list[ModelMessage], extra: list[str]) -> list[ModelMessage]:
    if not extra:
        return head
    if not head or not isinstance(head[0], ModelRequest):
        return [ModelRequest(parts=[UserPromptPart(t) for t in extra]), *head]
    first = head[0]
    return [replace(first, parts=[*first.parts, *(UserPromptPart(t) for t in extra)]), *head[1:]]


def _latest_prompt(messages: Sequence[ModelMessage]) -> UserPromptPart | None:
    for m in reversed(messages):
        if isinstance(m, ModelRequest):
            for p in reversed(m.parts):
                if isinstance(p, UserPromptPart):
                    return p
    return None


def compact(
    messages: Sequence[ModelMessage],
    *,
    counter: TextCounter,
    fixed_tokens: int,
    limit: int,
    keep_turns: int = 3,
    session_id: str | None = None,
    pins: Pins | None = None,
) -> Compaction:
    """``messages`` fitted into ``limit`` tokens (``fixed_tokens``: instructions and tool
    definitions); ``Compaction.messages`` is empty when even the pinned part cannot fit."""
    before = fixed_tokens + count_messages(counter, messages)
    pinned = (pins or Pins()).render()
    head, units = split_units(messages)
    result = Compaction(list(messages), before, before)
    if before <= limit and not pinned:
        return result
    if before <= limit:
        result.messages = _with_head_parts(head, [pinned] if pinned else []) + [m for u in units for m in u]
        result.tokens_after = fixed_tokens + count_messages(counter, result.messages)
        return result
    latest = _latest_prompt(messages)
    n = len(units)
    older = max(n - keep_turns, 0)

    def total(msgs: Sequence[ModelMessage]) -> int:
        return fixed_tokens + count_messages(counter, msgs)

    # Tier 1: older results become their summaries.
    summarized = [_map_returns(u, lambda p: _summarized_return(p, session_id)) for u in units[:older]]
    units = summarized + units[older:]
    result.replaced = [cid for u in units[:older] for cid in _call_ids(u)]
    result.tiers.append("summarize_old_results")
    extra = [pinned] if pinned else []
    candidate = _with_head_parts(head, extra) + [m for u in units for m in u]
    if total(candidate) <= limit:
        return _done(result, candidate, total(candidate))

    # Tier 2: fold the oldest turns into one summary block, oldest first, their lines whole;
    # only once every older turn is folded does the block itself give way (lowest priority
    # lines first, see summary_block).
    result.tiers.append("fold_old_turns")
    lines: list[tuple[str, int]] = []
    folded_ids: list[str] = []
    prompt_folded = False
    head_now = _with_head_parts(head, extra)
    question: list[str] = []
    rest: list[ModelMessage] = [m for u in units for m in u]
    for j in range(1, older + 1):
        unit = units[j - 1]
        lines += _unit_lines(unit)
        folded_ids += _call_ids(unit)
        prompt_folded = prompt_folded or any(
            p is latest for m in unit if isinstance(m, ModelRequest) for p in m.parts
        )
        rest = [m for u in units[j:] for m in u]
        question = [latest.content] if prompt_folded and latest and isinstance(latest.content, str) else []
        block = summary_block(lines, len(folded_ids), session_id, _UNBOUNDED)
        head_now = _with_head_parts(head, [*extra, block, *question])
        result.folded, result.folded_turns, result.summary = list(folded_ids), j, block
        used = total(head_now + rest)
        if used <= limit:
            return _done(result, head_now + rest, used)
    if lines:
        room = limit - total(_with_head_parts(head, [*extra, *question]) + rest)
        # Characters per token of a summary line are ~3.5-4; start at 3 and shrink by what the
        # count says (odd text, hashes and ids, takes more tokens per character).
        chars = max(room, 0) * 3
        for _ in range(_SHRINK_TRIES):
            block = summary_block(lines, len(folded_ids), session_id, chars)
            head_now = _with_head_parts(head, [*extra, block, *question])
            result.summary = block
            used = total(head_now + rest)
            if used <= limit:
                return _done(result, head_now + rest, used)
            block_tokens = max(counter.count(block), 1)
            chars = int(len(block) * max(block_tokens - (used - limit), 0) / block_tokens * 0.95)
    units = units[older:]

    # Tier 3: the latest turns' results become summaries, all but the newest turn's; then the
    # newest turn's results are cut to share what room is left.
    result.tiers.append("summarize_latest_results")
    for k in range(len(units) - 1):
        units[k] = _map_returns(units[k], lambda p: _summarized_return(p, session_id))
        result.replaced += _call_ids(units[k])
        candidate = head_now + [m for u in units for m in u]
        if total(candidate) <= limit:
            return _done(result, candidate, total(candidate))
    candidate = head_now + [m for u in units for m in u]
    if units:
        result.tiers.append("cut_latest_results")
        newest = units[-1]
        room = limit - total(head_now + [m for u in units[:-1] for m in u] + newest[:1])
        returns = sum(
            1
            for m in newest[1:]
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart)
        )
        per = max(room, 0) * 3 // max(returns, 1)
        result.cut = _call_ids(newest)
        for _ in range(_SHRINK_TRIES):
            units[-1] = _map_returns(newest, lambda p, per=per: _cut_return(p, session_id, per))
            candidate = head_now + [m for u in units for m in u]
            used = total(candidate)
            if used <= limit:
                return _done(result, candidate, used)
            per = int(per * max(room, 1) / max(room + used - limit, 1) * 0.9)
            if per < 100:
                break
    result.messages = []
    result.tokens_after = total(candidate)
    return result


def _done(result: Compaction, messages: list[ModelMessage], tokens: int) -> Compaction:
    result.messages = messages
    result.tokens_after = tokens
    return result


def message_tokens(counter: TextCounter, messages: Sequence[ModelMessage]) -> list[int]:
    """Tokens per message (for reports)."""
    return [count_message(counter, m) for m in messages]
