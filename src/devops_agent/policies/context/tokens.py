"""Counting tokens offline, and how far each way of counting can be off.

Three ways, best first (``context.token_counter``):

* **the provider's count** — asked by the budget (:mod:`.budget`) only when a local count is too
  close to the limit to tell, for providers whose API counts (Anthropic, Gemini);
* **the model's tokenizer** — tiktoken with OpenAI's encodings (:mod:`.encodings`) for models
  whose profile names one; exact for text;
* **the calibrated estimate** — a linear model over character classes (letters, digit groups,
  punctuation, line breaks, non-ASCII), fitted on one half of a mixed corpus of logs, JSON/YAML,
  code, metrics and prose and validated on the other (``benchmarks/token_count.py``).

Every counter carries ``margin``: the relative under-count the budget must allow for, from the
measured error of the method (``docs/benchmarks.md``). A count is of text as the model reads it;
message framing adds :data:`MESSAGE_OVERHEAD` per message and :data:`PART_OVERHEAD` per part.

This module counts; it decides nothing about what to send.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

import structlog
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.tools import ToolDefinition

from devops_agent.policies.context.encodings import EncodingUnavailable, encoding
from devops_agent.policies.context.profiles import ModelProfile

log = structlog.get_logger(__name__)

MESSAGE_OVERHEAD = 4
"""Tokens a chat format spends around each message (role markers, separators)."""
PART_OVERHEAD = 3
"""Tokens around each part of a message (a tool call's id and name, a result's framing)."""

# The estimate's features, from a pre-tokenizer shaped like the GPT ones: a word takes the single
# space before it; a capitalized word is one piece, an all-caps run another; digits go in groups
# of up to three; punctuation runs, line breaks and other whitespace runs are pieces of their own.
_PIECES = re.compile(r" ?[A-Z]?[a-z]+| ?[A-Z]+(?![a-z])|[0-9]{1,3}|\n+|[ \t]+|[^\sA-Za-z0-9]+")

# Fitted by ``benchmarks/token_count.py --fit`` (non-negative least squares against o200k_base on
# the calibration half of its corpus); the error on the held-back half is in docs/benchmarks.md.
ESTIMATE_WEIGHTS: dict[str, float] = {
    "short_words": 1.0823,
    "words": 0.8217,
    "long_letters": 0.2625,
    "caps": 0.5338,
    "digits": 1.241,
    "punct": 0.7218,
    "punct_extra": 0.0914,
    "newlines": 0.3429,
    "spaces": 0.9204,
    "long_spaces": 0.0833,
    "non_ascii": 1.551,
}
ESTIMATE_MARGIN = 0.25
"""The estimate's under-count on the held-back half: the 99th percentile of (true − est) / true
per 4,000-character chunk, the worse of o200k and cl100k."""
TOKENIZER_MARGIN = 0.02
"""A local tokenizer counts text exactly; this covers the provider's framing of tools and messages,
which the per-message and per-part overheads only approximate. The provider's reported usage
corrects the rest from the second request on (:class:`Calibration`)."""


def estimate_features(text: str) -> dict[str, float]:
    """The estimate's inputs for ``text``."""
    f = dict.fromkeys(ESTIMATE_WEIGHTS, 0.0)
    for piece in _PIECES.findall(text):
        if len(piece) > 1 and piece[0] == " " and piece[1].isalpha():
            piece = piece[1:]
        first = piece[0]
        n = len(piece)
        if first.isascii() and first.isalpha():
            if n > 1 and piece.isupper():
                f["caps"] += 1
                f["long_letters"] += max(0, n - 3)
            elif n <= 3:
                f["short_words"] += 1
            else:
                f["words"] += 1
                f["long_letters"] += max(0, n - 7)
        elif first.isdigit():
            f["digits"] += 1
        elif first == "\n":
            f["newlines"] += 1
        elif first in " \t":
            f["spaces"] += 1
            if n > 1:
                f["long_spaces"] += 1
        else:
            f["punct"] += 1
            f["punct_extra"] += n - 1
    f["non_ascii"] = len(text.encode("utf-8")) - len(text)
    return f


def estimate_tokens(text: str, weights: dict[str, float] | None = None) -> int:
    """The calibrated estimate of ``text``'s tokens."""
    w = weights or ESTIMATE_WEIGHTS
    f = estimate_features(text)
    return max(1 if text else 0, round(sum(w[k] * v for k, v in f.items())))


class TextCounter(Protocol):
    """Counts the tokens of one text."""

    method: str
    margin: float
    memo: dict[int, tuple[Any, tuple[Any, ...], int]]
    """Tokens of message parts already counted, by identity (:func:`count_part`)."""

    def count(self, text: str) -> int: ...


@dataclass
class EstimateCounter:
    """The calibrated estimate; no tokenizer needed."""

    method: str = "estimate"
    margin: float = ESTIMATE_MARGIN
    memo: dict[int, tuple[Any, tuple[Any, ...], int]] = field(default_factory=dict, repr=False)

    def count(self, text: str) -> int:
        return _estimate_cached(text)


@lru_cache(maxsize=16_384)
def _estimate_cached(text: str) -> int:
    return estimate_tokens(text)


@dataclass
class TiktokenCounter:
    """An OpenAI encoding through tiktoken."""

    encoding_name: str
    method: str = "tokenizer"
    margin: float = TOKENIZER_MARGIN
    memo: dict[int, tuple[Any, tuple[Any, ...], int]] = field(default_factory=dict, repr=False)
    _enc: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.method = f"tokenizer:{self.encoding_name}"
        self._enc = encoding(self.encoding_name)

    def count(self, text: str) -> int:
        return _tiktoken_cached(self.encoding_name, self._enc, text)


@lru_cache(maxsize=16_384)
def _tiktoken_cached(name: str, enc: Any, text: str) -> int:
    return len(enc.encode_ordinary(text))


def text_counter(profile: ModelProfile, choice: str = "auto") -> TextCounter:
    """The best local counter for ``profile`` under ``context.token_counter`` = ``choice``."""
    if choice != "estimate" and profile.tokenizer != "estimate":
        try:
            return TiktokenCounter(profile.tokenizer)
        except EncodingUnavailable as exc:
            log.warning("tokenizer_unavailable", encoding=profile.tokenizer, error=str(exc))
    return EstimateCounter()


# -- messages -----------------------------------------------------------------------------------


def part_text(part: Any) -> str:
    """The text of a message part as a provider serializes it for the model."""
    if isinstance(part, SystemPromptPart | TextPart | ThinkingPart):
        return part.content
    if isinstance(part, UserPromptPart):
        return part.content if isinstance(part.content, str) else _json(part.content)
    if isinstance(part, ToolCallPart):
        return f"{part.tool_name} {part.args_as_json_str()}"
    if isinstance(part, ToolReturnPart):
        return part.model_response_str()
    if isinstance(part, RetryPromptPart):
        return part.model_response()
    return _json(getattr(part, "content", ""))


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)


def count_part(counter: TextCounter, part: Any) -> int:
    """Tokens of one part. Every request of a run counts the whole history again (the budget, the
    usage limits), and serializing a tool call's arguments or a result is most of that cost: a
    part seen before, with the very same name, content and arguments objects, is not serialized
    again (the memo holds the part, so its id cannot be reused while it is there)."""
    name, content, args = (
        getattr(part, "tool_name", None),
        getattr(part, "content", None),
        getattr(part, "args", None),
    )
    seen = counter.memo.get(id(part))
    if seen is not None and seen[0] is part:
        # Spelled out, not ``all(… zip …)``: this runs for every part of every request (a
        # generator here was most of the budget's per-request cost).
        known = seen[1]
        if known[0] is name and known[1] is content and known[2] is args:
            return seen[2]
    fields = (name, content, args)
    tokens = counter.count(part_text(part)) + PART_OVERHEAD
    if len(counter.memo) >= _MEMO_MAX:  # a counter lives for a run; a very long one starts over
        counter.memo.clear()
    counter.memo[id(part)] = (part, fields, tokens)
    return tokens


_MEMO_MAX = 4096


def count_message(counter: TextCounter, message: ModelMessage) -> int:
    """Tokens of one message; its ``instructions`` are not counted here: a request's
    instructions are counted once, from the request parameters (:func:`count_instructions`)."""
    total = MESSAGE_OVERHEAD
    for part in message.parts:  # a loop, not a generator: every part of every request comes here
        total += count_part(counter, part)
    return total


def count_instructions(counter: TextCounter, parts: Sequence[Any] | None) -> int:
    """Tokens of a request's instructions (``ModelRequestParameters.instruction_parts``)."""
    return sum(counter.count(getattr(p, "content", "") or "") + PART_OVERHEAD for p in parts or ())


def count_messages(counter: TextCounter, messages: Iterable[ModelMessage]) -> int:
    total = 0
    for message in messages:
        total += count_message(counter, message)
    return total


def count_tools(counter: TextCounter, tools: Sequence[ToolDefinition]) -> int:
    """Tokens of the tool definitions a request carries (name, description, JSON schema)."""
    return sum(_count_tool(counter, t) for t in tools)


def _count_tool(counter: TextCounter, tool: ToolDefinition) -> int:
    # Definitions are made anew for each request, their schemas are not: memoized by the schema.
    schema, fields = tool.parameters_json_schema, (tool.name, tool.description)
    seen = counter.memo.get(id(schema))
    if seen is not None and seen[0] is schema and seen[1] == fields:
        return seen[2]
    tokens = counter.count(f"{tool.name} {tool.description or ''} {_json(schema)}") + PART_OVERHEAD
    counter.memo[id(schema)] = (schema, fields, tokens)
    return tokens


@dataclass
class Calibration:
    """What the provider's reported usage says about our counts, per run: the budget scales its
    counts by the largest ratio seen (reported input tokens ÷ our count of what was sent)."""

    ratio: float = 1.0
    observed: int = 0

    def observe(self, counted: int, reported: int) -> None:
        if counted <= 0 or reported <= 0:
            return
        seen = reported / counted
        self.ratio = seen if self.observed == 0 else max(self.ratio, seen)
        self.observed += 1

    def scale(self, tokens: int) -> int:
        # Only ever upwards: a count found too high stays (the budget errs on the safe side).
        return math.ceil(tokens * max(self.ratio, 1.0)) if self.observed else tokens


def is_response(message: ModelMessage) -> bool:
    return isinstance(message, ModelResponse)
