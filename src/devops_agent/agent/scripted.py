"""A deterministic scripted model shipped with the package, for tests, demos and docs.

A script is YAML or a dict: ``turns`` (the same turns for every run) or ``runs`` (a list of turn
lists, one per user prompt in the session, so a resumed session follows the next run's turns).
A turn is either ``tool_calls: [{tool, args}]`` or ``text: "..."``. A string argument may use
``{prompt}`` (one script then serves many runs, each calling with its own values). Text may use
``{prompt}`` (this run's prompt), ``{previous_prompts}`` (earlier prompts of the session, proving that history
survived a resume), ``{results}`` (one line per tool result of this run) and ``{tool_count}``.
When the script runs out, the model answers with a fixed closing text.

It is a pydantic-ai ``FunctionModel``, so it drives the real agent loop, streaming included; no
network is involved.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field
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

from devops_agent.errors import ConfigError

END_TEXT = "The script has no more turns; nothing further to report."


class ScriptedToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    text: str | None = None


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")
    turns: list[Turn] = Field(default_factory=list)
    runs: list[list[Turn]] = Field(default_factory=list)

    def turns_for_run(self, run_index: int) -> list[Turn]:
        if self.runs:
            return self.runs[run_index] if run_index < len(self.runs) else []
        return self.turns


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
    out: list[str] = []
    for m in messages:
        if isinstance(m, ModelRequest):
            out.extend(
                p.content for p in m.parts if isinstance(p, UserPromptPart) and isinstance(p.content, str)
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


class ScriptedModel(FunctionModel):
    """Plays a :class:`Script` deterministically."""

    def __init__(self, script: Script | None = None) -> None:
        self.script = script or load_script()
        super().__init__(self._respond, stream_function=self._stream, model_name="scripted")

    def _next_turn(self, messages: list[ModelMessage]) -> Turn | None:
        run_index = max(len(_prompts(messages)) - 1, 0)
        current = _current_run(messages)
        step = sum(1 for m in current if isinstance(m, ModelResponse))
        turns = self.script.turns_for_run(run_index)
        return turns[step] if step < len(turns) else None

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

    def _call_id(self, messages: list[ModelMessage], i: int) -> str:
        return f"scripted-{len(messages)}-{i}"

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn = self._next_turn(messages)
        if turn is None:
            return ModelResponse(parts=[TextPart(END_TEXT)])
        if turn.tool_calls:
            return ModelResponse(
                parts=[
                    ToolCallPart(
                        c.tool, self._args(c.args, messages), tool_call_id=self._call_id(messages, i)
                    )
                    for i, c in enumerate(turn.tool_calls)
                ]
            )
        return ModelResponse(parts=[TextPart(self._render(turn.text or "", messages))])

    async def _stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        turn = self._next_turn(messages)
        if turn is not None and turn.tool_calls:
            yield {
                i: DeltaToolCall(
                    name=c.tool,
                    json_args=json.dumps(self._args(c.args, messages)),
                    tool_call_id=self._call_id(messages, i),
                )
                for i, c in enumerate(turn.tool_calls)
            }
            return
        text = END_TEXT if turn is None else self._render(turn.text or "", messages)
        words = text.split(" ")
        for i, word in enumerate(words):
            yield word if i == len(words) - 1 else word + " "
