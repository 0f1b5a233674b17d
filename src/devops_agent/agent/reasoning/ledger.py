"""The evidence a run's agents read, by tool call id: what a finding may cite.

Every call of the orchestrator (from the session's conversation, so calls made before a pause
count) and of each specialist (from its stream) is kept with its status and the text its agent
read — masked, as the model saw it, so a quotation is checked against exactly what the model
could have quoted. This module only keeps and searches evidence; the critic judges with it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import (
    AgentStreamEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelRequest,
    RetryPromptPart,
    ToolReturnPart,
)

EXCERPT_CHARS = 1_500
"""Of each cited call's output, what the model critic is shown."""
OWN_TOOLS = frozenset({"propose_plan", "final_result"})
"""Calls of the orchestrator's bookkeeping, which read no evidence."""


def normalize(text: str) -> str:
    """Whitespace collapsed and double quotes dropped: a quotation of a JSON field (``"status":
    "error"``) and of a line (``status: error``) compare as the text they are."""
    return " ".join(text.replace('"', " ").replace("\\n", " ").split())


def _leaves(value: Any, key: str = "") -> Iterable[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, str(k))
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _leaves(v, key)
    elif value is not None:
        yield str(value)
        if key:
            yield f"{key}: {value}"


CALL_STAMPS = frozenset({"duration_ms", "source"})
"""What the pipeline stamps on a result about the call itself (how long it took, where it ran):
no evidence about the system, so not searched. A finding's "restarted 12 times" was once
"shown" by a 12.4 ms duration on a loaded machine."""


def _searched(content: Any) -> Any:
    meta = content.get("metadata") if isinstance(content, dict) else None
    if not isinstance(meta, dict) or not CALL_STAMPS & meta.keys():
        return content
    return {**content, "metadata": {k: v for k, v in meta.items() if k not in CALL_STAMPS}}


@dataclass
class CallEvidence:
    """One call: its tool, how it ended, who made it, and what its agent read."""

    call_id: str
    tool: str
    status: str
    agent: str | None
    content: Any
    _haystack: str = field(default="", repr=False)

    @property
    def haystack(self) -> str:
        if not self._haystack:
            content = _searched(self.content)
            parts = [json.dumps(content, ensure_ascii=False, default=str), *_leaves(content)]
            self._haystack = "\n".join(normalize(p) for p in parts)
        return self._haystack

    @property
    def failed(self) -> bool:
        return self.status not in ("success", "no_data")

    def excerpt(self, limit: int = EXCERPT_CHARS) -> str:
        text = self.content if isinstance(self.content, str) else json.dumps(self.content, default=str)
        return text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit} more characters]"


def _status(part: ToolReturnPart | RetryPromptPart) -> str:
    if isinstance(part, RetryPromptPart):
        return "error"
    if part.outcome != "success":
        return "error"
    content = part.content
    if isinstance(content, dict) and "status" in content:
        return str(content["status"])
    return "success"


@dataclass
class Ledger:
    """Every call the run's agents made, by id."""

    calls: dict[str, CallEvidence] = field(default_factory=dict)

    def add_part(self, part: ToolReturnPart | RetryPromptPart, agent: str | None = None) -> None:
        if not part.tool_name or part.tool_name in OWN_TOOLS:
            return
        content = part.content if isinstance(part, ToolReturnPart) else part.model_response()
        self.calls[part.tool_call_id] = CallEvidence(
            part.tool_call_id, part.tool_name, _status(part), agent, content
        )

    def add_messages(self, messages: Sequence[ModelMessage], agent: str | None = None) -> None:
        for message in messages:
            if isinstance(message, ModelRequest):
                for part in message.parts:
                    if isinstance(part, ToolReturnPart | RetryPromptPart):
                        self.add_part(part, agent)

    def add_event(self, ev: AgentStreamEvent, agent: str | None = None) -> None:
        if isinstance(ev, FunctionToolResultEvent) and isinstance(ev.part, ToolReturnPart | RetryPromptPart):
            self.add_part(ev.part, agent)

    def get(self, call_id: str) -> CallEvidence | None:
        return self.calls.get(call_id)

    def found_in(self, needle: str, call_ids: Iterable[str]) -> bool:
        """Whether ``needle`` appears (normalized) in the output of one of ``call_ids``."""
        wanted = normalize(needle)
        return bool(wanted) and any(
            wanted in c.haystack for cid in call_ids if (c := self.calls.get(cid)) is not None
        )

    def text_of(self, call_ids: Iterable[str]) -> str:
        return "\n".join(c.haystack for cid in call_ids if (c := self.calls.get(cid)) is not None)
