"""A deterministic scripted model shipped with the package, for tests, demos and docs.

A script is YAML or a dict: ``turns`` (the same turns for every run) or ``runs`` (a list of turn
lists, one per user prompt in the session, so a resumed session follows the next run's turns).
A turn is ``tool_calls: [{tool, args}]``, ``text: "..."`` or ``output: {...}`` (a structured
answer: the arguments of the agent's output tool, e.g. a report). Text may use ``{prompt}``
(this run's prompt), ``{previous_prompts}`` (earlier prompts of the session, proving that history
survived a resume), ``{results}`` (one line per tool result of this run) and ``{tool_count}``;
arguments and outputs may name an earlier call's id as ``{call:TOOL}`` (its last call) or
``{call:TOOL#N}`` (its N-th), so a script can cite the calls it made, and ``{call:ROLE/TOOL}``
the last call another agent of the run made (a synthesizer citing a specialist's call); a string
argument may also use ``{prompt}`` (one script then serves many runs, each calling with its own
values). When the
script runs out,
the model answers with a fixed closing text, or an empty structured answer (``{}``) when the
agent accepts no text.

``agents`` scripts the other agents of a reasoning run by the role their instructions name
(:func:`~devops_agent.agent.runtime.role_of`): a specialist (``logs``), the ``critic``, the
``synthesizer``; each has ``turns`` (every invocation) or ``runs`` (one turn list per
invocation, in the order they start). The orchestrator plays the top-level ``turns``/``runs``; a
re-plan the critic asks for is a new prompt of the conversation, so it plays the next run.

It is a pydantic-ai ``FunctionModel``, so it drives the real agent loop, streaming included; no
network is involved.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field
from pydantic_ai import ModelMessagesTypeAdapter
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from devops_agent.agent.runtime import role_of
from devops_agent.errors import ConfigError
from devops_agent.policies.context.compaction import PINS_TAG, SUMMARY_TAG

END_TEXT = "The script has no more turns; nothing further to report."


class ScriptedToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    text: str | None = None
    output: dict[str, Any] | None = None


class AgentScript(BaseModel):
    """The turns of one agent: the same ``turns`` each time, or ``runs`` by invocation."""

    model_config = ConfigDict(extra="forbid")
    turns: list[Turn] = Field(default_factory=list)
    runs: list[list[Turn]] = Field(default_factory=list)

    def turns_for_run(self, run_index: int) -> list[Turn]:
        if self.runs:
            return self.runs[run_index] if run_index < len(self.runs) else []
        return self.turns


class Script(AgentScript):
    agents: dict[str, AgentScript] = Field(default_factory=dict)


ORCHESTRATOR = "orchestrator"
_CALL_REF = re.compile(r"\{call:([\w.:/-]+?)(?:#(\d+))?\}")


def load_script(path: Path | None = None) -> Script:
    """Load a script file; ``None`` loads the built-in demo script."""
    try:
        if path is None:
            text = resources.files("devops_agent.agent").joinpath("scripts/demo.yaml").read_text()
        else:
            text = path.read_text()
        return Script.model_validate(yaml.safe_load(text) or {})
    except OSError as exc:
        raise ConfigError(f"cannot read model script {path}: {exc.strerror}") from exc
    except (yaml.YAMLError, ValueError) as exc:
        raise ConfigError(f"invalid model script {path}: {exc}", hint="see docs/models.md") from exc


def _prompts(messages: list[ModelMessage]) -> list[str]:
    """The user's prompts, in order; what the context budget adds to a request (the pinned plan
    and findings, a summary of folded turns) is not a prompt, so it does not start a run."""
    out: list[str] = []
    for m in messages:
        if isinstance(m, ModelRequest):
            out.extend(
                p.content
                for p in m.parts
                if isinstance(p, UserPromptPart)
                and isinstance(p.content, str)
                and not p.content.startswith(_CONTEXT_TAGS)
            )
    return out


def _current_run(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Messages since the last user prompt (the current run)."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts):
            return messages[i:]
    return messages


def _summarize(content: Any) -> str:
    if isinstance(content, dict) and "status" in content:
        status = content["status"]
        if status == "error":
            return f"error: {content.get('error')}"
        data = content.get("data")
        text = data if isinstance(data, str) else json.dumps(data, default=str)
        return f"{status}: {text[:160]}"
    return str(content)[:160]


def _call_ids(messages: list[ModelMessage]) -> dict[str, list[str]]:
    """The ids of the calls in ``messages``, by tool, in order."""
    ids: dict[str, list[str]] = {}
    for m in messages:
        if isinstance(m, ModelResponse):
            for part in m.parts:
                if isinstance(part, ToolCallPart):
                    ids.setdefault(part.tool_name, []).append(part.tool_call_id)
    return ids


def _cite(value: Any, ids: dict[str, list[str]]) -> Any:
    """``value`` with every ``{call:TOOL}`` / ``{call:TOOL#N}`` replaced by that call's id."""
    if isinstance(value, str):

        def one(m: re.Match[str]) -> str:
            calls = ids.get(m.group(1), [])
            n = int(m.group(2)) if m.group(2) else len(calls)
            return calls[n - 1] if 0 < n <= len(calls) else f"(no call {m.group(0)[1:-1]})"

        return _CALL_REF.sub(one, value)
    if isinstance(value, dict):
        return {k: _cite(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_cite(v, ids) for v in value]
    return value


_CONTEXT_TAGS = (PINS_TAG, SUMMARY_TAG)


@dataclass(frozen=True)
class _Request:
    """Who is asking, worked out once per request: the role (``None``: the orchestrator or a
    plain run), which invocation of it, and a tag that keeps its call ids apart."""

    role: str | None
    invocation: int = 0
    tag: str = ""


class ScriptedModel(FunctionModel):
    """Plays a :class:`Script` deterministically.

    With ``record`` it keeps what each agent was sent, for tests that check what a model sees:
    ``requests`` (every request in full: messages as JSON, then the instructions and tools) and
    ``offered`` (the tools each role was offered, by role; ``None`` for a plain run)."""

    def __init__(self, script: Script | None = None, *, record: bool = False) -> None:
        self.script = script or load_script()
        self.record = record
        self.requests: list[str] = []
        self.offered: dict[str | None, set[str]] = {}
        self._count: dict[str, int] = {}  # role -> invocations so far
        self._latest: dict[tuple[str, str], int] = {}  # (role, first prompt) -> its latest invocation
        self._issued: dict[str, list[str]] = {}  # "ROLE/TOOL" -> ids of the calls made, in order
        super().__init__(self._respond, stream_function=self._stream, model_name="scripted")

    def _request(self, messages: list[ModelMessage], info: AgentInfo) -> _Request:
        role = role_of(info.instructions)
        if self.record:
            self.requests.append(ModelMessagesTypeAdapter.dump_json(messages).decode() + repr(info))
            self.offered.setdefault(role, set()).update(t.name for t in info.function_tools)
        if role is None or (role == ORCHESTRATOR and ORCHESTRATOR not in self.script.agents):
            return _Request(None)
        prompts = _prompts(messages)
        key = (role, prompts[0] if prompts else "")
        if not any(isinstance(m, ModelResponse) for m in messages):
            # A conversation with no answer yet is a new invocation (the same prompt asked again too).
            self._latest[key] = self._count.get(role, 0)
            self._count[role] = self._latest[key] + 1
        index = self._latest.get(key, 0)
        return _Request(role, index, hashlib.sha1(f"{key[1]}#{index}".encode()).hexdigest()[:6])

    def _next_turn(self, messages: list[ModelMessage], req: _Request) -> Turn | None:
        if req.role is not None:
            turns = self.script.agents.get(req.role, AgentScript()).turns_for_run(req.invocation)
            step = sum(1 for m in messages if isinstance(m, ModelResponse))
            return turns[step] if step < len(turns) else None
        run_index = max(len(_prompts(messages)) - 1, 0)
        current = _current_run(messages)
        step = sum(1 for m in current if isinstance(m, ModelResponse))
        turns = self.script.turns_for_run(run_index)
        return turns[step] if step < len(turns) else None

    def _calls_of(
        self, turn: Turn | None, messages: list[ModelMessage], info: AgentInfo, req: _Request
    ) -> list[ToolCallPart]:
        """The tool calls a turn makes: its ``tool_calls``, its ``output`` as a call of the output
        tool, or an empty output when the script ran out and the agent accepts no text."""
        ids = {**self._issued, **_call_ids(messages)}
        output = turn.output if turn is not None else None
        if output is None and turn is None and not info.allow_text_output:
            output = {}
        calls = [
            (c.tool, _cite(self._args(c.args, messages), ids)) for c in (turn.tool_calls if turn else [])
        ]
        if output is not None and info.output_tools:
            calls.append((info.output_tools[0].name, _cite(output, ids)))
        parts = [
            ToolCallPart(name, args, tool_call_id=self._call_id(messages, i, req))
            for i, (name, args) in enumerate(calls)
        ]
        for part in parts:
            key = f"{req.role or ORCHESTRATOR}/{part.tool_name}"
            if part.tool_call_id not in self._issued.get(key, []):  # a streamed request asks twice
                self._issued.setdefault(key, []).append(part.tool_call_id)
        return parts

    def _render(self, text: str, messages: list[ModelMessage]) -> str:
        prompts = _prompts(messages)
        returns = [
            p
            for m in _current_run(messages)
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart)
        ]
        results = "\n".join(f"- {p.tool_name}: {_summarize(p.content)}" for p in returns) or "- (none)"
        values = {
            "prompt": prompts[-1] if prompts else "",
            "previous_prompts": "; ".join(prompts[:-1]) or "(none)",
            "results": results,
            "tool_count": str(len(returns)),
        }
        for key, value in values.items():
            text = text.replace("{" + key + "}", value)
        return text

    def _args(self, args: dict[str, Any], messages: list[ModelMessage]) -> dict[str, Any]:
        prompts = _prompts(messages)
        prompt = prompts[-1] if prompts else ""
        return {k: v.replace("{prompt}", prompt) if isinstance(v, str) else v for k, v in args.items()}

    def _call_id(self, messages: list[ModelMessage], i: int, req: _Request | None = None) -> str:
        if req is None or req.role is None:
            return f"scripted-{len(messages)}-{i}"
        return f"{req.role}-{req.tag}-{len(messages)}-{i}"

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        req = self._request(messages, info)
        turn = self._next_turn(messages, req)
        calls = self._calls_of(turn, messages, info, req)
        if calls:
            return ModelResponse(parts=list(calls))
        if turn is None:
            return ModelResponse(parts=[TextPart(END_TEXT)])
        return ModelResponse(parts=[TextPart(self._render(turn.text or "", messages))])

    async def _stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        req = self._request(messages, info)
        turn = self._next_turn(messages, req)
        calls = self._calls_of(turn, messages, info, req)
        if calls:
            yield {
                i: DeltaToolCall(name=c.tool_name, json_args=json.dumps(c.args), tool_call_id=c.tool_call_id)
                for i, c in enumerate(calls)
            }
            return
        text = END_TEXT if turn is None else self._render(turn.text or "", messages)
        words = text.split(" ")
        for i, word in enumerate(words):
            yield word if i == len(words) - 1 else word + " "
